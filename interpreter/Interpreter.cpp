#include "interpreter/InterpreterImpl.h"

#include <algorithm>
#include <cassert>
#include <cinttypes>
#include <cmath>
#include <fmt/format.h>
#include <thread>

namespace tk {
namespace interp {

//===----------------------------------------------------------------------===//
// Values
//===----------------------------------------------------------------------===//

unsigned elementBytes(Type *t) {
  Type *e = t->elementType();
  if (e->isPointer())
    return 8;
  return dtypeBytes(e->dtype());
}

RtValue makeValue(Type *type) {
  RtValue v;
  v.type = type;
  v.size = type->numElements();
  // Default-initialised bytes: every op writes all of its result.
  v.storage = std::shared_ptr<std::byte[]>(new std::byte[v.size * elementBytes(type)]);
  return v;
}

RtValue retype(const RtValue &v, Type *type) {
  assert(type->numElements() == v.size);
  RtValue r = v;
  r.type = type;
  return r;
}

int64_t readInt(const RtValue &v, int64_t i, bool asSigned) {
  Type *e = v.type->elementType();
  if (e->isPointer())
    return static_cast<int64_t>(v.data<uint64_t>()[i]);
  switch (dtypeBytes(e->dtype())) {
  case 1: {
    uint8_t b = v.data<uint8_t>()[i];
    if (e->dtype() == DType::I1)
      return asSigned ? -int64_t(b & 1) : (b & 1);
    return asSigned ? int64_t(int8_t(b)) : int64_t(b);
  }
  case 2: {
    uint16_t b = v.data<uint16_t>()[i];
    return asSigned ? int64_t(int16_t(b)) : int64_t(b);
  }
  case 4: {
    uint32_t b = v.data<uint32_t>()[i];
    return asSigned ? int64_t(int32_t(b)) : int64_t(b);
  }
  default:
    return static_cast<int64_t>(v.data<uint64_t>()[i]);
  }
}

std::string indexStr(const std::vector<int64_t> &shape, int64_t i) {
  std::vector<int64_t> idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = i % shape[d];
    i /= shape[d];
  }
  return shapeStr(idx);
}

std::string elementStr(const RtValue &v, int64_t i, bool hex) {
  Type *e = v.type->elementType();
  if (e->isPointer())
    return fmt::format("0x{:x}", v.data<uint64_t>()[i]);
  DType d = e->dtype();
  unsigned bytes = dtypeBytes(d);
  if (hex) {
    uint64_t bits = static_cast<uint64_t>(readInt(v, i, false));
    return fmt::format("0x{:0{}x}", bits, bytes * 2);
  }
  if (isInteger(d))
    return isUnsigned(d) ? fmt::format("{}", uint64_t(readInt(v, i, false)))
                         : fmt::format("{}", readInt(v, i, d != DType::I1));
  double x = visitNumeric(d, [&](auto num) -> double {
    using Num = decltype(num);
    return static_cast<double>(Num::load(v.data<typename Num::Storage>()[i]));
  });
  return formatDouble(x);
}

//===----------------------------------------------------------------------===//
// Memory map
//===----------------------------------------------------------------------===//

void MemoryMap::add(HostBuffer *buffer) {
  for (const Region &r : regions_)
    if (r.buffer == buffer)
      return;
  Region r{buffer->address(), buffer->address() + buffer->bytes(), buffer};
  auto at = std::upper_bound(regions_.begin(), regions_.end(), r.begin,
                             [](uint64_t a, const Region &x) { return a < x.begin; });
  regions_.insert(at, r);
}

const MemoryMap::Region *MemoryMap::find(uint64_t addr, uint64_t size) const {
  // The last region starting at or before addr; buffers may overlap (views
  // of one allocation), so earlier ones are tried too.
  auto it = std::upper_bound(regions_.begin(), regions_.end(), addr,
                             [](uint64_t a, const Region &x) { return a < x.begin; });
  while (it != regions_.begin()) {
    --it;
    if (addr >= it->begin && addr + size <= it->end && addr + size >= addr)
      return &*it;
  }
  return nullptr;
}

const MemoryMap::Region *MemoryMap::nearest(uint64_t addr) const {
  const Region *best = nullptr;
  uint64_t bestDist = UINT64_MAX;
  for (const Region &r : regions_) {
    uint64_t dist = addr < r.begin ? r.begin - addr : addr >= r.end ? addr - r.end + 1 : 0;
    if (dist < bestDist) {
      bestDist = dist;
      best = &r;
    }
  }
  return best;
}

//===----------------------------------------------------------------------===//
// The program runner
//===----------------------------------------------------------------------===//

const RtValue &ProgramRunner::get(const Value *v) const {
  const Frame &f = *frames_.back();
  auto it = f.layout->slots.find(v);
  assert(it != f.layout->slots.end() && "value of another function");
  return f.values[it->second];
}

void ProgramRunner::set(const Value *v, RtValue value) {
  Frame &f = *frames_.back();
  auto it = f.layout->slots.find(v);
  assert(it != f.layout->slots.end() && "value of another function");
  f.values[it->second] = std::move(value);
}

bool ProgramRunner::fail(Operation &op, std::string message, std::vector<DiagnosticNote> notes) {
  error_ = {op.loc(), std::move(message), std::move(notes)};
  return false;
}

std::string ProgramRunner::programStr() const {
  return fmt::format("({}, {}, {})", pid_[0], pid_[1], pid_[2]);
}

bool ProgramRunner::runProgram(Function &kernel, const std::vector<RtValue> &args,
                               std::array<int32_t, 3> pid) {
  pid_ = pid;
  frames_.clear();
  error_ = {};
  auto frame = std::make_unique<Frame>();
  frame->layout = &run_.layouts.at(&kernel);
  frame->values.resize(frame->layout->numSlots);
  frames_.push_back(std::move(frame));
  std::vector<RtValue> results;
  return runBlock(kernel.body(), args, results);
}

bool ProgramRunner::callFunction(Operation &callOp, Function &fn, std::vector<RtValue> args,
                                 std::vector<RtValue> &results) {
  if (frames_.size() > run_.options.maxCallDepth)
    return fail(callOp, fmt::format("calls nest deeper than {} (recursion through '@{}'?)",
                                    run_.options.maxCallDepth, fn.name()));
  auto frame = std::make_unique<Frame>();
  frame->layout = &run_.layouts.at(&fn);
  frame->values.resize(frame->layout->numSlots);
  frames_.push_back(std::move(frame));
  bool ok = runBlock(fn.body(), args, results);
  frames_.pop_back();
  return ok;
}

bool ProgramRunner::runBlock(Block &block, const std::vector<RtValue> &args,
                             std::vector<RtValue> &results) {
  assert(args.size() == block.numArguments());
  for (unsigned i = 0; i < block.numArguments(); ++i)
    set(block.argument(i), args[i]);
  for (Operation &op : block) {
    if (op.hasTrait(OpTrait::Terminator)) {
      results.clear();
      for (Value *v : op.operands())
        results.push_back(get(v));
      return true;
    }
    if (!countStep(op) || !execOp(op))
      return false;
  }
  results.clear();
  return true;
}

bool ProgramRunner::countStep(Operation &op) {
  uint64_t n = run_.steps.fetch_add(1, std::memory_order_relaxed) + 1;
  if (run_.stop.load(std::memory_order_relaxed)) {
    error_ = {}; // another program failed; this one just stops
    return false;
  }
  const InterpretOptions &o = run_.options;
  if (o.maxSteps && n > o.maxSteps)
    return fail(op, fmt::format("the run exceeded its budget of {} operations in program {} (a "
                                "loop that never ends?); raise the step budget if the kernel is "
                                "just long",
                                o.maxSteps, programStr()));
  if (run_.hasDeadline && (++pendingSteps_ & 1023) == 0 &&
      std::chrono::steady_clock::now() > run_.deadline)
    return fail(op, fmt::format("the run exceeded its time limit of {} s in program {}",
                                o.timeoutSeconds, programStr()));
  return true;
}

bool ProgramRunner::execOp(Operation &op) {
  switch (op.opcode()) {
  case Opcode::ProgramId:
  case Opcode::NumPrograms:
  case Opcode::MakeRange:
  case Opcode::Splat:
  case Opcode::Broadcast:
  case Opcode::ExpandDims:
  case Opcode::Reshape:
  case Opcode::Trans:
    return execShape(*this, op);
  case Opcode::AddPtr:
  case Opcode::Load:
  case Opcode::Store:
  case Opcode::AtomicRMW:
  case Opcode::AtomicCAS:
    return execMemory(*this, op);
  case Opcode::Reduce:
    return execReduce(*this, op);
  case Opcode::Scan:
    return execScan(*this, op);
  case Opcode::Dot:
    return execDot(*this, op);
  case Opcode::ConvertLayout:
  case Opcode::LocalAlloc:
  case Opcode::LocalLoad:
  case Opcode::LocalStore:
  case Opcode::AsyncCopy:
  case Opcode::AsyncWait:
  case Opcode::RingView:
    return execShared(*this, op);
  case Opcode::Barrier:
    return true; // tk.debug_barrier: a program's threads run as one here
  case Opcode::For:
  case Opcode::While:
  case Opcode::If:
  case Opcode::Call:
  case Opcode::Assert:
  case Opcode::Print:
    return execControlFlow(*this, op);
  case Opcode::Return:
  case Opcode::Yield:
  case Opcode::Condition:
    assert(false && "terminators are handled by runBlock");
    return false;
  default:
    return execElementwise(*this, op);
  }
}

namespace {

void numberBlock(Block &block, FunctionLayout &layout) {
  for (Value *a : block.arguments())
    layout.slots.emplace(a, layout.numSlots++);
  for (Operation &op : block) {
    for (Value *r : op.results())
      layout.slots.emplace(r, layout.numSlots++);
    for (unsigned i = 0; i < op.numRegions(); ++i)
      for (unsigned b = 0; b < op.region(i).numBlocks(); ++b)
        numberBlock(op.region(i).block(b), layout);
  }
}

// Scalar kernel arguments become one-element values of the parameter type,
// converted as a launch would convert a Python number.
bool convertArg(IRContext &ctx, Function &kernel, unsigned i, const InterpArg &arg, RtValue &out,
                DiagnosticEngine &diag) {
  Type *t = kernel.argument(i)->type();
  out = makeValue(t);
  auto bad = [&](std::string why) {
    diag.error(kernel.loc(),
               fmt::format("argument #{} of '@{}' ({}): {}", i, kernel.name(), t->str(), why));
    return false;
  };
  (void)ctx;
  if (t->isTensor())
    return bad("tensor parameters cannot be passed to a kernel");
  if (t->isPointer()) {
    if (arg.kind != InterpArg::Kind::Pointer || !arg.buffer)
      return bad("expects a pointer to a buffer");
    out.data<uint64_t>()[0] = arg.buffer->address() + static_cast<uint64_t>(arg.byteOffset);
    return true;
  }
  DType d = t->dtype();
  if (arg.kind == InterpArg::Kind::Pointer)
    return bad("expects a scalar, got a buffer");
  if (isFloat(d)) {
    double v =
        arg.kind == InterpArg::Kind::Int ? static_cast<double>(arg.intValue) : arg.floatValue;
    visitNumeric(d, [&](auto num) {
      using Num = decltype(num);
      if constexpr (isFloatNum<Num>) {
        if constexpr (std::is_same_v<Num, HalfNum>)
          out.data<uint16_t>()[0] = doubleToHalf(v);
        else if constexpr (std::is_same_v<Num, BF16Num>)
          out.data<uint16_t>()[0] = doubleToBF16(v);
        else
          out.data<typename Num::Storage>()[0] = static_cast<typename Num::Storage>(v);
      }
    });
    return true;
  }
  if (arg.kind != InterpArg::Kind::Int)
    return bad(fmt::format("expects an integer, got {}", formatDouble(arg.floatValue)));
  int64_t v = arg.intValue;
  unsigned bits = dtypeBits(d);
  if (bits < 64) {
    int64_t lo = isSigned(d) ? -(int64_t(1) << (bits - 1)) : 0;
    int64_t hi = isSigned(d) ? (int64_t(1) << (bits - 1)) - 1 : (int64_t(1) << bits) - 1;
    if (v < lo || v > hi)
      return bad(fmt::format("{} does not fit in {}", v, dtypeName(d)));
  } else if (isUnsigned(d) && v < 0) {
    return bad(fmt::format("{} does not fit in {}", v, dtypeName(d)));
  }
  visitBits(dtypeBytes(d), [&](auto bitsTag) {
    using B = decltype(bitsTag);
    out.data<B>()[0] = static_cast<B>(static_cast<uint64_t>(v));
  });
  return true;
}

// One worker's share of a run: the programs it ran and what they printed.
struct WorkerResult {
  bool failed = false;
  int64_t failedProgram = 0;
  ProgramError error;
  std::map<int64_t, std::string> prints; // by linear program index
  std::vector<HostBuffer *> stored;
  uint64_t programs = 0;
};

} // namespace
} // namespace interp

using namespace interp;

bool interpret(Module &module, Function &kernel, const std::vector<InterpArg> &args,
               const InterpretOptions &options, DiagnosticEngine &diag, InterpretStats *stats) {
  IRContext &ctx = module.context();
  if (args.size() != kernel.numArguments()) {
    diag.error(kernel.loc(), fmt::format("'@{}' takes {} argument(s), got {}", kernel.name(),
                                         kernel.numArguments(), args.size()));
    return false;
  }
  for (int axis = 0; axis < 3; ++axis)
    if (options.grid[axis] < 1 || options.grid[axis] > INT32_MAX) {
      diag.error(kernel.loc(), fmt::format("grid dimension {} is {}; it must be 1 to {}", axis,
                                           options.grid[axis], INT32_MAX));
      return false;
    }

  RunState run(module, options);
  std::vector<RtValue> argValues(args.size());
  for (unsigned i = 0; i < args.size(); ++i) {
    if (!convertArg(ctx, kernel, i, args[i], argValues[i], diag))
      return false;
    if (args[i].kind == InterpArg::Kind::Pointer && args[i].buffer)
      run.memory.add(args[i].buffer);
  }
  for (auto &fn : module.functions()) {
    FunctionLayout &layout = run.layouts[fn.get()];
    numberBlock(fn->body(), layout);
  }
  if (options.timeoutSeconds > 0) {
    run.hasDeadline = true;
    run.deadline = std::chrono::steady_clock::now() +
                   std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                       std::chrono::duration<double>(options.timeoutSeconds));
  }

  const auto &g = options.grid;
  int64_t numPrograms = g[0] * g[1] * g[2];
  unsigned numThreads = std::max(1u, options.numThreads);
  numThreads = static_cast<unsigned>(std::min<int64_t>(numThreads, numPrograms));
  run.parallel = numThreads > 1;

  // Programs are handed out in linear order (x fastest); each worker stops
  // at its first error and tells the others to stop.
  std::atomic<int64_t> next{0};
  std::vector<WorkerResult> results(numThreads);
  auto work = [&](WorkerResult &res) {
    ProgramRunner runner(run);
    for (;;) {
      int64_t p = next.fetch_add(1);
      if (p >= numPrograms || run.stop.load())
        break;
      std::array<int32_t, 3> pid = {int32_t(p % g[0]), int32_t((p / g[0]) % g[1]),
                                    int32_t(p / (g[0] * g[1]))};
      bool ok = runner.runProgram(kernel, argValues, pid);
      if (!runner.printOutput().empty()) {
        res.prints[p] = std::move(runner.printOutput());
        runner.printOutput().clear();
      }
      if (!ok) {
        if (!runner.error().message.empty()) {
          res.failed = true;
          res.failedProgram = p;
          res.error = runner.error();
          run.stop.store(true);
        }
        break;
      }
      ++res.programs;
    }
    res.stored = std::move(runner.storedBuffers());
  };
  if (numThreads == 1) {
    work(results[0]);
  } else {
    std::vector<std::thread> threads;
    for (unsigned t = 0; t < numThreads; ++t)
      threads.emplace_back(work, std::ref(results[t]));
    for (std::thread &t : threads)
      t.join();
  }

  // Deterministic reporting: output in program order, and of several
  // failing programs the first one.
  std::map<int64_t, std::string> prints;
  const WorkerResult *firstFailure = nullptr;
  uint64_t programs = 0;
  for (WorkerResult &res : results) {
    prints.merge(res.prints);
    programs += res.programs;
    for (HostBuffer *b : res.stored)
      b->setStoredByKernel(true);
    if (res.failed && (!firstFailure || res.failedProgram < firstFailure->failedProgram))
      firstFailure = &res;
  }
  if (options.printOutput)
    for (auto &[p, text] : prints)
      *options.printOutput += text;
  if (stats) {
    stats->steps = run.steps.load();
    stats->programs = programs;
  }
  if (firstFailure) {
    Diagnostic &d = diag.error(firstFailure->error.loc, firstFailure->error.message);
    d.notes = firstFailure->error.notes;
    return false;
  }
  return true;
}

} // namespace tk

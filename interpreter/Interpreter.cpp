#include "interpreter/InterpreterImpl.h"

#include <algorithm>
#include <cassert>
#include <cinttypes>
#include <cmath>
#include <condition_variable>
#include <fmt/format.h>
#include <mutex>
#include <thread>

namespace tk {

namespace {
constexpr const char *kInlineAsmMessage =
    "the CPU interpreter cannot run tk.inline_asm_elementwise: its assembly is PTX for the GPU; "
    "run the kernel on a GPU (without TK_INTERPRET)";

} // namespace
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

namespace {
// The liveBytes of the run this thread works for (MemoryAccount); null
// outside runs (arguments, tests).
thread_local std::atomic<int64_t> *currentAccount = nullptr;
} // namespace

MemoryAccount::MemoryAccount(RunState &run) : previous_(currentAccount) {
  currentAccount = &run.liveBytes;
}

MemoryAccount::~MemoryAccount() { currentAccount = previous_; }

uint64_t valueBytes(Type *type) {
  int64_t n = type->numElements();
  uint64_t each = elementBytes(type);
  if (n < 0 || uint64_t(n) > uint64_t(INT64_MAX) / each)
    return uint64_t(INT64_MAX);
  return uint64_t(n) * each;
}

RtValue makeValue(Type *type) {
  RtValue v;
  v.type = type;
  v.size = type->numElements();
  const size_t bytes = size_t(v.size) * elementBytes(type);
  // Default-initialised bytes: every op writes all of its result.
  std::byte *data = new std::byte[bytes];
  if (std::atomic<int64_t> *account = currentAccount) {
    account->fetch_add(int64_t(bytes), std::memory_order_relaxed);
    v.storage = std::shared_ptr<std::byte[]>(data, [account, bytes](std::byte *p) {
      account->fetch_sub(int64_t(bytes), std::memory_order_relaxed);
      delete[] p;
    });
  } else {
    v.storage = std::shared_ptr<std::byte[]>(data);
  }
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
  // The clock is read every 1024 operations, for the deadline and the
  // interrupt poll.
  if ((run_.hasDeadline || run_.runnerPolls) && (++pendingSteps_ & 1023) == 0) {
    auto now = std::chrono::steady_clock::now();
    if (run_.hasDeadline && now > run_.deadline)
      return fail(op, fmt::format("the run exceeded its time limit of {} s in program {}",
                                  o.timeoutSeconds, programStr()));
    if (run_.runnerPolls && now >= run_.nextPoll) {
      run_.nextPoll = now + kInterruptPoll;
      if (o.interrupted()) {
        run_.interrupted.store(true);
        return fail(op, fmt::format("the run was interrupted in program {} after {} operations",
                                    programStr(), n));
      }
    }
  }
  return true;
}

namespace {

// "4 GiB", "1.5 MiB", "640 bytes".
std::string bytesStr(uint64_t n) {
  static const char *const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (n < 1024)
    return fmt::format("{} bytes", n);
  double v = double(n);
  int u = -1;
  while (v >= 1024 && u < 5) {
    v /= 1024;
    ++u;
  }
  return fmt::format("{:.3g} {}", v, units[u]);
}

// Ops whose results are views of their operand (no new storage) or the
// values their regions yield.
bool makesNewValues(const Operation &op) {
  switch (op.opcode()) {
  case Opcode::ExpandDims:
  case Opcode::Reshape:
  case Opcode::ConvertLayout:
  case Opcode::For:
  case Opcode::While:
  case Opcode::If:
  case Opcode::Call:
    return false;
  default:
    return op.numResults() > 0;
  }
}

uint64_t liveBytesOf(const RunState &run) {
  return uint64_t(std::max<int64_t>(0, run.liveBytes.load(std::memory_order_relaxed)));
}

} // namespace

bool ProgramRunner::checkMemory(Operation &op) {
  const uint64_t budget = run_.options.maxMemoryBytes;
  if (budget == 0 || !makesNewValues(op))
    return true;
  uint64_t need = 0;
  for (Value *v : op.results())
    need = std::min<uint64_t>(need + valueBytes(v->type()), uint64_t(INT64_MAX));
  const uint64_t live = liveBytesOf(run_);
  if (need <= budget && live <= budget - need)
    return true;
  std::string what = op.numResults() == 1 ? op.result(0)->type()->str()
                                          : fmt::format("{} results", op.numResults());
  return fail(op, fmt::format("'{}' in program {} makes {} ({}) while the run's blocks hold {}: "
                              "over the interpreter's memory budget of {}; use smaller blocks, or "
                              "raise the budget (TK_INTERPRET_MAX_MEMORY in Python, tkc run "
                              "--max-memory) if the host has the memory",
                              op.name(), programStr(), what, bytesStr(need), bytesStr(live),
                              bytesStr(budget)));
}

bool ProgramRunner::execOp(Operation &op) {
  if (!checkMemory(op))
    return false;
  // Below the budget the host may still run out; that is an error at the
  // op, never an abort of the process.
  try {
    return dispatch(op);
  } catch (const std::bad_alloc &) {
    return fail(op, fmt::format("the host ran out of memory for '{}' in program {} ({} of "
                                "blocks held)",
                                op.name(), programStr(), bytesStr(liveBytesOf(run_))));
  }
}

bool ProgramRunner::dispatch(Operation &op) {
  switch (op.opcode()) {
  case Opcode::ProgramId:
  case Opcode::NumPrograms:
  case Opcode::SpecialRegister:
  case Opcode::MakeRange:
  case Opcode::Splat:
  case Opcode::Broadcast:
  case Opcode::ExpandDims:
  case Opcode::Reshape:
  case Opcode::Trans:
  case Opcode::Gather:
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
  case Opcode::MapElementwise:
    return execMapElementwise(*this, op);
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
  case Opcode::TmaLoad: // only a `tma` descriptor (a GPU launch's signature) makes these
  case Opcode::TmaStore:
    return fail(op, "TMA runs only on the GPU; the interpreter loads and stores tensor "
                    "descriptors with pointer arithmetic");
  case Opcode::Barrier:
    return true;          // tk.debug_barrier: a program's threads run as one here
  case Opcode::InlineAsm: // interpret() refuses such kernels before running
    return fail(op, kInlineAsmMessage);
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
        else if constexpr (std::is_same_v<typename Num::Storage, uint8_t>)
          out.data<uint8_t>()[0] = doubleToFp8(v, d);
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
  }
  // A 64-bit argument is its bit pattern: a u64 value above INT64_MAX
  // arrives as the negative int64 with the same bits, as the GPU launcher
  // packs it.
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

  // Inline assembly is GPU code: refused before any program runs, at the
  // op (the call of tk.inline_asm_elementwise).
  for (auto &fn : module.functions()) {
    Operation *asmOp = nullptr;
    fn->walk([&](Operation *op) {
      if (!asmOp && op->is(Opcode::InlineAsm))
        asmOp = op;
    });
    if (asmOp) {
      diag.error(asmOp->loc(), kInlineAsmMessage);
      return false;
    }
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
  // The programs to run: all, or the caller's selection (TK_CHECK's sample).
  const std::vector<int64_t> &chosen = options.programs;
  for (int64_t p : chosen)
    if (p < 0 || p >= numPrograms) {
      diag.error(kernel.loc(), fmt::format("program {} is not in the grid ({}, {}, {}) of {} "
                                           "programs",
                                           p, g[0], g[1], g[2], numPrograms));
      return false;
    }
  const int64_t numToRun = chosen.empty() ? numPrograms : int64_t(chosen.size());
  unsigned numThreads = std::max(1u, options.numThreads);
  numThreads = static_cast<unsigned>(std::min<int64_t>(numThreads, std::max<int64_t>(1, numToRun)));
  run.parallel = numThreads > 1;
  run.runnerPolls = options.interrupted && numThreads == 1;
  run.nextPoll = std::chrono::steady_clock::now() + kInterruptPoll;

  // Programs are handed out in linear order (x fastest); each worker stops
  // at its first error and tells the others to stop.
  std::atomic<int64_t> next{0};
  std::vector<WorkerResult> results(numThreads);
  std::mutex doneMutex;
  std::condition_variable doneSignal;
  unsigned workersDone = 0;
  auto work = [&](WorkerResult &res) {
    MemoryAccount account(run);
    ProgramRunner runner(run);
    for (;;) {
      int64_t k = next.fetch_add(1);
      if (k >= numToRun || run.stop.load())
        break;
      int64_t p = chosen.empty() ? k : chosen[size_t(k)];
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
    std::lock_guard<std::mutex> lock(doneMutex);
    ++workersDone;
    doneSignal.notify_one();
  };
  if (numThreads == 1) {
    work(results[0]);
  } else {
    std::vector<std::thread> threads;
    for (unsigned t = 0; t < numThreads; ++t)
      threads.emplace_back(work, std::ref(results[t]));
    // The calling thread polls for an interruption while the workers run
    // (a Python signal handler runs only on the thread that called).
    std::unique_lock<std::mutex> lock(doneMutex);
    while (workersDone < numThreads) {
      doneSignal.wait_for(lock, kInterruptPoll);
      if (options.interrupted && workersDone < numThreads && !run.interrupted.load()) {
        lock.unlock();
        if (options.interrupted()) {
          run.interrupted.store(true);
          run.stop.store(true);
        }
        lock.lock();
      }
    }
    lock.unlock();
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
    stats->interrupted = run.interrupted.load();
    stats->readOnlyStore = firstFailure && firstFailure->error.readOnlyStore;
  }
  if (run.interrupted.load() && !firstFailure) {
    // Workers stopped by the calling thread report nothing themselves.
    diag.error(kernel.loc(), fmt::format("the run was interrupted after {} of {} programs and {} "
                                         "operations",
                                         programs, numToRun, run.steps.load()));
    return false;
  }
  if (firstFailure) {
    Diagnostic &d = diag.error(firstFailure->error.loc, firstFailure->error.message);
    d.notes = firstFailure->error.notes;
    return false;
  }
  return true;
}

} // namespace tk

// What the interpreter's source files share; not part of tk's API (the API
// is interpreter/Interpreter.h). The interpreter is split by op family:
//
//   Interpreter.cpp              interpret(): arguments, grid, threads; the
//                                program runner (frames, op dispatch, budget)
//   InterpreterElementwise.cpp   constants, arithmetic, comparisons, casts, math
//   InterpreterLibdevice.cpp     extern_elementwise: the libdevice functions
//   InterpreterShape.cpp         make_range, splat, broadcast, expand_dims,
//                                reshape, trans, program_id, num_programs
//   InterpreterMemory.cpp        addptr, load, store, atomics, memory checks
//   InterpreterReduce.cpp        reduce, scan, dot
//   InterpreterControlFlow.cpp   for, while, if, call, assert, print
//
// A runtime value (RtValue) is the IR type plus a flat, row-major array of
// its elements, stored as the GPU stores them: i1 as one byte 0/1, integers
// in their width, fp16/bf16 as 16-bit patterns, pointers as 64-bit host
// addresses. Values are immutable once made, so copies share storage
// (reshape and expand_dims cost nothing).
#pragma once

#include "interpreter/Interpreter.h"
#include "ir/IRContext.h"
#include "lang/Float16.h"

#include <array>
#include <atomic>
#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

namespace tk::interp {

/// Bytes of one element of `t` (looking through tensors): 8 for pointers, 1
/// for i1.
unsigned elementBytes(Type *t);

struct RtValue {
  Type *type = nullptr;
  int64_t size = 0; // elements
  std::shared_ptr<std::byte[]> storage;

  template <typename T> const T *data() const { return reinterpret_cast<const T *>(storage.get()); }
  template <typename T> T *data() { return reinterpret_cast<T *>(storage.get()); }
};

/// A value of `type` with fresh, unset storage. Its bytes count against the
/// run the calling thread works for (MemoryAccount) until it is freed.
RtValue makeValue(Type *type);
/// Bytes of a value of `type` (saturating at INT64_MAX).
uint64_t valueBytes(Type *type);
/// `v`'s elements viewed as `type` (same element count and element type).
RtValue retype(const RtValue &v, Type *type);

//===----------------------------------------------------------------------===//
// Element kinds. An op on numbers is written once as a template over a "Num":
// its Storage type (how elements are kept) and Compute type (what arithmetic
// is done in), with load/store between them. fp16/bf16 compute in float and
// round on store, which is how the GPU treats them.
//===----------------------------------------------------------------------===//

template <typename T> struct PlainNum {
  using Storage = T;
  using Compute = T;
  static Compute load(Storage s) { return s; }
  static Storage store(Compute c) { return c; }
};

/// i1: kept as 0/1; every result is reduced to its low bit.
struct BoolNum {
  using Storage = uint8_t;
  using Compute = uint8_t;
  static Compute load(Storage s) { return s; }
  static Storage store(Compute c) { return c & 1; }
};

struct HalfNum {
  using Storage = uint16_t;
  using Compute = float;
  static Compute load(Storage s) { return halfToFloat(s); }
  static Storage store(Compute c) { return floatToHalf(c); }
};

struct BF16Num {
  using Storage = uint16_t;
  using Compute = float;
  static Compute load(Storage s) { return bf16ToFloat(s); }
  static Storage store(Compute c) { return floatToBF16(c); }
};

/// fp8: kept as the 8-bit pattern, widened exactly to float (lang/Float16.h).
/// Only casts, loads and stores see it: the verifier allows no arithmetic.
template <DType Format> struct Fp8Num {
  using Storage = uint8_t;
  using Compute = float;
  static Compute load(Storage s) { return fp8ToFloat(s, Format); }
  static Storage store(Compute c) { return doubleToFp8(c, Format); }
};

template <typename Num> constexpr bool isFloatNum = std::is_floating_point_v<typename Num::Compute>;

/// Calls f(Num{}) with the Num of dtype `d`.
template <typename F> decltype(auto) visitNumeric(DType d, F &&f) {
  switch (d) {
  case DType::I1:
    return f(BoolNum{});
  case DType::I8:
    return f(PlainNum<int8_t>{});
  case DType::I16:
    return f(PlainNum<int16_t>{});
  case DType::I32:
    return f(PlainNum<int32_t>{});
  case DType::I64:
    return f(PlainNum<int64_t>{});
  case DType::U8:
    return f(PlainNum<uint8_t>{});
  case DType::U16:
    return f(PlainNum<uint16_t>{});
  case DType::U32:
    return f(PlainNum<uint32_t>{});
  case DType::U64:
    return f(PlainNum<uint64_t>{});
  case DType::F16:
    return f(HalfNum{});
  case DType::BF16:
    return f(BF16Num{});
  case DType::F32:
    return f(PlainNum<float>{});
  case DType::F8E4NV:
    return f(Fp8Num<DType::F8E4NV>{});
  case DType::F8E5:
    return f(Fp8Num<DType::F8E5>{});
  case DType::F8E4B15:
    return f(Fp8Num<DType::F8E4B15>{});
  case DType::F64:
    break;
  }
  return f(PlainNum<double>{});
}

/// Unsigned integer of `bytes` bytes, for moving elements whatever they are.
template <unsigned Bytes>
using Bits = std::conditional_t<
    Bytes == 1, uint8_t,
    std::conditional_t<Bytes == 2, uint16_t, std::conditional_t<Bytes == 4, uint32_t, uint64_t>>>;

/// Calls f(Bits<n>{}) for an element size of n bytes (1, 2, 4 or 8).
template <typename F> decltype(auto) visitBits(unsigned bytes, F &&f) {
  switch (bytes) {
  case 1:
    return f(uint8_t{});
  case 2:
    return f(uint16_t{});
  case 4:
    return f(uint32_t{});
  default:
    return f(uint64_t{});
  }
}

/// Element `i` of an integer value, sign- or zero-extended to 64 bits as its
/// dtype says (`asSigned` overrides: signed predicates on unsigned types).
int64_t readInt(const RtValue &v, int64_t i, bool asSigned);

//===----------------------------------------------------------------------===//
// Run state
//===----------------------------------------------------------------------===//

/// The buffers a run may touch, sorted by address.
class MemoryMap {
public:
  struct Region {
    uint64_t begin;
    uint64_t end;
    HostBuffer *buffer;
  };
  void add(HostBuffer *buffer);
  /// The region holding all of [addr, addr + size), or null.
  const Region *find(uint64_t addr, uint64_t size) const;
  /// The region closest to `addr`, for diagnostics; null when there is none.
  const Region *nearest(uint64_t addr) const;
  const std::vector<Region> &regions() const { return regions_; }

private:
  std::vector<Region> regions_;
};

/// Value numbering of one function: every argument, op result and block
/// argument, nested regions included, has a slot in the function's frame.
struct FunctionLayout {
  std::unordered_map<const Value *, unsigned> slots; // looked up, never iterated
  unsigned numSlots = 0;
};

/// An error found while a program ran, turned into a Diagnostic by
/// interpret() (DiagnosticEngine is not shared between threads).
struct ProgramError {
  SourceLoc loc;
  std::string message;
  std::vector<DiagnosticNote> notes;
  bool readOnlyStore = false; // a store into a read-only buffer
};

/// What all programs of one run share. Everything but the counters, the
/// stop flag and the atomics lock is read-only while programs run.
struct RunState {
  RunState(Module &m, const InterpretOptions &o) : module(m), options(o) {}
  Module &module;
  const InterpretOptions &options;
  MemoryMap memory;
  std::map<const Function *, FunctionLayout> layouts;
  std::atomic<uint64_t> steps{0};
  /// Bytes held by the values made for this run (makeValue), over all its
  /// programs and threads; ops check it against options.maxMemoryBytes.
  std::atomic<int64_t> liveBytes{0};
  std::atomic<bool> stop{false};
  /// Atomics of parallel programs take this lock, so each element's
  /// read-modify-write is indivisible as on the GPU; so do appends to
  /// options.storeLog.
  std::mutex atomicMutex;
  bool parallel = false;
  bool hasDeadline = false;
  std::chrono::steady_clock::time_point deadline;
  /// With one thread the runner polls options.interrupted itself (it runs on
  /// the calling thread); with workers the calling thread polls while it
  /// waits for them.
  bool runnerPolls = false;
  std::chrono::steady_clock::time_point nextPoll;
  std::atomic<bool> interrupted{false};
};

/// How often options.interrupted is polled.
constexpr std::chrono::milliseconds kInterruptPoll{10};

/// While alive, values made on this thread count against `run`'s
/// liveBytes (and are taken off when freed, on whatever thread). Each worker
/// of a run holds one.
class MemoryAccount {
public:
  explicit MemoryAccount(RunState &run);
  ~MemoryAccount();
  MemoryAccount(const MemoryAccount &) = delete;
  MemoryAccount &operator=(const MemoryAccount &) = delete;

private:
  std::atomic<int64_t> *previous_;
};

class ProgramRunner {
public:
  explicit ProgramRunner(RunState &run) : run_(run) {}

  /// Runs the kernel as program `pid`; false after an error (see error()).
  bool runProgram(Function &kernel, const std::vector<RtValue> &args, std::array<int32_t, 3> pid);
  const ProgramError &error() const { return error_; }
  std::string &printOutput() { return print_; }
  /// Buffers this runner stored to (merged into HostBuffer flags by interpret).
  std::vector<HostBuffer *> &storedBuffers() { return stored_; }

  // --- for the op families
  RunState &run() { return run_; }
  IRContext &context() { return run_.module.context(); }
  const RtValue &operand(Operation &op, unsigned i) const { return get(op.operand(i)); }
  const RtValue &get(const Value *v) const;
  void set(const Value *v, RtValue value);
  void setResult(Operation &op, unsigned i, RtValue v) { set(op.result(i), std::move(v)); }
  /// Records an error at `op` and returns false, so callers write
  /// `return r.fail(op, ...)`.
  bool fail(Operation &op, std::string message, std::vector<DiagnosticNote> notes = {});
  /// After fail(): the error is a store into a read-only buffer.
  void markReadOnlyStore() { error_.readOnlyStore = true; }
  std::array<int32_t, 3> programId() const { return pid_; }
  /// "(3, 0, 0)"
  std::string programStr() const;

  /// Runs the ops of `block` (its arguments set to `args`) up to its
  /// terminator, whose operand values land in `results`.
  bool runBlock(Block &block, const std::vector<RtValue> &args, std::vector<RtValue> &results);
  /// Calls `fn` with `args` in a new frame.
  bool callFunction(Operation &callOp, Function &fn, std::vector<RtValue> args,
                    std::vector<RtValue> &results);

private:
  struct Frame {
    const FunctionLayout *layout;
    std::vector<RtValue> values;
  };

  bool execOp(Operation &op);
  bool dispatch(Operation &op);
  bool countStep(Operation &op);
  /// The memory budget, before an op that makes new values.
  bool checkMemory(Operation &op);

  RunState &run_;
  std::array<int32_t, 3> pid_ = {0, 0, 0};
  std::vector<std::unique_ptr<Frame>> frames_;
  ProgramError error_;
  std::string print_;
  std::vector<HostBuffer *> stored_;
  uint64_t pendingSteps_ = 0;
};

// The op families; each returns false after ProgramRunner::fail.
bool execElementwise(ProgramRunner &r, Operation &op);
/// extern_elementwise, the libdevice functions: InterpreterLibdevice.cpp.
bool execExternElementwise(ProgramRunner &r, Operation &op);
/// The symbols of lang/Libdevice.def the interpreter lacks or has with other
/// dtypes, and those it has that the table does not list (empty: in sync).
std::vector<std::string> libdeviceTableMismatches();
bool execShape(ProgramRunner &r, Operation &op);
bool execMemory(ProgramRunner &r, Operation &op);
bool execReduce(ProgramRunner &r, Operation &op);
bool execScan(ProgramRunner &r, Operation &op);
bool execMapElementwise(ProgramRunner &r, Operation &op);
bool execDot(ProgramRunner &r, Operation &op);
bool execControlFlow(ProgramRunner &r, Operation &op);
/// The GPU-only ops of IR after the layout and shared-memory passes
/// (convert_layout, local_alloc/load/store, async_copy/wait, ring_view):
/// InterpreterShared.cpp.
bool execShared(ProgramRunner &r, Operation &op);

/// A load's element reads, for any op that reads global memory: `n`
/// elements of `size` bytes through the pointers of `ptrs` into `dst`, with
/// the bounds, alignment and initialisation checks of `load` (errors at
/// `op`); lanes masked off by `mask` (null: none) take `other` (null: 0).
bool loadElements(ProgramRunner &r, Operation &op, const RtValue &ptrs, const uint8_t *mask,
                  const std::byte *other, std::byte *dst, int64_t n, unsigned size);

/// "[0, 17]": the multi-dimensional index of flat element `i` of `shape`.
std::string indexStr(const std::vector<int64_t> &shape, int64_t i);
/// A scalar RtValue's element as text, for print and assert messages.
std::string elementStr(const RtValue &v, int64_t i, bool hex);

} // namespace tk::interp

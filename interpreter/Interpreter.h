// The CPU interpreter of the block IR: runs a kernel over a grid of programs
// on the host, with memory checks a GPU cannot give. It is how kernels run on
// machines without a GPU (tests, CI, `tkc run`, TK_INTERPRET=1) and the
// reference the GPU backend is tested against.
//
// A value is a whole block (a flat array in row-major order plus the shape
// of its type); an elementwise op is one loop over the array, a reduction one
// pass over its axis. fp16 and bf16 are kept as 16-bit patterns; arithmetic on
// them is done in fp32 and rounded to nearest even, as the GPU does. The exact
// rules (integer division, shifts, NaN handling, reduction order, dot
// accumulation) are in docs/interpreter.md.
//
//   // add_kernel(x, y, out, n) with a 1024-element block, on 4 programs
//   HostBuffer x = HostBuffer::allocate("x", DType::F32, n), ...;
//   std::vector<InterpArg> args = {InterpArg::pointer(x), InterpArg::pointer(y),
//                                   InterpArg::pointer(out), InterpArg::integer(n)};
//   InterpretOptions opts;
//   opts.grid = {4, 1, 1};
//   if (!interpret(*module, *module->lookup("add_kernel"), args, opts, diag))
//     ... diag holds the error, e.g.
//     k.tk:12:9: error: out-of-bounds load in program (3, 0, 0): element 17 of the
//     block (index [17]) reads 4 bytes at 0x55d0c2a1f044; nearest buffer 'x'
//     (0x55d0c2a1f000, 64 bytes): 4 bytes past its end
//
// Memory: the buffers passed as pointer arguments are the only memory the
// kernel may touch. A load, store or atomic of an element that is not masked
// off and not wholly inside one of them stops the run with an error at the
// op's source line; so does reading bytes of a tk-allocated buffer that
// nothing has written yet (HostBuffer::allocate).
//
// Budgets: a run stops with an error after `maxSteps` operations, after
// `timeoutSeconds`, or before an op whose results would take the memory its
// values hold past `maxMemoryBytes` (default 1 GiB: a 2^30-element block
// is refused at the op that makes it, naming the op, its type and the
// budget, instead of exhausting the host).
//
// Runs stop (with an error) at the first failing program; by default programs
// run one after another on the calling thread, x fastest, then y, then z, so
// a run is deterministic. With numThreads > 1 independent programs run in
// parallel; output of `print` is still gathered in program order.
#pragma once

#include "interpreter/HostBuffer.h"
#include "ir/Module.h"
#include "lang/Diagnostics.h"

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace tk {

/// One kernel argument: a pointer into a HostBuffer, or a scalar.
struct InterpArg {
  enum class Kind : uint8_t { Pointer, Int, Float };
  Kind kind = Kind::Int;
  HostBuffer *buffer = nullptr;
  int64_t byteOffset = 0; // pointers: where in the buffer the argument points
  int64_t intValue = 0;
  double floatValue = 0;

  static InterpArg pointer(HostBuffer &buffer, int64_t byteOffset = 0) {
    InterpArg a;
    a.kind = Kind::Pointer;
    a.buffer = &buffer;
    a.byteOffset = byteOffset;
    return a;
  }
  static InterpArg integer(int64_t v) {
    InterpArg a;
    a.kind = Kind::Int;
    a.intValue = v;
    return a;
  }
  static InterpArg real(double v) {
    InterpArg a;
    a.kind = Kind::Float;
    a.floatValue = v;
    return a;
  }
};

/// Elements a run's stores and atomics wrote, when InterpretOptions::
/// storeLog asks for them: `count` consecutive elements of `elementBytes`
/// each, of `dtype`, at byte `offset` of `buffer`, by the op at `loc` in
/// `program`.
/// TK_CHECK (docs/python.md) compares exactly these elements with a GPU's.
struct StoreRecord {
  const HostBuffer *buffer = nullptr;
  uint64_t offset = 0;
  DType dtype = DType::U8; // of the stored value (pointers: U64)
  uint32_t elementBytes = 0;
  int64_t count = 0;
  bool atomic = false;
  SourceLoc loc;
  std::array<int32_t, 3> program = {0, 0, 0};
};

struct InterpretOptions {
  /// Programs along x, y, z; each at least 1.
  std::array<int64_t, 3> grid = {1, 1, 1};
  /// Worker threads; 1 runs the programs in order on the calling thread.
  unsigned numThreads = 1;
  /// Operations executed, over all programs, before the run is stopped with
  /// an error (a runaway `while`); 0 means no limit.
  uint64_t maxSteps = 100'000'000;
  /// Bytes the run's blocks (the values ops make, not the argument buffers)
  /// may hold at once, over all programs and threads; an op whose results
  /// would take the run past it stops the run with an error before it
  /// allocates. 0 means no limit. (One 1024x1024 fp32 block is 4 MiB.)
  uint64_t maxMemoryBytes = uint64_t(1) << 30;
  /// Wall-clock limit in seconds; 0 means none.
  double timeoutSeconds = 0;
  /// Polled on the calling thread about every 10 ms while programs run (between
  /// ops); returning true stops the run with an "interrupted" error. It is
  /// how Ctrl-C reaches a run: tkc run's SIGINT handler sets a flag it reads,
  /// Python's checks for signals with the GIL. Empty: never polled.
  std::function<bool()> interrupted;
  /// Where `print` ops write their lines; null discards them.
  std::string *printOutput = nullptr;
  /// When set, every element a store or atomic writes is appended here, in
  /// the order written (programs on several threads interleave).
  std::vector<StoreRecord> *storeLog = nullptr;
  /// Run only these programs (linear indices, x fastest; each below the
  /// grid's size), in this order; empty: every program of the grid.
  /// `num_programs` still answers the whole grid.
  std::vector<int64_t> programs;
  /// Calls of non-inlined helpers nest at most this deep.
  unsigned maxCallDepth = 64;
};

struct InterpretStats {
  uint64_t steps = 0;         // operations executed
  uint64_t programs = 0;      // programs completed
  bool interrupted = false;   // stopped because `interrupted` said so
  bool readOnlyStore = false; // stopped at a store into a read-only buffer
};

/// Runs `kernel` (a function of `module`, which also holds the helpers it
/// calls) over `options.grid` with `args`, one per kernel argument. Returns
/// false after reporting an error to `diag`: a bad argument list, a memory
/// error, a failed assert, the step or memory budget, the timeout or an
/// interruption. The IR must have
/// passed the verifier.
bool interpret(Module &module, Function &kernel, const std::vector<InterpArg> &args,
               const InterpretOptions &options, DiagnosticEngine &diag,
               InterpretStats *stats = nullptr);

} // namespace tk

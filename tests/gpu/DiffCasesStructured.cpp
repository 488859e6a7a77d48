// The differential test's structured cases: the ops that are not one
// expression over 1-D blocks — masked loads with `other`, broadcasting, 2-D
// reductions along either axis, scans, atomics under contention, trans and
// reshape, dot, run-time control flow and multi-dimensional grids. Each is a
// source template with its own random sizes (ragged on every masked axis)
// and, where it is simple, a host reference for the Ci mode.
//
// Exactness: reductions, scans, dots and float atomics combine values in an
// order the GPU chooses, so their float inputs are small whole numbers
// (smallWhole) whose sums and products are exact; the comparisons are then
// exact too. One fp32 row-sum case uses arbitrary reals with a tolerance.
#include "DiffGen.h"

#include <cassert>
#include <limits>

namespace tk::difftest {
namespace {

const char *kHeader = "import tk\n\n\n@tk.jit\n";

std::string lit(int64_t v) {
  // The smallest i64 is not a literal: its magnitude needs u64.
  if (v == std::numeric_limits<int64_t>::min())
    return "(-9223372036854775807 - 1)";
  return std::to_string(v);
}

/// The neutral `other` of a reduction over dtype `d`, as source text.
std::string neutral(const std::string &kind, DType d) {
  bool isMax = kind == "max" || kind == "argmax";
  bool isMin = kind == "min" || kind == "argmin";
  if (!isMax && !isMin)
    return kind == "cumprod" ? "1" : "0";
  if (isFloat(d))
    return isMax ? "-float('inf')" : "float('inf')";
  int64_t b = bits(d);
  // u64: 2^64 - 1 is not accepted as a literal (the front end reads
  // literals as i64), so u64 min/argmin inputs stay below 2^63 (minInput).
  if (isUnsigned(d))
    return isMax ? "0"
                 : (b == 64 ? lit(std::numeric_limits<int64_t>::max())
                            : std::to_string((uint64_t(1) << b) - 1));
  if (isMax)
    return lit(b == 64 ? std::numeric_limits<int64_t>::min() : -(int64_t(1) << (b - 1)));
  return lit(b == 64 ? std::numeric_limits<int64_t>::max() : (int64_t(1) << (b - 1)) - 1);
}

void argsAllBuffers(CaseRun &run) {
  for (size_t i = 0; i < run.buffers.size(); ++i)
    run.args.push_back(CaseArg::buf(i));
}

//===----------------------------------------------------------------------===//
// 2-D tiles: reductions and scans along `axis`
//===----------------------------------------------------------------------===//

/// A tile [BM, BN] over an M x N matrix: programs step along the kept axis;
/// the reduced axis fits one tile and is ragged (M <= BM or N <= BN).
struct Tile {
  int64_t bm = 0, bn = 0, m = 0, n = 0;
  unsigned programs = 1;
};

Tile pickTile(Rng &rng, CaseRun &run, int axis, int64_t maxReduced) {
  Tile t;
  int64_t reduced = std::min<int64_t>(pow2(rng, 1, 7), maxReduced);
  int64_t kept = pow2(rng, 0, 5);
  t.programs = unsigned(uniformInt(rng, 1, 3));
  int64_t extent = uniformInt(rng, 1, reduced); // ragged unless it happens to fill
  int64_t keptN = (t.programs - 1) * kept + uniformInt(rng, 1, kept);
  if (axis == 1) {
    t.bm = kept, t.bn = reduced, t.m = keptN, t.n = extent;
  } else {
    t.bm = reduced, t.bn = kept, t.m = extent, t.n = keptN;
  }
  run.opts.numWarps = int(pow2(rng, 0, 3));
  run.opts.constants["BM"] = ConstValue::ofInt(t.bm);
  run.opts.constants["BN"] = ConstValue::ofInt(t.bn);
  run.grid = {t.programs, 1, 1};
  run.opts.kernel = "k";
  run.shapeNote = fmt::format("BM={} BN={} M={} N={} grid={} num_warps={}", t.bm, t.bn, t.m, t.n,
                              t.programs, run.opts.numWarps);
  return t;
}

std::string tileLoad(int axis, const std::string &other) {
  std::string s = axis == 1 ? "    rows = tk.program_id(0) * BM + tk.arange(0, BM)\n"
                              "    cols = tk.arange(0, BN)\n"
                            : "    rows = tk.arange(0, BM)\n"
                              "    cols = tk.program_id(0) * BN + tk.arange(0, BN)\n";
  return s +
         "    mask = (rows[:, None] < M) & (cols[None, :] < N)\n"
         "    x = tk.load(x_ptr + rows[:, None] * N + cols[None, :], mask=mask, other=" +
         other + ")\n";
}

/// Reduction of the valid elements of line `line` (a row for axis 1, a
/// column for axis 0) of the M x N input.
Elem reduceRef(const std::string &kind, DType d, const CaseBuffer &x, const Tile &t, int axis,
               int64_t line) {
  int64_t len = axis == 1 ? t.n : t.m;
  auto get = [&](int64_t k) { return at(x, axis == 1 ? line * t.n + k : k * t.n + line); };
  Elem acc = get(0);
  int64_t best = 0;
  for (int64_t k = 1; k < len; ++k) {
    Elem v = get(k);
    if (kind == "sum")
      acc = isFloat(d) ? real(acc.f + v.f) : wrapped(u(acc) + u(v));
    else if (kind == "xor_sum")
      acc = wrapped(u(acc) ^ u(v));
    else if ((kind == "max" || kind == "argmax") ? less(d, acc, v) : less(d, v, acc)) {
      acc = v;
      best = k;
    }
  }
  return kind == "argmax" || kind == "argmin" ? Elem::ofInt(best) : acc;
}

CaseRun buildReduce(Rng &rng, const std::string &kind, DType d, int axis, bool reals) {
  CaseRun run;
  Tile t = pickTile(rng, run, axis, d == DType::BF16 ? 64 : 128);
  Gen g = reals                         ? realIn(d, 0.5, 2)
          : kind == "sum" && isFloat(d) ? smallWhole(d, d == DType::BF16 ? 2 : 8)
          : d == DType::U64 && (kind == "min" || kind == "argmin")
              ? Gen([](Rng &r) { return wrapped((anyInt(DType::U64)(r).i & INT64_MAX) | 1); })
              : anyValue(d);
  bool arg = kind == "argmax" || kind == "argmin";
  DType outT = arg ? DType::I32 : d;
  int64_t outN = axis == 1 ? t.m : t.n;
  Tol tol = reals ? Tol{double(2 * (axis == 1 ? t.n : t.m)), 0} : Tol{};
  run.buffers.push_back(inputBuffer("x", d, t.m * t.n, g, rng));
  run.buffers.push_back(outputBuffer("out", outT, outN, tol));
  std::string call = kind == "xor_sum" ? "tk.xor_sum(x, axis=" : "tk." + kind + "(x, axis=";
  std::string keep = axis == 1 ? "rows" : "cols";
  std::string bound = axis == 1 ? "M" : "N";
  run.source = std::string(kHeader) +
               "def k(x_ptr, out_ptr, M, N, BM: tk.constexpr, BN: tk.constexpr):\n" +
               tileLoad(axis, neutral(kind, d)) + "    r = " + call + std::to_string(axis) +
               ")\n    tk.store(out_ptr + " + keep + ", r, mask=" + keep + " < " + bound + ")\n";
  run.opts.signature = "*" + ir(d) + ", *" + ir(outT) + ", i32, i32";
  argsAllBuffers(run);
  run.args.push_back(CaseArg::integer(t.m));
  run.args.push_back(CaseArg::integer(t.n));
  run.reference = [=](const std::vector<CaseBuffer> &bufs) {
    Expected e = unwritten(bufs[1]);
    for (int64_t line = 0; line < outN; ++line)
      expectAt(e, bufs[1], line, reduceRef(kind, d, bufs[0], t, axis, line));
    return std::vector<Expected>{std::move(e)};
  };
  return run;
}

/// Factors of magnitude 1, 2 or 1/2 (floats) or 1..3 (integers): running
/// products stay exact for as long as the exponent range allows.
Gen productFactors(DType d) {
  if (!isFloat(d))
    return smallWhole(d, 3);
  return [d](Rng &rng) {
    static const double f[] = {1, -1, 2, -2, 0.5, -0.5};
    return roundTo(d, real(f[uniformInt(rng, 0, 5)]));
  };
}

CaseRun buildScan(Rng &rng, const std::string &kind, DType d, int axis, bool reverse) {
  CaseRun run;
  // fp16 products of 8 factors stay inside its exponent range in any order.
  int64_t maxLen = kind == "cumprod" && d == DType::F16 ? 8 : d == DType::BF16 ? 64 : 128;
  Tile t = pickTile(rng, run, axis, maxLen);
  Gen g = kind == "cumprod" ? productFactors(d)
          : isFloat(d)      ? smallWhole(d, d == DType::BF16 ? 2 : 8)
                            : anyInt(d);
  run.buffers.push_back(inputBuffer("x", d, t.m * t.n, g, rng));
  run.buffers.push_back(outputBuffer("out", d, t.m * t.n));
  run.buffers.back().shape = {t.m, t.n};
  run.source = std::string(kHeader) +
               "def k(x_ptr, out_ptr, M, N, BM: tk.constexpr, BN: tk.constexpr):\n" +
               tileLoad(axis, neutral(kind, d)) + "    r = tk." + kind +
               "(x, axis=" + std::to_string(axis) + (reverse ? ", reverse=True" : "") +
               ")\n    tk.store(out_ptr + rows[:, None] * N + cols[None, :], r, mask=mask)\n";
  run.opts.signature = "*" + ir(d) + ", *" + ir(d) + ", i32, i32";
  argsAllBuffers(run);
  run.args.push_back(CaseArg::integer(t.m));
  run.args.push_back(CaseArg::integer(t.n));
  run.reference = [=](const std::vector<CaseBuffer> &bufs) {
    Expected e = unwritten(bufs[1]);
    int64_t lines = axis == 1 ? t.m : t.n, len = axis == 1 ? t.n : t.m;
    for (int64_t line = 0; line < lines; ++line) {
      Elem acc;
      for (int64_t s = 0; s < len; ++s) {
        int64_t k = reverse ? len - 1 - s : s;
        int64_t idx = axis == 1 ? line * t.n + k : k * t.n + line;
        Elem v = at(bufs[0], idx);
        if (s == 0)
          acc = v;
        else if (kind == "cumsum")
          acc = isFloat(d) ? real(acc.f + v.f) : wrapped(u(acc) + u(v));
        else
          acc = isFloat(d) ? real(acc.f * v.f) : wrapped(u(acc) * u(v));
        acc = roundTo(d, acc);
        expectAt(e, bufs[1], idx, acc);
      }
    }
    return std::vector<Expected>{std::move(e)};
  };
  return run;
}

/// A two-operand associative_scan along `axis`: the running maximum of x
/// and the position it came from (the left pair when its value is greater,
/// else the right one, so a tie takes the later position), the positions a
/// broadcast int64 arange. Its operands come from a load and a range and one
/// result goes to a store, the other nowhere: --coalesce must put them in one
/// layout. Rows are ragged (a mask on them only, so the accesses stay
/// vectors: the case where the load's, the store's and the default layouts
/// differ); scanning forward, the masked tail comes after every valid row.
CaseRun buildScanMaxIndex(Rng &rng, DType d, int axis) {
  CaseRun run;
  Tile t = pickTile(rng, run, axis, 128);
  // Every column is valid: the axis-1 lines are full, the axis-0 programs
  // cover whole column blocks.
  t.n = axis == 1 ? t.bn : int64_t(t.programs) * t.bn;
  run.opts.constants["W"] = ConstValue::ofInt(t.n);
  run.shapeNote += fmt::format(" W={}", t.n);
  Gen g = isFloat(d) ? smallWhole(d, d == DType::BF16 ? 2 : 8) : anyInt(d);
  run.buffers.push_back(inputBuffer("x", d, t.m * t.n, g, rng));
  run.buffers.push_back(outputBuffer("out", DType::I64, t.m * t.n));
  run.buffers.back().shape = {t.m, t.n};
  std::string lines = axis == 1 ? "    rows = tk.program_id(0) * BM + tk.arange(0, BM)\n"
                                  "    cols = tk.arange(0, BN)\n"
                                : "    rows = tk.arange(0, BM)\n"
                                  "    cols = tk.program_id(0) * BN + tk.arange(0, BN)\n";
  std::string along = axis == 1 ? "tk.arange(0, BN)[None, :]" : "tk.arange(0, BM)[:, None]";
  run.source = std::string(kHeader) +
               "def pick_max(v0, i0, v1, i1):\n"
               "    gt = v0 > v1\n"
               "    return tk.where(gt, v0, v1), tk.where(gt, i0, i1)\n\n\n@tk.jit\n"
               "def k(x_ptr, out_ptr, M, BM: tk.constexpr, BN: tk.constexpr, W: tk.constexpr):\n" +
               lines +
               "    mask = tk.broadcast_to(rows[:, None] < M, [BM, BN])\n"
               "    offs = rows[:, None] * W + cols[None, :]\n"
               "    x = tk.load(x_ptr + offs, mask=mask)\n"
               "    pos = tk.broadcast_to(" +
               along + ".to(tk.int64), [BM, BN])\n    _, r = tk.associative_scan((x, pos), axis=" +
               std::to_string(axis) +
               ", combine_fn=pick_max)\n    tk.store(out_ptr + offs, r, mask=mask)\n";
  run.opts.signature = "*" + ir(d) + ":16, *i64:16, i32";
  argsAllBuffers(run);
  run.args.push_back(CaseArg::integer(t.m));
  run.reference = [=](const std::vector<CaseBuffer> &bufs) {
    Expected e = unwritten(bufs[1]);
    int64_t lines = axis == 1 ? t.m : t.n, len = axis == 1 ? t.n : t.m;
    for (int64_t line = 0; line < lines; ++line) {
      Elem best;
      int64_t where = 0;
      for (int64_t k = 0; k < len; ++k) {
        int64_t idx = axis == 1 ? line * t.n + k : k * t.n + line;
        Elem v = at(bufs[0], idx);
        if (k == 0 || !less(d, v, best)) {
          best = v;
          where = k;
        }
        expectAt(e, bufs[1], idx, Elem::ofInt(where));
      }
    }
    return std::vector<Expected>{std::move(e)};
  };
  return run;
}

//===----------------------------------------------------------------------===//
// 1-D cases: loads with `other`, atomics
//===----------------------------------------------------------------------===//

/// The parameters, signature and arguments every 1-D case starts with.
struct OneD {
  Blocks b;
  size_t maskBuf = 0;
};

std::string otherLiteral(DType d) {
  if (d == DType::I1)
    return "1";
  return isFloat(d) ? "-2.5" : isUnsigned(d) ? "7" : "-7";
}

CaseRun buildLoadOther(Rng &rng, DType d) {
  CaseRun run;
  Blocks b = pickBlocks(rng, run);
  b.mask = Blocks::Mask::Random; // `other` matters only where lanes are masked off
  run.buffers.push_back(inputBuffer("x", d, b.n, anyValue(d), rng));
  run.buffers.push_back(maskBuffer(b.n, rng));
  run.buffers.push_back(outputBuffer("out", d, b.n));
  run.source = std::string(kHeader) + "def k(x_ptr, m_ptr, out_ptr, n, BLOCK: tk.constexpr):\n" +
               maskLines(b) + "    x = tk.load(x_ptr + offs, mask=mask, other=" + otherLiteral(d) +
               ")\n    tk.store(out_ptr + offs, x, mask=inb)\n";
  run.opts.kernel = "k";
  run.opts.signature = "*" + ir(d) + ", *i32, *" + ir(d) + ", i32";
  argsAllBuffers(run);
  run.args.push_back(CaseArg::integer(b.n));
  run.reference = [=](const std::vector<CaseBuffer> &bufs) {
    Expected e = unwritten(bufs[2]);
    Elem other = isFloat(d) ? real(-2.5) : Elem::ofInt(d == DType::I1 ? 1 : isUnsigned(d) ? 7 : -7);
    for (int64_t i = 0; i < b.n; ++i)
      expectAt(e, bufs[2], i, at(bufs[1], i).i ? at(bufs[0], i) : other);
    return std::vector<Expected>{std::move(e)};
  };
  return run;
}

/// Contended read-modify-writes: lane i updates slot i % K of a K-element
/// array (K small: many lanes of one warp hit one address).
CaseRun buildAtomicRMW(Rng &rng, const std::string &kind, DType d) {
  CaseRun run;
  Blocks b = pickBlocks(rng, run);
  bool exactSum = kind == "add" && isFloat(d);
  // Float sums must stay exact in any order: few adds per slot for 16-bit.
  int64_t slots = dtypeBits(d) == 16 ? std::max<int64_t>(1, b.n / 8) : uniformInt(rng, 1, 7);
  Gen g = exactSum ? smallWhole(d, d == DType::BF16 ? 2 : 8) : anyValue(d);
  run.buffers.push_back(inputBuffer("x", d, b.n, g, rng));
  run.buffers.push_back(maskBuffer(b.n, rng));
  CaseBuffer acc = inputBuffer("acc", d, slots, g, rng);
  acc.output = true;
  run.buffers.push_back(std::move(acc));
  run.source = std::string(kHeader) + "def k(x_ptr, m_ptr, acc_ptr, n, K, BLOCK: tk.constexpr):\n" +
               maskLines(b) + "    x = tk.load(x_ptr + offs, mask=mask)\n    tk.atomic_" + kind +
               "(acc_ptr + offs % K, x, mask=mask)\n";
  run.opts.kernel = "k";
  run.opts.signature = "*" + ir(d) + ", *i32, *" + ir(d) + ", i32, i32";
  argsAllBuffers(run);
  run.args.push_back(CaseArg::integer(b.n));
  run.args.push_back(CaseArg::integer(slots));
  run.shapeNote += fmt::format(" K={}", slots);
  run.reference = [=](const std::vector<CaseBuffer> &bufs) {
    Expected e = unwritten(bufs[2]);
    std::vector<Elem> v(static_cast<size_t>(slots), Elem{});
    for (int64_t s = 0; s < slots; ++s)
      v[s] = at(bufs[2], s);
    for (int64_t i = 0; i < b.n; ++i) {
      if (!activeLane(b, bufs, 1, i))
        continue;
      Elem x = at(bufs[0], i), &a = v[size_t(i % slots)];
      if (kind == "add")
        a = isFloat(d) ? real(a.f + x.f) : wrapped(u(a) + u(x));
      else if (kind == "max")
        a = less(d, a, x) ? x : a;
      else if (kind == "min")
        a = less(d, x, a) ? x : a;
      else if (kind == "and")
        a = wrapped(u(a) & u(x));
      else if (kind == "or")
        a = wrapped(u(a) | u(x));
      else
        a = wrapped(u(a) ^ u(x));
      a = roundTo(d, a);
    }
    for (int64_t s = 0; s < slots; ++s)
      expectAt(e, bufs[2], s, v[s]);
    return std::vector<Expected>{std::move(e)};
  };
  return run;
}

/// atomic_xchg (masked, one lane per address) and atomic_cas (every lane,
/// comparing equal at a random half): the old values come back exactly.
CaseRun buildAtomicSwap(Rng &rng, bool cas, DType d) {
  CaseRun run;
  Blocks b = pickBlocks(rng, run);
  int64_t n = cas ? int64_t(b.programs) * b.block : b.n; // cas has no mask: every lane is valid
  run.buffers.push_back(inputBuffer("x", d, n, anyValue(d), rng));
  CaseBuffer acc = inputBuffer("acc", d, n, anyValue(d), rng);
  CaseBuffer cmp = inputBuffer("cmp", d, n, anyValue(d), rng);
  for (int64_t i = 0; i < n; ++i)
    if (rng() & 1)
      std::memcpy(cmp.bytes.data() + i * dtypeBytes(d), acc.bytes.data() + i * dtypeBytes(d),
                  dtypeBytes(d));
  acc.output = true;
  run.buffers.push_back(std::move(cmp));
  run.buffers.push_back(maskBuffer(n, rng));
  run.buffers.push_back(std::move(acc));
  run.buffers.push_back(outputBuffer("old", d, n));
  std::string body =
      cas ? "    offs = tk.program_id(0) * BLOCK + tk.arange(0, BLOCK)\n"
            "    c = tk.load(c_ptr + offs)\n    x = tk.load(x_ptr + offs)\n"
            "    old = tk.atomic_cas(acc_ptr + offs, c, x)\n    tk.store(old_ptr + offs, old)\n"
          : maskLines(b) + "    x = tk.load(x_ptr + offs, mask=mask)\n"
                           "    old = tk.atomic_xchg(acc_ptr + offs, x, mask=mask)\n"
                           "    tk.store(old_ptr + offs, old, mask=mask)\n";
  run.source = std::string(kHeader) +
               "def k(x_ptr, c_ptr, m_ptr, acc_ptr, old_ptr, n, BLOCK: tk.constexpr):\n" + body;
  run.opts.kernel = "k";
  std::string p = "*" + ir(d);
  run.opts.signature = p + ", " + p + ", *i32, " + p + ", " + p + ", i32";
  argsAllBuffers(run);
  run.args.push_back(CaseArg::integer(n));
  run.reference = [=](const std::vector<CaseBuffer> &bufs) {
    Expected acc = unwritten(bufs[3]), old = unwritten(bufs[4]);
    for (int64_t i = 0; i < n; ++i) {
      Elem a = at(bufs[3], i);
      bool active = cas || activeLane(b, bufs, 2, i);
      Elem x = at(bufs[0], i);
      bool swap = active && (!cas || std::memcmp(bufs[1].bytes.data() + i * dtypeBytes(d),
                                                 bufs[3].bytes.data() + i * dtypeBytes(d),
                                                 dtypeBytes(d)) == 0);
      expectAt(acc, bufs[3], i, swap ? x : a);
      if (active)
        expectAt(old, bufs[4], i, a);
    }
    return std::vector<Expected>{std::move(acc), std::move(old)};
  };
  return run;
}

//===----------------------------------------------------------------------===//
// 2-D grids: broadcasting, trans, reshape, dot
//===----------------------------------------------------------------------===//

struct Grid2 {
  int64_t bm, bn, m, n;
};

Grid2 pickGrid2(Rng &rng, CaseRun &run, int lo = 0, int hi = 6) {
  Grid2 g;
  g.bm = pow2(rng, lo, hi);
  g.bn = pow2(rng, lo, hi);
  unsigned gm = unsigned(uniformInt(rng, 1, 3)), gn = unsigned(uniformInt(rng, 1, 3));
  g.m = (gm - 1) * g.bm + uniformInt(rng, 1, g.bm);
  g.n = (gn - 1) * g.bn + uniformInt(rng, 1, g.bn);
  run.grid = {gm, gn, 1};
  run.opts.kernel = "k";
  run.opts.numWarps = int(pow2(rng, 0, 3));
  run.opts.constants["BM"] = ConstValue::ofInt(g.bm);
  run.opts.constants["BN"] = ConstValue::ofInt(g.bn);
  run.shapeNote = fmt::format("BM={} BN={} M={} N={} grid=({}, {}) num_warps={}", g.bm, g.bn, g.m,
                              g.n, gm, gn, run.opts.numWarps);
  return g;
}

const char *kRowsCols = "    rows = tk.program_id(0) * BM + tk.arange(0, BM)\n"
                        "    cols = tk.program_id(1) * BN + tk.arange(0, BN)\n"
                        "    mask = (rows[:, None] < M) & (cols[None, :] < N)\n";

CaseRun buildBroadcast(Rng &rng, DType d) {
  CaseRun run;
  Grid2 g = pickGrid2(rng, run);
  run.buffers.push_back(inputBuffer("x", d, g.m, anyValue(d), rng));
  run.buffers.push_back(inputBuffer("y", d, g.n, anyValue(d), rng));
  run.buffers.push_back(outputBuffer("out", d, g.m * g.n));
  run.buffers.back().shape = {g.m, g.n};
  run.source = std::string(kHeader) +
               "def k(x_ptr, y_ptr, out_ptr, M, N, BM: tk.constexpr, BN: tk.constexpr):\n" +
               kRowsCols +
               "    x = tk.load(x_ptr + rows, mask=rows < M)\n"
               "    y = tk.load(y_ptr + cols, mask=cols < N)\n"
               "    r = tk.broadcast_to(tk.expand_dims(x, 1), (BM, BN)) - y[None, :]\n"
               "    tk.store(out_ptr + rows[:, None] * N + cols[None, :], r, mask=mask)\n";
  run.opts.signature = "*" + ir(d) + ", *" + ir(d) + ", *" + ir(d) + ", i32, i32";
  argsAllBuffers(run);
  run.args.push_back(CaseArg::integer(g.m));
  run.args.push_back(CaseArg::integer(g.n));
  run.reference = [=](const std::vector<CaseBuffer> &bufs) {
    Expected e = unwritten(bufs[2]);
    for (int64_t i = 0; i < g.m; ++i)
      for (int64_t j = 0; j < g.n; ++j) {
        Elem x = at(bufs[0], i), y = at(bufs[1], j);
        expectAt(e, bufs[2], i * g.n + j, isFloat(d) ? real(x.f - y.f) : wrapped(u(x) - u(y)));
      }
    return std::vector<Expected>{std::move(e)};
  };
  return run;
}

CaseRun buildTrans(Rng &rng, DType d) {
  CaseRun run;
  Grid2 g = pickGrid2(rng, run);
  run.buffers.push_back(inputBuffer("x", d, g.m * g.n, anyValue(d), rng));
  run.buffers.push_back(outputBuffer("out", d, g.m * g.n));
  run.buffers.back().shape = {g.n, g.m};
  run.source = std::string(kHeader) +
               "def k(x_ptr, out_ptr, M, N, BM: tk.constexpr, BN: tk.constexpr):\n" + kRowsCols +
               "    x = tk.load(x_ptr + rows[:, None] * N + cols[None, :], mask=mask)\n"
               "    t = tk.trans(x)\n"
               "    tk.store(out_ptr + cols[:, None] * M + rows[None, :], t,\n"
               "             mask=(cols[:, None] < N) & (rows[None, :] < M))\n";
  run.opts.signature = "*" + ir(d) + ", *" + ir(d) + ", i32, i32";
  argsAllBuffers(run);
  run.args.push_back(CaseArg::integer(g.m));
  run.args.push_back(CaseArg::integer(g.n));
  run.reference = [=](const std::vector<CaseBuffer> &bufs) {
    Expected e = unwritten(bufs[1]);
    for (int64_t i = 0; i < g.m; ++i)
      for (int64_t j = 0; j < g.n; ++j)
        expectAt(e, bufs[1], j * g.m + i, at(bufs[0], i * g.n + j));
    return std::vector<Expected>{std::move(e)};
  };
  return run;
}

/// A [BM, BN] tile of an M x BN matrix flattened to BM * BN elements, row
/// major, or column major after a trans.
CaseRun buildReshape(Rng &rng, DType d, bool transposed) {
  CaseRun run;
  Grid2 g = pickGrid2(rng, run, 1, 5);
  g.n = g.bn; // full rows
  run.grid[1] = 1;
  run.buffers.push_back(inputBuffer("x", d, g.m * g.n, anyValue(d), rng));
  run.buffers.push_back(outputBuffer("out", d, int64_t(run.grid[0]) * g.bm * g.bn));
  std::string tile = transposed ? "tk.trans(x)" : "x";
  std::string mtile = transposed ? "tk.trans(mask)" : "mask";
  run.source = std::string(kHeader) +
               "def k(x_ptr, out_ptr, M, BM: tk.constexpr, BN: tk.constexpr):\n"
               "    rows = tk.program_id(0) * BM + tk.arange(0, BM)\n"
               "    cols = tk.arange(0, BN)\n"
               "    mask = (rows[:, None] < M) & (cols[None, :] < BN)\n"
               "    x = tk.load(x_ptr + rows[:, None] * BN + cols[None, :], mask=mask)\n"
               "    f = tk.reshape(" +
               tile +
               ", (BM * BN,))\n"
               "    fm = tk.reshape(" +
               mtile +
               ", (BM * BN,))\n"
               "    offs = tk.program_id(0) * (BM * BN) + tk.arange(0, BM * BN)\n"
               "    tk.store(out_ptr + offs, f, mask=fm)\n";
  run.opts.signature = "*" + ir(d) + ", *" + ir(d) + ", i32";
  argsAllBuffers(run);
  run.args.push_back(CaseArg::integer(g.m));
  run.reference = [=](const std::vector<CaseBuffer> &bufs) {
    Expected e = unwritten(bufs[1]);
    for (int64_t i = 0; i < g.m; ++i)
      for (int64_t j = 0; j < g.n; ++j) {
        int64_t p = i / g.bm, li = i % g.bm;
        int64_t pos = p * g.bm * g.bn + (transposed ? j * g.bm + li : li * g.bn + j);
        expectAt(e, bufs[1], pos, at(bufs[0], i * g.n + j));
      }
    return std::vector<Expected>{std::move(e)};
  };
  return run;
}

struct DotShape {
  int64_t bm, bn, bk;
  int warps = 0; // 0: 1 to 8 at random
};

/// The dot cases' parameters (a, b, c, M, N, K) and their arguments.
void dotSignatureAndArgs(CaseRun &run, DType in, DType acc, int64_t m, int64_t n, int64_t k) {
  run.opts.signature = "*" + ir(in) + ", *" + ir(in) + ", *" + ir(acc) + ", i32, i32, i32";
  argsAllBuffers(run);
  for (int64_t v : {m, n, k})
    run.args.push_back(CaseArg::integer(v));
}

CaseRun buildDot(Rng &rng, DType in, DType acc, const std::string &precision, DotShape s) {
  CaseRun run;
  unsigned gm = unsigned(uniformInt(rng, 1, 2)), gn = unsigned(uniformInt(rng, 1, 2));
  int64_t m = (gm - 1) * s.bm + uniformInt(rng, 1, s.bm);
  int64_t n = (gn - 1) * s.bn + uniformInt(rng, 1, s.bn);
  int64_t k = uniformInt(rng, 1, 3 * s.bk - 1);
  run.grid = {gm, gn, 1};
  run.opts.kernel = "k";
  run.opts.numWarps = s.warps ? s.warps : int(pow2(rng, 0, 3));
  run.opts.constants["BM"] = ConstValue::ofInt(s.bm);
  run.opts.constants["BN"] = ConstValue::ofInt(s.bn);
  run.opts.constants["BK"] = ConstValue::ofInt(s.bk);
  run.shapeNote = fmt::format("BM={} BN={} BK={} M={} N={} K={} grid=({}, {}) num_warps={}", s.bm,
                              s.bn, s.bk, m, n, k, gm, gn, run.opts.numWarps);
  Gen g = isFloat(in) ? smallWhole(in, 4) : intIn(in, -128, 127);
  run.buffers.push_back(inputBuffer("a", in, m * k, g, rng));
  run.buffers.push_back(inputBuffer("b", in, k * n, g, rng));
  run.buffers.push_back(outputBuffer("c", acc, m * n));
  run.buffers.back().shape = {m, n};
  std::string prec = precision.empty() ? "" : ", input_precision=\"" + precision + "\"";
  run.source = std::string(kHeader) +
               "def k(a_ptr, b_ptr, c_ptr, M, N, K, BM: tk.constexpr, BN: tk.constexpr, "
               "BK: tk.constexpr):\n"
               "    rm = tk.program_id(0) * BM + tk.arange(0, BM)\n"
               "    rn = tk.program_id(1) * BN + tk.arange(0, BN)\n"
               "    acc = tk.zeros([BM, BN], dtype=" +
               py(acc) +
               ")\n"
               "    for k0 in range(0, K, BK):\n"
               "        rk = k0 + tk.arange(0, BK)\n"
               "        a = tk.load(a_ptr + rm[:, None] * K + rk[None, :],\n"
               "                    mask=(rm[:, None] < M) & (rk[None, :] < K), other=0)\n"
               "        b = tk.load(b_ptr + rk[:, None] * N + rn[None, :],\n"
               "                    mask=(rk[:, None] < K) & (rn[None, :] < N), other=0)\n"
               "        acc = tk.dot(a, b, acc" +
               prec +
               ")\n"
               "    tk.store(c_ptr + rm[:, None] * N + rn[None, :], acc,\n"
               "             mask=(rm[:, None] < M) & (rn[None, :] < N))\n";
  dotSignatureAndArgs(run, in, acc, m, n, k);
  run.reference = [=](const std::vector<CaseBuffer> &bufs) {
    Expected e = unwritten(bufs[2]);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double sf = 0;
        uint64_t si = 0;
        for (int64_t q = 0; q < k; ++q) {
          Elem x = at(bufs[0], i * k + q), y = at(bufs[1], q * n + j);
          sf += x.f * y.f;
          si += u(x) * u(y);
        }
        expectAt(e, bufs[2], i * n + j, isFloat(acc) ? real(sf) : wrapped(si));
      }
    return std::vector<Expected>{std::move(e)};
  };
  return run;
}

/// A batched dot of 3-D tiles, [BB, BM, BK] x [BB, BK, BN] with out_dtype
/// `acc`, M, N and K ragged (masked, other=0). The batches are split into
/// 2-D dots whose results are slices of the 3-D layout; those on the FMA
/// path (a 16-bit or fp64 accumulator, exact fp32) compute in a blocked
/// layout (--accelerate-dot).
CaseRun buildDot3d(Rng &rng, DType in, DType acc, const std::string &precision, int64_t bb,
                   DotShape s) {
  CaseRun run;
  int64_t m = uniformInt(rng, 1, s.bm), n = uniformInt(rng, 1, s.bn), k = uniformInt(rng, 1, s.bk);
  run.grid = {1, 1, 1};
  run.opts.kernel = "k";
  run.opts.numWarps = int(pow2(rng, 0, 3));
  run.opts.constants["BB"] = ConstValue::ofInt(bb);
  run.opts.constants["BM"] = ConstValue::ofInt(s.bm);
  run.opts.constants["BN"] = ConstValue::ofInt(s.bn);
  run.opts.constants["BK"] = ConstValue::ofInt(s.bk);
  run.shapeNote = fmt::format("BB={} BM={} BN={} BK={} M={} N={} K={} num_warps={}", bb, s.bm, s.bn,
                              s.bk, m, n, k, run.opts.numWarps);
  Gen g = smallWhole(in, 4);
  run.buffers.push_back(inputBuffer("a", in, bb * m * k, g, rng));
  run.buffers.push_back(inputBuffer("b", in, bb * k * n, g, rng));
  run.buffers.push_back(outputBuffer("c", acc, bb * m * n));
  std::string prec = precision.empty() ? "" : ", input_precision=\"" + precision + "\"";
  run.source =
      std::string(kHeader) +
      "def k(a_ptr, b_ptr, c_ptr, M, N, K, BB: tk.constexpr, BM: tk.constexpr, "
      "BN: tk.constexpr, BK: tk.constexpr):\n"
      "    rb = tk.arange(0, BB)[:, None, None]\n"
      "    rm = tk.arange(0, BM)[None, :, None]\n"
      "    rk = tk.arange(0, BK)\n"
      "    rn = tk.arange(0, BN)[None, None, :]\n"
      "    a = tk.load(a_ptr + rb * (M * K) + rm * K + rk[None, None, :],\n"
      "                mask=(rb < BB) & (rm < M) & (rk[None, None, :] < K), other=0)\n"
      "    b = tk.load(b_ptr + rb * (K * N) + rk[None, :, None] * N + rn,\n"
      "                mask=(rb < BB) & (rk[None, :, None] < K) & (rn < N), other=0)\n"
      "    c = tk.dot(a, b, out_dtype=" +
      py(acc) + prec +
      ")\n"
      "    tk.store(c_ptr + rb * (M * N) + rm * N + rn, c, mask=(rb < BB) & (rm < M) & (rn < N))\n";
  dotSignatureAndArgs(run, in, acc, m, n, k);
  run.reference = [=](const std::vector<CaseBuffer> &bufs) {
    Expected e = unwritten(bufs[2]);
    for (int64_t z = 0; z < bb; ++z)
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          double sum = 0;
          for (int64_t q = 0; q < k; ++q)
            sum += at(bufs[0], (z * m + i) * k + q).f * at(bufs[1], (z * k + q) * n + j).f;
          expectAt(e, bufs[2], (z * m + i) * n + j, real(sum));
        }
    return std::vector<Expected>{std::move(e)};
  };
  return run;
}

/// buildDot's K loop with its step a run-time argument: range(0, K, BK), or
/// count-down range((ceil(K / BK) - 1) * BK, -1, -BK) over the same tiles.
/// The software pipeliner guards its prefetches with "the iteration runs",
/// which depends on the step's sign at run time (SoftwarePipeline.cpp).
CaseRun buildDotRuntimeStep(Rng &rng, DType in, DType acc, const std::string &precision, DotShape s,
                            bool down) {
  CaseRun run = buildDot(rng, in, acc, precision, s);
  auto swap = [&](const std::string &from, const std::string &to) {
    size_t at = run.source.find(from);
    assert(at != std::string::npos && "buildDot's source changed");
    run.source.replace(at, from.size(), to);
  };
  swap("M, N, K, BM", "M, N, K, k_first, k_stop, k_step, BM");
  swap("range(0, K, BK)", "range(k_first, k_stop, k_step)");
  run.opts.signature += ", i32, i32, i32";
  int64_t k = run.args.back().value, tiles = (k + s.bk - 1) / s.bk;
  for (int64_t v : down ? std::vector<int64_t>{(tiles - 1) * s.bk, -1, -s.bk}
                        : std::vector<int64_t>{0, k, s.bk})
    run.args.push_back(CaseArg::integer(v));
  run.shapeNote += down ? " (K tiles counted down)" : " (run-time step)";
  return run;
}

/// A scalar parameter of every dtype, passed as its own launch kind:
/// out = x + s (x ^ s for i1).
CaseRun buildScalarArg(Rng &rng, DType d) {
  CaseRun run;
  Blocks b = pickBlocks(rng, run);
  b.mask = Blocks::Mask::Tail;
  Elem s = anyValue(d)(rng);
  // InterpArg carries integers as int64: a u64 argument stays below 2^63.
  if (d == DType::U64)
    s = Elem::ofInt((s.i & INT64_MAX) | 1);
  run.buffers.push_back(inputBuffer("x", d, b.n, anyValue(d), rng));
  run.buffers.push_back(outputBuffer("out", d, b.n));
  std::string op = d == DType::I1 ? "^" : "+";
  run.source = std::string(kHeader) + "def k(x_ptr, out_ptr, n, s, BLOCK: tk.constexpr):\n" +
               maskLines(b) + "    x = tk.load(x_ptr + offs, mask=mask)\n" +
               "    tk.store(out_ptr + offs, x " + op + " s, mask=mask)\n";
  run.opts.kernel = "k";
  run.opts.signature = "*" + ir(d) + ", *" + ir(d) + ", i32, " + ir(d);
  argsAllBuffers(run);
  run.args.push_back(CaseArg::integer(b.n));
  run.args.push_back(CaseArg::scalarOf(d, s));
  run.shapeNote += " s=" + (isFloat(d) ? fmt::format("{}", s.f) : std::to_string(s.i));
  run.reference = [=](const std::vector<CaseBuffer> &bufs) {
    Expected e = unwritten(bufs[1]);
    for (int64_t i = 0; i < b.n; ++i) {
      Elem x = at(bufs[0], i);
      expectAt(e, bufs[1], i,
               isFloat(d)       ? real(x.f + s.f)
               : d == DType::I1 ? wrapped(u(x) ^ u(s))
                                : wrapped(u(x) + u(s)));
    }
    return std::vector<Expected>{std::move(e)};
  };
  return run;
}

//===----------------------------------------------------------------------===//
// Control flow and grids
//===----------------------------------------------------------------------===//

CaseRun buildFor(Rng &rng) {
  CaseRun run;
  Blocks b = pickBlocks(rng, run);
  b.mask = Blocks::Mask::Tail;
  int64_t trips = uniformInt(rng, 0, 9);
  run.buffers.push_back(inputBuffer("x", DType::I32, b.n, anyInt(DType::I32), rng));
  run.buffers.push_back(outputBuffer("out", DType::I32, b.n));
  run.source = std::string(kHeader) + "def k(x_ptr, out_ptr, n, T, BLOCK: tk.constexpr):\n" +
               maskLines(b) +
               "    x = tk.load(x_ptr + offs, mask=mask)\n"
               "    acc = tk.zeros([BLOCK], dtype=tk.int32) + 5\n"
               "    for i in range(1, T, 2):\n"
               "        acc = acc * 3 + x * i\n"
               "    tk.store(out_ptr + offs, acc, mask=mask)\n";
  run.opts.kernel = "k";
  run.opts.signature = "*i32, *i32, i32, i32";
  argsAllBuffers(run);
  run.args.push_back(CaseArg::integer(b.n));
  run.args.push_back(CaseArg::integer(trips));
  run.shapeNote += fmt::format(" T={}", trips);
  run.reference = [=](const std::vector<CaseBuffer> &bufs) {
    Expected e = unwritten(bufs[1]);
    for (int64_t i = 0; i < b.n; ++i) {
      uint32_t acc = 5, x = uint32_t(at(bufs[0], i).i);
      for (int64_t t = 1; t < trips; t += 2)
        acc = acc * 3 + x * uint32_t(t);
      expectAt(e, bufs[1], i, Elem::ofInt(int32_t(acc)));
    }
    return std::vector<Expected>{std::move(e)};
  };
  return run;
}

// A while loop whose trip count is loaded per program, and an if/elif/else
// on run-time scalars (the program id's parity, the length).
CaseRun buildWhileIf(Rng &rng) {
  CaseRun run;
  Blocks b = pickBlocks(rng, run);
  b.mask = Blocks::Mask::Tail;
  run.buffers.push_back(inputBuffer("x", DType::F32, b.n, smallWhole(DType::F32, 50), rng));
  run.buffers.push_back(inputBuffer(
      "lim", DType::I32, b.programs, [](Rng &r) { return Elem::ofInt(uniformInt(r, 0, 6)); }, rng));
  run.buffers.push_back(outputBuffer("out", DType::F32, b.n));
  run.source = std::string(kHeader) + "def k(x_ptr, l_ptr, out_ptr, n, BLOCK: tk.constexpr):\n" +
               maskLines(b) +
               "    x = tk.load(x_ptr + offs, mask=mask)\n"
               "    lim = tk.load(l_ptr + tk.program_id(0))\n"
               "    i = 0\n"
               "    while i < lim:\n"
               "        x = tk.where(x > 0, x - i, x + 3 * i)\n"
               "        i += 1\n"
               "    if tk.program_id(0) % 2 == 0:\n"
               "        y = x * 2.0\n"
               "    elif n > 100:\n"
               "        y = x - 1.0\n"
               "    else:\n"
               "        y = -x\n"
               "    tk.store(out_ptr + offs, y, mask=mask)\n";
  run.opts.kernel = "k";
  run.opts.signature = "*fp32, *i32, *fp32, i32";
  argsAllBuffers(run);
  run.args.push_back(CaseArg::integer(b.n));
  run.reference = [=](const std::vector<CaseBuffer> &bufs) {
    Expected e = unwritten(bufs[2]);
    for (int64_t i = 0; i < b.n; ++i) {
      int64_t p = i / b.block, lim = at(bufs[1], p).i;
      double x = at(bufs[0], i).f;
      for (int64_t t = 0; t < lim; ++t)
        x = x > 0 ? x - double(t) : x + 3.0 * double(t);
      double y = p % 2 == 0 ? x * 2 : b.n > 100 ? x - 1 : -x;
      expectAt(e, bufs[2], i, real(y));
    }
    return std::vector<Expected>{std::move(e)};
  };
  return run;
}

CaseRun buildGrid(Rng &rng, bool threeD) {
  CaseRun run;
  std::array<unsigned, 3> grid = {unsigned(uniformInt(rng, 1, 5)), unsigned(uniformInt(rng, 2, 4)),
                                  threeD ? unsigned(uniformInt(rng, 2, 3)) : 1u};
  int64_t block = pow2(rng, 4, 8);
  run.grid = grid;
  run.opts.kernel = "k";
  run.opts.numWarps = int(pow2(rng, 0, 3));
  run.opts.constants["BLOCK"] = ConstValue::ofInt(block);
  int64_t programs = int64_t(grid[0]) * grid[1] * grid[2];
  run.shapeNote = fmt::format("grid=({}, {}, {}) BLOCK={} num_warps={}", grid[0], grid[1], grid[2],
                              block, run.opts.numWarps);
  run.buffers.push_back(outputBuffer("out", DType::I32, programs * block));
  run.source =
      std::string(kHeader) +
      "def k(out_ptr, BLOCK: tk.constexpr):\n"
      "    p0 = tk.program_id(0)\n    p1 = tk.program_id(1)\n    p2 = tk.program_id(2)\n"
      "    n0 = tk.num_programs(0)\n    n1 = tk.num_programs(1)\n"
      "    n2 = tk.num_programs(2)\n"
      "    prog = (p2 * n1 + p1) * n0 + p0\n"
      "    offs = prog * BLOCK + tk.arange(0, BLOCK)\n"
      "    tk.store(out_ptr + offs, offs * 7 + p0 * 1000 - p1 * 100 + p2 * 10 + n0 * n1 * n2)\n";
  run.opts.signature = "*i32";
  argsAllBuffers(run);
  run.reference = [=](const std::vector<CaseBuffer> &bufs) {
    Expected e = unwritten(bufs[0]);
    for (int64_t p2 = 0; p2 < grid[2]; ++p2)
      for (int64_t p1 = 0; p1 < grid[1]; ++p1)
        for (int64_t p0 = 0; p0 < grid[0]; ++p0)
          for (int64_t l = 0; l < block; ++l) {
            int64_t offs = ((p2 * grid[1] + p1) * grid[0] + p0) * block + l;
            expectAt(e, bufs[0], offs,
                     Elem::ofInt(offs * 7 + p0 * 1000 - p1 * 100 + p2 * 10 + programs));
          }
    return std::vector<Expected>{std::move(e)};
  };
  return run;
}

} // namespace

void addStructuredCases(std::vector<CaseDef> &cases) {
  auto add = [&](std::string name, std::string family, std::string dtype,
                 std::function<CaseRun(Rng &)> build) {
    cases.push_back({std::move(name), std::move(family), std::move(dtype), std::move(build)});
  };
  for (DType d : kAll)
    add("load_other/" + ir(d), "load_other", ir(d), [d](Rng &r) { return buildLoadOther(r, d); });
  for (DType d : numeric())
    add("broadcast/" + ir(d), "broadcast", ir(d), [d](Rng &r) { return buildBroadcast(r, d); });

  for (const char *kind : {"sum", "max", "min", "argmax", "argmin", "xor_sum"})
    for (int axis : {0, 1})
      for (DType d : std::string(kind) == "xor_sum" ? kInts : numeric()) {
        std::string k = kind;
        add(fmt::format("reduce_{}/axis{}/{}", k, axis, ir(d)), "reduce_" + k, ir(d),
            [=](Rng &r) { return buildReduce(r, k, d, axis, false); });
      }
  for (int axis : {0, 1})
    add(fmt::format("reduce_sum_reals/axis{}/fp32", axis), "reduce_sum", "fp32",
        [=](Rng &r) { return buildReduce(r, "sum", DType::F32, axis, true); });

  for (const char *kind : {"cumsum", "cumprod"})
    for (int axis : {0, 1})
      for (DType d : numeric()) {
        std::string k = kind;
        add(fmt::format("scan_{}/axis{}/{}", k, axis, ir(d)), "scan_" + k, ir(d),
            [=](Rng &r) { return buildScan(r, k, d, axis, false); });
      }
  for (DType d : {DType::I32, DType::F32})
    add("scan_cumsum/reverse/" + ir(d), "scan_cumsum", ir(d),
        [=](Rng &r) { return buildScan(r, "cumsum", d, 1, true); });
  for (int axis : {0, 1})
    for (DType d : {DType::I8, DType::U32, DType::I64, DType::F16, DType::BF16, DType::F32})
      add(fmt::format("scan_max_index/axis{}/{}", axis, ir(d)), "scan_max_index", ir(d),
          [=](Rng &r) { return buildScanMaxIndex(r, d, axis); });

  const std::vector<DType> words = {DType::I32, DType::U32, DType::I64, DType::U64};
  std::vector<DType> addTypes = words;
  addTypes.insert(addTypes.end(), kFloats.begin(), kFloats.end());
  std::vector<DType> maxTypes = words;
  maxTypes.push_back(DType::F32);
  for (DType d : addTypes)
    add("atomic_add/" + ir(d), "atomic_add", ir(d),
        [=](Rng &r) { return buildAtomicRMW(r, "add", d); });
  for (const char *kind : {"max", "min"})
    for (DType d : maxTypes) {
      std::string k = kind;
      add("atomic_" + k + "/" + ir(d), "atomic_" + k, ir(d),
          [=](Rng &r) { return buildAtomicRMW(r, k, d); });
    }
  for (const char *kind : {"and", "or", "xor"})
    for (DType d : words) {
      std::string k = kind;
      add("atomic_" + k + "/" + ir(d), "atomic_" + k, ir(d),
          [=](Rng &r) { return buildAtomicRMW(r, k, d); });
    }
  std::vector<DType> xchgTypes = words;
  xchgTypes.push_back(DType::F32);
  xchgTypes.push_back(DType::F64);
  for (DType d : xchgTypes)
    add("atomic_xchg/" + ir(d), "atomic_xchg", ir(d),
        [=](Rng &r) { return buildAtomicSwap(r, false, d); });
  for (DType d : words)
    add("atomic_cas/" + ir(d), "atomic_cas", ir(d),
        [=](Rng &r) { return buildAtomicSwap(r, true, d); });

  for (DType d :
       {DType::I8, DType::I16, DType::F16, DType::BF16, DType::F32, DType::I64, DType::F64}) {
    add("trans/" + ir(d), "trans", ir(d), [=](Rng &r) { return buildTrans(r, d); });
    add("reshape/" + ir(d), "reshape", ir(d), [=](Rng &r) { return buildReshape(r, d, false); });
    add("reshape_trans/" + ir(d), "reshape", ir(d),
        [=](Rng &r) { return buildReshape(r, d, true); });
  }

  struct DotCase {
    DType in, acc;
    const char *precision;
  };
  const DotCase dots[] = {{DType::F16, DType::F32, ""},     {DType::BF16, DType::F32, ""},
                          {DType::F32, DType::F32, "ieee"}, {DType::F32, DType::F32, "tf32"},
                          {DType::I8, DType::I32, ""},      {DType::F16, DType::F16, ""}};
  const DotShape shapes[] = {{16, 16, 16}, {32, 32, 16}, {64, 64, 32}, {16, 64, 32}};
  for (const DotCase &dc : dots)
    for (const DotShape &s : shapes) {
      std::string dt = ir(dc.in) + (*dc.precision ? std::string("-") + dc.precision : "") +
                       (dc.acc == DType::F16 ? "-fp16acc" : "");
      add(fmt::format("dot/{}/{}x{}x{}", dt, s.bm, s.bn, s.bk), "dot", ir(dc.in),
          [=](Rng &r) { return buildDot(r, dc.in, dc.acc, dc.precision, s); });
    }

  struct Dot3dCase {
    DType in, acc;
    const char *precision;
  };
  const Dot3dCase dots3d[] = {{DType::F16, DType::F16, ""},
                              {DType::F16, DType::F32, ""},
                              {DType::F32, DType::F32, "ieee"},
                              {DType::F64, DType::F64, ""}};
  const std::pair<int64_t, DotShape> shapes3d[] = {
      {1, {32, 32, 32}}, {2, {16, 32, 16}}, {4, {32, 16, 32}}};
  for (const Dot3dCase &dc : dots3d)
    for (const auto &[batch, shape] : shapes3d) {
      // Copies: clang before 16 (the sanitizer tree's) cannot capture
      // structured bindings.
      const int64_t bb = batch;
      const DotShape s = shape;
      std::string dt =
          ir(dc.in) + "-" + ir(dc.acc) + (*dc.precision ? std::string("-") + dc.precision : "");
      add(fmt::format("dot3d/{}/{}x{}x{}x{}", dt, bb, s.bm, s.bn, s.bk), "dot", ir(dc.in),
          [=](Rng &r) { return buildDot3d(r, dc.in, dc.acc, dc.precision, bb, s); });
    }

  // More warps than 16x8 pieces: the mma layout wraps along N (warps that
  // compute the same pieces; --accelerate-dot).
  const DotShape wrapped[] = {{16, 16, 32, 4}, {32, 32, 32, 16}, {16, 32, 32, 8}};
  for (const DotCase &dc : {dots[0], dots[3], dots[4]})
    for (const DotShape &s : wrapped) {
      std::string dt = ir(dc.in) + (*dc.precision ? std::string("-") + dc.precision : "");
      add(fmt::format("dot_wrap/{}/{}x{}x{}w{}", dt, s.bm, s.bn, s.bk, s.warps), "dot", ir(dc.in),
          [=](Rng &r) { return buildDot(r, dc.in, dc.acc, dc.precision, s); });
    }

  for (const DotCase &dc : {dots[0], dots[3]})
    for (bool down : {false, true}) {
      std::string dt = ir(dc.in) + (*dc.precision ? std::string("-") + dc.precision : "");
      add(fmt::format("dot_step/{}/{}", down ? "down" : "up", dt), "dot", ir(dc.in), [=](Rng &r) {
        return buildDotRuntimeStep(r, dc.in, dc.acc, dc.precision, {64, 64, 32}, down);
      });
    }

  for (DType d : kAll)
    add("scalar_arg/" + ir(d), "scalar_arg", ir(d), [d](Rng &r) { return buildScalarArg(r, d); });
  add("control/for", "for", "i32", [](Rng &r) { return buildFor(r); });
  add("control/while_if", "while", "fp32", [](Rng &r) { return buildWhileIf(r); });
  add("grid/2d", "program_id", "i32", [](Rng &r) { return buildGrid(r, false); });
  add("grid/3d", "program_id", "i32", [](Rng &r) { return buildGrid(r, true); });
}

} // namespace tk::difftest

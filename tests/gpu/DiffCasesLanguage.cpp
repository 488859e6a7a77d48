// The differential test's cases for Triton's language extras (issue 18):
// sort and topk, the Philox random numbers, umulhi, split / interleave, and
// maximum / minimum / clamp with tk.PropagateNan. Each is a source template
// with random sizes (rows ragged), warps and values; where the answer is
// simple, a host reference checks the interpreter in the Ci mode, and the Gpu
// mode compares the GPU with the interpreter element by element.
//
//   sort/T/asc, sort/T/desc   rows of a [BM, BN] tile sorted (sort_nan/fp32:
//                             NaN and signed zeros, GPU against interpreter)
//   topk/T                    the K largest of each row
//   philox/i32, philox/i64    randint4x's words and rand exactly, randn
//                             within the approximate math's error
//   umulhi/T                  the unsigned high half, any bit patterns
//   split_interleave/T        x -> (N/2, 2) -> split -> interleave(b, a)
//   propagate_nan/OP/MODE/T   NaN at random lanes, both NaN rules
#include "DiffGen.h"

#include <limits>

namespace tk::difftest {
namespace {

const char *kHeader = "import tk\n\n\n@tk.jit\n";

/// A [BM, BN] tile of whole rows (BN the sorted axis) over M ragged rows.
struct Rows {
  int64_t bm, bn, m;
};

Rows pickRows(Rng &rng, CaseRun &run, int maxLogN = 7) {
  Rows r;
  r.bm = pow2(rng, 0, 3);
  r.bn = pow2(rng, 1, maxLogN);
  unsigned programs = unsigned(uniformInt(rng, 1, 3));
  r.m = (programs - 1) * r.bm + uniformInt(rng, 1, r.bm);
  run.grid = {programs, 1, 1};
  run.opts.kernel = "k";
  run.opts.numWarps = int(pow2(rng, 0, 3));
  run.opts.constants["BM"] = ConstValue::ofInt(r.bm);
  run.opts.constants["BN"] = ConstValue::ofInt(r.bn);
  run.shapeNote = fmt::format("BM={} BN={} M={} grid={} num_warps={}", r.bm, r.bn, r.m, programs,
                              run.opts.numWarps);
  return r;
}

const char *kRowLoad = "    rows = tk.program_id(0) * BM + tk.arange(0, BM)\n"
                       "    cols = tk.arange(0, BN)\n"
                       "    x = tk.load(x_ptr + rows[:, None] * BN + cols[None, :],\n"
                       "                mask=rows[:, None] < M, other=0)\n";

/// Values with NaN, +0.0 and -0.0 among them (a third of the elements).
Gen nanZeros(DType d) {
  return [d](Rng &rng) {
    switch (uniformInt(rng, 0, 8)) {
    case 0:
      return Elem::ofFloat(std::numeric_limits<double>::quiet_NaN());
    case 1:
      return Elem::ofFloat(0.0);
    case 2:
      return Elem::ofFloat(-0.0);
    default:
      return realIn(d, -8, 8)(rng);
    }
  };
}

/// Row i of an M x n input, in ascending order.
std::vector<Elem> sortedRow(const CaseBuffer &x, DType d, int64_t i, int64_t n) {
  std::vector<Elem> row;
  for (int64_t j = 0; j < n; ++j)
    row.push_back(at(x, i * n + j));
  std::sort(row.begin(), row.end(), [&](const Elem &a, const Elem &b) { return less(d, a, b); });
  return row;
}

CaseRun buildSort(Rng &rng, DType d, bool descending, bool nans) {
  CaseRun run;
  Rows r = pickRows(rng, run);
  run.buffers.push_back(inputBuffer("x", d, r.m * r.bn, nans ? nanZeros(d) : anyValue(d), rng));
  run.buffers.push_back(outputBuffer("out", d, r.m * r.bn));
  run.buffers.back().shape = {r.m, r.bn};
  run.source = std::string(kHeader) +
               "def k(x_ptr, out_ptr, M, BM: tk.constexpr, BN: tk.constexpr):\n" + kRowLoad +
               fmt::format("    y = tk.sort(x, descending={})\n", descending ? "True" : "False") +
               "    tk.store(out_ptr + rows[:, None] * BN + cols[None, :], y,\n"
               "             mask=rows[:, None] < M)\n";
  run.opts.signature = "*" + ir(d) + ", *" + ir(d) + ", i32";
  run.args = {CaseArg::buf(0), CaseArg::buf(1), CaseArg::integer(r.m)};
  if (nans)
    return run; // the network's choices for NaN and zeros: GPU against interpreter only
  run.reference = [=](const std::vector<CaseBuffer> &bufs) {
    Expected e = unwritten(bufs[1]);
    for (int64_t i = 0; i < r.m; ++i) {
      std::vector<Elem> row = sortedRow(bufs[0], d, i, r.bn);
      if (descending)
        std::reverse(row.begin(), row.end());
      for (int64_t j = 0; j < r.bn; ++j)
        expectAt(e, bufs[1], i * r.bn + j, row[size_t(j)]);
    }
    return std::vector<Expected>{std::move(e)};
  };
  return run;
}

CaseRun buildTopk(Rng &rng, DType d) {
  CaseRun run;
  Rows r = pickRows(rng, run);
  int64_t k = int64_t(1) << uniformInt(rng, 0, 63 - __builtin_clzll(uint64_t(r.bn)));
  run.opts.constants["K"] = ConstValue::ofInt(k);
  run.shapeNote += fmt::format(" K={}", k);
  run.buffers.push_back(inputBuffer("x", d, r.m * r.bn, anyValue(d), rng));
  run.buffers.push_back(outputBuffer("out", d, r.m * k));
  run.source =
      std::string(kHeader) +
      "def k(x_ptr, out_ptr, M, BM: tk.constexpr, BN: tk.constexpr, K: tk.constexpr):\n" +
      kRowLoad +
      "    tk.store(out_ptr + rows[:, None] * K + tk.arange(0, K)[None, :], tk.topk(x, K),\n"
      "             mask=rows[:, None] < M)\n";
  run.opts.signature = "*" + ir(d) + ", *" + ir(d) + ", i32";
  run.args = {CaseArg::buf(0), CaseArg::buf(1), CaseArg::integer(r.m)};
  run.reference = [=](const std::vector<CaseBuffer> &bufs) {
    Expected e = unwritten(bufs[1]);
    for (int64_t i = 0; i < r.m; ++i) {
      std::vector<Elem> row = sortedRow(bufs[0], d, i, r.bn);
      for (int64_t j = 0; j < k; ++j)
        expectAt(e, bufs[1], i * k + j, row[size_t(r.bn - 1 - j)]);
    }
    return std::vector<Expected>{std::move(e)};
  };
  return run;
}

//===----------------------------------------------------------------------===//
// Philox: the host generator, written from its definition
//===----------------------------------------------------------------------===//

struct Words {
  uint64_t c[4];
};

Words philox(uint64_t offset, uint64_t seed, int bits) {
  bool wide = bits == 64;
  uint64_t mask = wide ? ~uint64_t(0) : 0xFFFFFFFFull;
  uint64_t a = wide ? 0xD2E7470EE14C6C93ull : 0xD2511F53ull;
  uint64_t b = wide ? 0xCA5A826395121157ull : 0xCD9E8D57ull;
  uint64_t w0 = wide ? 0x9E3779B97F4A7C15ull : 0x9E3779B9ull;
  uint64_t w1 = wide ? 0xBB67AE8584CAA73Bull : 0xBB67AE85ull;
  uint64_t k0 = wide ? seed : seed & mask, k1 = wide ? 0 : seed >> 32;
  uint64_t c0 = offset & mask, c1 = 0, c2 = 0, c3 = 0;
  auto mulhilo = [&](uint64_t x, uint64_t y, uint64_t &hi) {
    unsigned __int128 p = (unsigned __int128)x * y;
    hi = uint64_t(p >> bits) & mask;
    return uint64_t(p) & mask;
  };
  for (int r = 0; r < 10; ++r) {
    uint64_t h0, h1;
    uint64_t l0 = mulhilo(a, c0, h0), l1 = mulhilo(b, c2, h1);
    uint64_t n0 = h1 ^ c1 ^ k0, n2 = h0 ^ c3 ^ k1;
    c0 = n0, c1 = l1, c2 = n2, c3 = l0;
    k0 = (k0 + w0) & mask;
    k1 = (k1 + w1) & mask;
  }
  return {{c0, c1, c2, c3}};
}

float uniform(uint64_t w, int bits) {
  int64_t x = bits == 32 ? int64_t(int32_t(uint32_t(w))) : int64_t(w);
  if (x < 0)
    x = -(x + 1);
  float scale = bits == 32 ? 4.6566127342e-10f : 1.0842020432385337e-19f;
  return float(x) * scale;
}

CaseRun buildPhilox(Rng &rng, DType offsetType) {
  CaseRun run;
  Blocks b = pickBlocks(rng, run);
  run.opts.kernel = "k";
  int bits = int(dtypeBits(offsetType));
  DType seedType = rng() & 1 ? DType::I64 : DType::I32;
  int64_t seed = seedType == DType::I64 ? int64_t(rng()) : int64_t(int32_t(rng()));
  int64_t stride = uniformInt(rng, 1, 1000);
  DType word = bits == 32 ? DType::U32 : DType::U64;
  run.buffers.push_back(outputBuffer("words", word, 4 * b.n));
  run.buffers.push_back(outputBuffer("u", DType::F32, b.n));
  run.buffers.push_back(outputBuffer("g", DType::F32, b.n, {8, 5e-5}));
  run.source = std::string(kHeader) +
               "def k(w_ptr, u_ptr, g_ptr, seed, n, BLOCK: tk.constexpr):\n"
               "    offs = tk.program_id(0) * BLOCK + tk.arange(0, BLOCK)\n"
               "    mask = offs < n\n" +
               fmt::format("    o = offs.to({}) * {} + 5\n", py(offsetType), stride) +
               "    r0, r1, r2, r3 = tk.randint4x(seed, o)\n"
               "    tk.store(w_ptr + offs, r0, mask=mask)\n"
               "    tk.store(w_ptr + n + offs, r1, mask=mask)\n"
               "    tk.store(w_ptr + 2 * n + offs, r2, mask=mask)\n"
               "    tk.store(w_ptr + 3 * n + offs, r3, mask=mask)\n"
               "    tk.store(u_ptr + offs, tk.rand(seed, o), mask=mask)\n"
               "    tk.store(g_ptr + offs, tk.randn(seed, o), mask=mask)\n";
  run.opts.signature = "*" + ir(word) + ", *fp32, *fp32, " + ir(seedType) + ", i32";
  run.args = {CaseArg::buf(0), CaseArg::buf(1), CaseArg::buf(2),
              CaseArg::scalarOf(seedType, Elem::ofInt(seed)), CaseArg::integer(b.n)};
  run.shapeNote += fmt::format(" seed={} ({}) offset stride={}", seed, ir(seedType), stride);
  run.reference = [=](const std::vector<CaseBuffer> &bufs) {
    Expected w = unwritten(bufs[0]), u = unwritten(bufs[1]), g = unwritten(bufs[2]);
    uint64_t mask = bits == 32 ? 0xFFFFFFFFull : ~uint64_t(0);
    for (int64_t i = 0; i < b.n; ++i) {
      Words ws = philox(uint64_t(i * stride + 5) & mask, uint64_t(seed), bits);
      for (int j = 0; j < 4; ++j)
        expectAt(w, bufs[0], j * b.n + i, Elem::ofInt(int64_t(ws.c[j])));
      float u1 = uniform(ws.c[0], bits), u2 = uniform(ws.c[1], bits);
      expectAt(u, bufs[1], i, Elem::ofFloat(u1));
      double r = std::sqrt(-2.0 * std::log(std::max(1e-7, double(u1))));
      expectAt(g, bufs[2], i, Elem::ofFloat(r * std::cos(6.283185307179586 * u2)));
    }
    return std::vector<Expected>{std::move(w), std::move(u), std::move(g)};
  };
  return run;
}

//===----------------------------------------------------------------------===//
// umulhi, split / interleave, NaN rules: 1-D blocks
//===----------------------------------------------------------------------===//

CaseRun buildUmulhi(Rng &rng, DType d) {
  CaseRun run;
  Blocks b = pickBlocks(rng, run);
  run.opts.kernel = "k";
  run.buffers.push_back(inputBuffer("x", d, b.n, anyInt(d), rng));
  run.buffers.push_back(inputBuffer("y", d, b.n, anyInt(d), rng));
  run.buffers.push_back(outputBuffer("out", d, b.n));
  run.source = std::string(kHeader) + "def k(x_ptr, y_ptr, out_ptr, n, BLOCK: tk.constexpr):\n"
                                      "    offs = tk.program_id(0) * BLOCK + tk.arange(0, BLOCK)\n"
                                      "    mask = offs < n\n"
                                      "    x = tk.load(x_ptr + offs, mask=mask)\n"
                                      "    y = tk.load(y_ptr + offs, mask=mask)\n"
                                      "    tk.store(out_ptr + offs, tk.umulhi(x, y), mask=mask)\n";
  run.opts.signature = "*" + ir(d) + ", *" + ir(d) + ", *" + ir(d) + ", i32";
  run.args = {CaseArg::buf(0), CaseArg::buf(1), CaseArg::buf(2), CaseArg::integer(b.n)};
  int w = int(bits(d));
  run.reference = [=](const std::vector<CaseBuffer> &bufs) {
    Expected e = unwritten(bufs[2]);
    uint64_t mask = w == 32 ? 0xFFFFFFFFull : ~uint64_t(0);
    for (int64_t i = 0; i < b.n; ++i) {
      unsigned __int128 p =
          (unsigned __int128)(u(at(bufs[0], i)) & mask) * (u(at(bufs[1], i)) & mask);
      expectAt(e, bufs[2], i, wrapped(uint64_t(p >> w)));
    }
    return std::vector<Expected>{std::move(e)};
  };
  return run;
}

CaseRun buildSplitInterleave(Rng &rng, DType d) {
  CaseRun run;
  Blocks b = pickBlocks(rng, run);
  run.opts.kernel = "k";
  int64_t n = b.n + (b.n & 1); // whole pairs
  run.buffers.push_back(inputBuffer("x", d, n, anyValue(d), rng));
  run.buffers.push_back(outputBuffer("out", d, n));
  run.source = std::string(kHeader) +
               "def k(x_ptr, out_ptr, n, BLOCK: tk.constexpr):\n"
               "    offs = tk.program_id(0) * BLOCK + tk.arange(0, BLOCK)\n"
               "    mask = offs < n\n"
               "    x = tk.load(x_ptr + offs, mask=mask)\n"
               "    a, b = tk.split(tk.reshape(x, (BLOCK // 2, 2)))\n"
               "    tk.store(out_ptr + offs, tk.interleave(b, a), mask=mask)\n";
  run.opts.signature = "*" + ir(d) + ", *" + ir(d) + ", i32";
  run.args = {CaseArg::buf(0), CaseArg::buf(1), CaseArg::integer(n)};
  run.reference = [=](const std::vector<CaseBuffer> &bufs) {
    Expected e = unwritten(bufs[1]);
    for (int64_t i = 0; i < n; ++i)
      expectAt(e, bufs[1], i, at(bufs[0], i ^ 1));
    return std::vector<Expected>{std::move(e)};
  };
  return run;
}

CaseRun buildPropagateNan(Rng &rng, const std::string &op, bool all, DType d) {
  CaseRun run;
  Blocks b = pickBlocks(rng, run);
  run.opts.kernel = "k";
  Gen g = [d](Rng &r) {
    return uniformInt(r, 0, 3) == 0 ? Elem::ofFloat(std::numeric_limits<double>::quiet_NaN())
                                    : realIn(d, -8, 8)(r);
  };
  run.buffers.push_back(inputBuffer("x", d, b.n, g, rng));
  run.buffers.push_back(inputBuffer("y", d, b.n, g, rng));
  run.buffers.push_back(outputBuffer("out", d, b.n));
  std::string mode = all ? "tk.PropagateNan.ALL" : "tk.PropagateNan.NONE";
  std::string expr = op == "clamp"
                         ? "tk.clamp(x, -tk.abs(y), tk.abs(y), propagate_nan=" + mode + ")"
                         : "tk." + op + "(x, y, propagate_nan=" + mode + ")";
  run.source = std::string(kHeader) +
               "def k(x_ptr, y_ptr, out_ptr, n, BLOCK: tk.constexpr):\n"
               "    offs = tk.program_id(0) * BLOCK + tk.arange(0, BLOCK)\n"
               "    mask = offs < n\n"
               "    x = tk.load(x_ptr + offs, mask=mask)\n"
               "    y = tk.load(y_ptr + offs, mask=mask)\n"
               "    tk.store(out_ptr + offs, " +
               expr + ", mask=mask)\n";
  run.opts.signature = "*" + ir(d) + ", *" + ir(d) + ", *" + ir(d) + ", i32";
  run.args = {CaseArg::buf(0), CaseArg::buf(1), CaseArg::buf(2), CaseArg::integer(b.n)};
  run.reference = [=](const std::vector<CaseBuffer> &bufs) {
    Expected e = unwritten(bufs[2]);
    double nan = std::numeric_limits<double>::quiet_NaN();
    auto pick = [&](bool isMax, double p, double q) {
      if (std::isnan(p) || std::isnan(q))
        return all ? nan : (std::isnan(p) ? q : p);
      return isMax ? std::max(p, q) : std::min(p, q);
    };
    for (int64_t i = 0; i < b.n; ++i) {
      double x = at(bufs[0], i).f, y = at(bufs[1], i).f, r;
      if (op == "clamp")
        r = pick(false, pick(true, x, -std::fabs(y)), std::fabs(y));
      else
        r = pick(op == "maximum", x, y);
      expectAt(e, bufs[2], i, Elem::ofFloat(r));
    }
    return std::vector<Expected>{std::move(e)};
  };
  return run;
}

} // namespace

void addLanguageCases(std::vector<CaseDef> &cases) {
  auto add = [&](std::string name, std::string family, std::string dtype,
                 std::function<CaseRun(Rng &)> build) {
    cases.push_back({std::move(name), std::move(family), std::move(dtype), std::move(build)});
  };
  for (DType d : {DType::I32, DType::U8, DType::I64, DType::F16, DType::F32})
    for (bool desc : {false, true})
      add(fmt::format("sort/{}/{}", ir(d), desc ? "desc" : "asc"), "sort", ir(d),
          [=](Rng &r) { return buildSort(r, d, desc, false); });
  add("sort_nan/fp32", "sort", "fp32",
      [](Rng &r) { return buildSort(r, DType::F32, false, true); });
  for (DType d : {DType::I32, DType::F16, DType::F32})
    add("topk/" + ir(d), "topk", ir(d), [=](Rng &r) { return buildTopk(r, d); });
  for (DType d : {DType::I32, DType::I64})
    add("philox/" + ir(d), "rand", ir(d), [=](Rng &r) { return buildPhilox(r, d); });
  for (DType d : {DType::I32, DType::U32, DType::I64, DType::U64})
    add("umulhi/" + ir(d), "umulhi", ir(d), [=](Rng &r) { return buildUmulhi(r, d); });
  for (DType d : {DType::I8, DType::I32, DType::F16, DType::F64})
    add("split_interleave/" + ir(d), "split", ir(d),
        [=](Rng &r) { return buildSplitInterleave(r, d); });
  for (const char *op : {"maximum", "minimum", "clamp"})
    for (bool all : {false, true})
      for (DType d : {DType::F16, DType::F32}) {
        std::string o = op;
        add(fmt::format("propagate_nan/{}/{}/{}", o, all ? "all" : "none", ir(d)), o, ir(d),
            [=](Rng &r) { return buildPropagateNan(r, o, all, d); });
      }
}

} // namespace tk::difftest

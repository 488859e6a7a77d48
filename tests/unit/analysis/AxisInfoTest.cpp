// Axis info: the worked examples of analysis/AxisInfo.h, the seeds and hints,
// loops, and a randomized check that every claim the analysis makes holds on
// concrete values.
#include "analysis/AxisInfo.h"
#include "ir/Builder.h"
#include "ir/IRParser.h"
#include "ir/Verifier.h"

#include <gtest/gtest.h>

#include <random>

namespace tk {
namespace {

using V = std::vector<int64_t>;
constexpr int64_t kMax = AxisInfo::kMaxDivisibility;

struct Parsed {
  SourceManager sm;
  IRContext ctx{sm};
  DiagnosticEngine diag{sm};
  std::unique_ptr<Module> module;
  std::unique_ptr<AxisInfoAnalysis> axis;

  explicit Parsed(std::string text) {
    module = parseIR(ctx, sm.addBuffer("t.tkir", std::move(text)), diag);
    EXPECT_TRUE(module && verifyModule(*module, diag)) << diag.renderAll();
    if (module)
      axis = std::make_unique<AxisInfoAnalysis>(*module->functions().front());
  }

  // The value defined by the op carrying {tag = "name"} (tests tag the ops
  // they look at; ops may carry extra attributes).
  Value *tagged(const std::string &name) {
    Value *found = nullptr;
    module->functions().front()->walk([&](Operation *op) {
      if (op->attrs().getString("tag") == name)
        found = op->result(0);
    });
    EXPECT_NE(found, nullptr) << name;
    return found;
  }
  const AxisInfo &info(const std::string &name) { return axis->get(tagged(name)); }
};

void expectInfo(const AxisInfo &i, V c, V d, V k) {
  EXPECT_EQ(i.contiguity, c);
  EXPECT_EQ(i.divisibility, d);
  EXPECT_EQ(i.constancy, k);
}

TEST(AxisInfo, HeaderExampleOneDimension) {
  Parsed p(R"(
func @k(%x: ptr<fp32> {divisibility = 16}, %n: i32 {divisibility = 16}) {
  %pid = program_id {axis = 0, tag = "pid"} : i32
  %c = constant {value = 1024} : i32
  %base = mul %pid, %c {tag = "base"} : i32
  %r = make_range {end = 1024, start = 0, tag = "r"} : tensor<1024xi32>
  %sb = splat %base : tensor<1024xi32>
  %offs = add %sb, %r {tag = "offs"} : tensor<1024xi32>
  %sx = splat %x : tensor<1024xptr<fp32>>
  %ptrs = addptr %sx, %offs {tag = "ptrs"} : tensor<1024xptr<fp32>>
  %sn = splat %n : tensor<1024xi32>
  %mask = cmpi %offs, %sn {predicate = "slt", tag = "mask"} : tensor<1024xi1>
  return
})");
  expectInfo(p.info("pid"), {1}, {1}, {1});
  expectInfo(p.info("base"), {1}, {1024}, {1});
  expectInfo(p.info("r"), {1024}, {kMax}, {1});
  expectInfo(p.info("offs"), {1024}, {1024}, {1});
  expectInfo(p.info("ptrs"), {1024}, {16}, {1});
  expectInfo(p.info("mask"), {1}, {1}, {16});
  EXPECT_EQ(p.axis->alignment(p.tagged("ptrs")), 16);
  EXPECT_EQ(p.axis->maskAlignment(p.tagged("mask"), 0), 16);
}

TEST(AxisInfo, HeaderExampleTwoDimensions) {
  Parsed p(R"(
func @k() {
  %r = make_range {end = 64, start = 0} : tensor<64xi32>
  %e = expand_dims %r {axis = 1} : tensor<64x1xi32>
  %c = constant {value = 128} : tensor<64x1xi32>
  %rows = mul %e, %c {tag = "rows"} : tensor<64x1xi32>
  %q = make_range {end = 128, start = 0} : tensor<128xi32>
  %cols = expand_dims %q {axis = 0, tag = "cols"} : tensor<1x128xi32>
  %br = broadcast %rows {tag = "br"} : tensor<64x128xi32>
  %bc = broadcast %cols {tag = "bc"} : tensor<64x128xi32>
  %offs = add %br, %bc {tag = "offs"} : tensor<64x128xi32>
  return
})");
  expectInfo(p.info("rows"), {1, 1}, {128, 128}, {1, 1});
  expectInfo(p.info("cols"), {1, 128}, {1, kMax}, {1, 1});
  expectInfo(p.info("br"), {1, 1}, {128, 128}, {1, 128});
  expectInfo(p.info("bc"), {1, 128}, {1, kMax}, {64, 1});
  expectInfo(p.info("offs"), {1, 128}, {1, 128}, {1, 1});
  EXPECT_EQ(p.axis->mostContiguousDim(p.tagged("offs")), 1u);
}

TEST(AxisInfo, SmallArraysOfTheHeader) {
  // [0..7]: one run from 0; [8 9 10 11 24 25 26 27]: runs of 4 from 8 and 24.
  Parsed p(R"(
func @k() {
  %r = make_range {end = 8, start = 0, tag = "r"} : tensor<8xi32>
  %four = constant {value = 4} : tensor<8xi32>
  %q = div %r, %four {tag = "q"} : tensor<8xi32>
  %sixteen = constant {value = 16} : tensor<8xi32>
  %hi = mul %q, %sixteen : tensor<8xi32>
  %eight = constant {value = 8} : tensor<8xi32>
  %lo = rem %r, %four {tag = "lo"} : tensor<8xi32>
  %a = add %hi, %lo : tensor<8xi32>
  %b = add %a, %eight {tag = "b"} : tensor<8xi32>
  return
})");
  expectInfo(p.info("r"), {8}, {kMax}, {1});
  expectInfo(p.info("q"), {1}, {1}, {4});
  expectInfo(p.info("lo"), {4}, {kMax}, {1});
  expectInfo(p.info("b"), {4}, {8}, {1});
}

TEST(AxisInfo, ConstantsFoldAndKeepTheirValue) {
  Parsed p(R"(
func @k() {
  %a = constant {value = 48} : i32
  %b = constant {value = 3} : i32
  %c = mul %a, %b {tag = "c"} : i32
  %d = sub %c, %a {tag = "d"} : i32
  %big = constant {value = 2147483647} : i32
  %o = add %big, %b {tag = "overflow"} : i32
  %z = constant {value = 0} : tensor<4xi32>
  return
})");
  EXPECT_EQ(p.info("c").constant, 144);
  EXPECT_EQ(p.info("c").divisibility, V{16});
  EXPECT_EQ(p.info("d").constant, 96);
  EXPECT_EQ(p.info("d").divisibility, V{32});
  // Folding past i32's range would not be the value the program computes.
  EXPECT_FALSE(p.info("overflow").constant);
}

TEST(AxisInfo, HintsStrengthenTheFacts) {
  Parsed p(R"(
func @k(%n: i32) {
  %pid = program_id {axis = 0} : i32
  %s = splat %pid : tensor<256xi32>
  %r = make_range {end = 256, start = 0} : tensor<256xi32>
  %x = mul %s, %r : tensor<256xi32>
  %h = add %x, %r {tag = "hinted", tk.max_contiguous = [64], tk.multiple_of = [48]} : tensor<256xi32>
  %m = add %n, %pid {tag = "scalar", tk.multiple_of = [8]} : i32
  %k = add %x, %x {tag = "const", tk.max_constancy = [32]} : tensor<256xi32>
  return
})");
  expectInfo(p.info("hinted"), {64}, {16}, {1});
  EXPECT_EQ(p.info("scalar").divisibility, V{8});
  EXPECT_EQ(p.info("const").constancy, V{32});
}

TEST(AxisInfo, LoopCarriedValuesReachAFixpoint) {
  // The pointer advances by 32 fp16 (64 bytes) a trip: its 16-byte alignment
  // and runs of 64 survive. The counter starts at 0 and adds 3: nothing is
  // known of its divisibility after the join.
  Parsed p(R"(
func @k(%a: ptr<fp16> {divisibility = 16}, %n: i32) {
  %c0 = constant {value = 0} : i32
  %c1 = constant {value = 1} : i32
  %c3 = constant {value = 3} : i32
  %r = make_range {end = 64, start = 0} : tensor<64xi32>
  %sa = splat %a : tensor<64xptr<fp16>>
  %p0 = addptr %sa, %r : tensor<64xptr<fp16>>
  %step = constant {value = 32} : tensor<64xi32>
  %res, %cnt = for %c0, %n, %c1, %p0, %c0 {tag = "loop"} : tensor<64xptr<fp16>>, i32 {
  ^bb0(%i: i32, %p: tensor<64xptr<fp16>>, %k: i32):
    %pn = addptr %p, %step {tag = "next"} : tensor<64xptr<fp16>>
    %kn = add %k, %c3 {tag = "count"} : i32
    yield %pn, %kn
  }
  return
})");
  Operation *loop = p.tagged("loop")->definingOp();
  expectInfo(p.axis->get(loop->result(0)), {64}, {16}, {1});
  EXPECT_EQ(p.axis->get(loop->result(1)).divisibility, V{1});
  EXPECT_FALSE(p.axis->get(loop->result(1)).constant);
  expectInfo(p.info("next"), {64}, {16}, {1});
  EXPECT_EQ(p.axis->alignment(loop->result(0)), 16);
}

TEST(AxisInfo, IfJoinsBothBranches) {
  Parsed p(R"(
func @k(%c: i1) {
  %a = constant {value = 64} : i32
  %b = constant {value = 96} : i32
  %r = if %c {tag = "if"} : i32 {
  ^bb0:
    yield %a
  } {
  ^bb0:
    yield %b
  }
  return
})");
  const AxisInfo &i = p.info("if");
  EXPECT_EQ(i.divisibility, V{32});
  EXPECT_FALSE(i.constant);
}

// --- randomized soundness: build random index expressions with the Builder,
// evaluate them on random programs and check every claim.

struct Sym {
  Value *v;
  std::vector<V> vals; // per environment
};

class RandomExprs {
public:
  static constexpr int64_t kSize = 64;
  static constexpr int kEnvs = 12;

  explicit RandomExprs(unsigned seed) : rng_(seed), ctx_(sm_), b_(ctx_) {
    t_ = ctx_.tensor({kSize}, DType::I64);
    fn_ = b_.createFunction(module_, "k", {ctx_.i64()}, {}, {});
    fn_->argAttrs(0).set("divisibility", 16);
    for (int e = 0; e < kEnvs; ++e) {
      pids_.push_back(std::uniform_int_distribution<int64_t>(0, 999)(rng_));
      args_.push_back(16 * std::uniform_int_distribution<int64_t>(0, 40)(rng_));
    }
  }

  Sym leaf() {
    switch (pick(5)) {
    case 0: {
      int64_t start = pick(3) * 64;
      Value *r = b_.cast(Opcode::SExt, {}, b_.makeRange({}, start, start + kSize), ctx_.i64());
      return fromFn(r, [&](int, int64_t i) { return start + i; });
    }
    case 1: {
      Value *pid = b_.cast(Opcode::SExt, {}, b_.programId({}, 0), ctx_.i64());
      return fromFn(b_.splat({}, pid, {kSize}), [&](int e, int64_t) { return pids_[e]; });
    }
    case 2:
      return fromFn(b_.splat({}, fn_->argument(0), {kSize}),
                    [&](int e, int64_t) { return args_[e]; });
    default: {
      int64_t c = std::uniform_int_distribution<int64_t>(1, 96)(rng_);
      return constant(c);
    }
    }
  }

  Sym constant(int64_t c) {
    return fromFn(b_.constantInt({}, c, t_), [&](int, int64_t) { return c; });
  }

  Sym expr(int depth) {
    if (depth == 0)
      return leaf();
    Sym x = expr(depth - 1);
    switch (pick(9)) {
    case 0:
      return binary(Opcode::Add, x, expr(depth - 1), [](int64_t a, int64_t b) { return a + b; });
    case 1: {
      Sym y = leaf();
      return binary(Opcode::Sub, x, y, [](int64_t a, int64_t b) { return a - b; });
    }
    case 2:
      return binary(Opcode::Mul, x, constant(1 + pick(8)),
                    [](int64_t a, int64_t b) { return a * b; });
    case 3:
    case 4: {
      if (negative(x))
        return x;
      int64_t c = pick(2) ? int64_t(1) << pick(7) : 1 + pick(40);
      Opcode op = pick(2) ? Opcode::Div : Opcode::Rem;
      return binary(op, x, constant(c),
                    [op](int64_t a, int64_t b) { return op == Opcode::Div ? a / b : a % b; });
    }
    case 5:
      return binary(Opcode::And, x, constant((int64_t(1) << pick(7)) - 1),
                    [](int64_t a, int64_t b) { return a & b; });
    case 6:
      return binary(Opcode::Shl, x, constant(pick(4)), [](int64_t a, int64_t b) { return a << b; });
    case 7: {
      if (negative(x))
        return x;
      return binary(Opcode::AShr, x, constant(pick(5)),
                    [](int64_t a, int64_t b) { return a >> b; });
    }
    default: {
      // select(x < y, x, z) exercises cmpi and select together.
      Sym y = expr(depth - 1), z = expr(depth - 1);
      bool strict = pick(2);
      Value *cond = b_.cmpi({}, strict ? "slt" : "sle", x.v, y.v);
      Sym c{cond, {}};
      for (int e = 0; e < kEnvs; ++e) {
        V v(kSize);
        for (int64_t i = 0; i < kSize; ++i)
          v[i] = strict ? x.vals[e][i] < y.vals[e][i] : x.vals[e][i] <= y.vals[e][i];
        c.vals.push_back(v);
      }
      check(c);
      Sym s{b_.select({}, cond, x.v, z.v), {}};
      for (int e = 0; e < kEnvs; ++e) {
        V v(kSize);
        for (int64_t i = 0; i < kSize; ++i)
          v[i] = c.vals[e][i] ? x.vals[e][i] : z.vals[e][i];
        s.vals.push_back(v);
      }
      return s;
    }
    }
  }

  // Every Sym made so far, for checking once the function is complete.
  void check(const Sym &s) { made_.push_back(s); }

  void finish() {
    b_.ret({}, {});
    ASSERT_TRUE(verifyModule(module_, diag_)) << diag_.renderAll();
    AxisInfoAnalysis axis(*fn_);
    for (const Sym &s : made_)
      expectHolds(axis.get(s.v), s);
  }

private:
  int64_t pick(int64_t n) { return std::uniform_int_distribution<int64_t>(0, n - 1)(rng_); }

  template <typename F> Sym fromFn(Value *v, F f) {
    Sym s{v, {}};
    for (int e = 0; e < kEnvs; ++e) {
      V vals(kSize);
      for (int64_t i = 0; i < kSize; ++i)
        vals[i] = f(e, i);
      s.vals.push_back(vals);
    }
    check(s);
    return s;
  }

  template <typename F> Sym binary(Opcode op, const Sym &x, const Sym &y, F f) {
    return fromFn(b_.binary(op, {}, x.v, y.v),
                  [&](int e, int64_t i) { return f(x.vals[e][i], y.vals[e][i]); });
  }

  static bool negative(const Sym &s) {
    for (const V &v : s.vals)
      for (int64_t x : v)
        if (x < 0)
          return true;
    return false;
  }

  static void expectHolds(const AxisInfo &info, const Sym &s) {
    int64_t c = info.contiguity[0], d = info.divisibility[0], k = info.constancy[0];
    ASSERT_EQ(kSize % c, 0) << info.str();
    ASSERT_EQ(kSize % k, 0) << info.str();
    for (const V &v : s.vals) {
      for (int64_t i = 0; i < kSize; ++i) {
        int64_t runStart = i / c * c, constStart = i / k * k;
        EXPECT_EQ(v[i], v[runStart] + (i - runStart)) << info.str() << " at " << i;
        EXPECT_EQ(v[i], v[constStart]) << info.str() << " at " << i;
        if (info.constant) {
          EXPECT_EQ(v[i], *info.constant);
        }
      }
      for (int64_t i = 0; i < kSize; i += c)
        EXPECT_EQ(v[i] % d, 0) << info.str() << " at " << i << ": " << v[i];
    }
  }

  std::mt19937 rng_;
  SourceManager sm_;
  IRContext ctx_;
  DiagnosticEngine diag_{sm_};
  Module module_{ctx_};
  Builder b_;
  Type *t_;
  Function *fn_;
  std::vector<int64_t> pids_, args_;
  std::vector<Sym> made_;
};

TEST(AxisInfo, RandomExpressionsSatisfyEveryClaim) {
  for (unsigned seed = 1; seed <= 200; ++seed) {
    SCOPED_TRACE(seed);
    RandomExprs r(seed);
    r.expr(4);
    r.finish();
    if (testing::Test::HasFailure())
      return;
  }
}

} // namespace
} // namespace tk

// for/while/if with carried values, calls, assert, print, program ids, the
// step budget, and parallel runs giving the same result as sequential ones.
#include "InterpTestUtil.h"

#include <fmt/format.h>

using namespace tk;
using namespace tk::test;

namespace {

class ControlFlowTest : public InterpFixture {};

TEST_F(ControlFlowTest, ForCarriesBlocksAcrossIterations) {
  // acc += x[i*16 : i*16+16] for i in range(lo, hi, step); then out = acc.
  parse(R"(func @k(%x: ptr<fp32>, %o: ptr<fp32>, %lo: i32, %hi: i32, %step: i32) {
  %r = make_range {end = 16, start = 0} : tensor<16xi32>
  %zero = constant {value = 0.0} : tensor<16xfp32>
  %c16 = constant {value = 16} : i32
  %xp = splat %x : tensor<16xptr<fp32>>
  %acc = for %lo, %hi, %step, %zero : tensor<16xfp32> {
  ^bb0(%i: i32, %a: tensor<16xfp32>):
    %base = mul %i, %c16 : i32
    %bs = splat %base : tensor<16xi32>
    %offs = add %bs, %r : tensor<16xi32>
    %q = addptr %xp, %offs : tensor<16xptr<fp32>>
    %v = load %q : tensor<16xfp32>
    %n = add %a, %v : tensor<16xfp32>
    yield %n
  }
  %op = splat %o : tensor<16xptr<fp32>>
  %oq = addptr %op, %r : tensor<16xptr<fp32>>
  store %oq, %acc
  return
}
)");
  HostBuffer x = random("x", DType::F32, 16 * 10), o = HostBuffer::allocate("o", DType::F32, 16);
  struct Range {
    int lo, hi, step;
  };
  for (Range rg : {Range{0, 10, 1}, Range{1, 10, 3}, Range{9, -1, -2}, Range{5, 5, 1}}) {
    ASSERT_TRUE(run("k", {InterpArg::pointer(x), InterpArg::pointer(o), InterpArg::integer(rg.lo),
                          InterpArg::integer(rg.hi), InterpArg::integer(rg.step)}))
        << errors();
    for (int j = 0; j < 16; ++j) {
      float want = 0;
      for (int i = rg.lo; rg.step > 0 ? i < rg.hi : i > rg.hi; i += rg.step)
        want += float(x.get(i * 16 + j));
      EXPECT_EQ(o.get(j), want) << rg.lo << ".." << rg.hi << " by " << rg.step;
    }
  }
  EXPECT_FALSE(run("k", {InterpArg::pointer(x), InterpArg::pointer(o), InterpArg::integer(0),
                         InterpArg::integer(4), InterpArg::integer(0)}));
  EXPECT_NE(errors().find("loop step is 0"), std::string::npos) << errors();
}

TEST_F(ControlFlowTest, WhileAndIfWithResults) {
  // Collatz steps of n, then `if` picks steps or -steps by parity of n.
  parse(R"(func @k(%n: i32, %o: ptr<i32>) {
  %zero = constant {value = 0} : i32
  %one = constant {value = 1} : i32
  %two = constant {value = 2} : i32
  %three = constant {value = 3} : i32
  %v, %s = while %n, %zero : i32, i32 {
  ^bb0(%x: i32, %k: i32):
    %go = cmpi %x, %one {predicate = "ne"} : i1
    condition %go, %x, %k
  } {
  ^bb0(%x: i32, %k: i32):
    %r = rem %x, %two : i32
    %even = cmpi %r, %zero {predicate = "eq"} : i1
    %nx = if %even : i32 {
    ^bb0:
      %h = div %x, %two : i32
      yield %h
    } {
    ^bb0:
      %t = mul %x, %three : i32
      %t1 = add %t, %one : i32
      yield %t1
    }
    %k1 = add %k, %one : i32
    yield %nx, %k1
  }
  %r = rem %n, %two : i32
  %odd = cmpi %r, %one {predicate = "eq"} : i1
  %out = if %odd : i32 {
  ^bb0:
    %neg = neg %s : i32
    yield %neg
  } {
  ^bb0:
    yield %s
  }
  store %o, %out
  return
}
)");
  auto collatz = [](int n) {
    int s = 0;
    for (; n != 1; ++s)
      n = n % 2 ? 3 * n + 1 : n / 2;
    return s;
  };
  HostBuffer o = HostBuffer::allocate("o", DType::I32, 1);
  for (int n : {27, 97, 64, 1}) {
    ASSERT_TRUE(run("k", {InterpArg::integer(n), InterpArg::pointer(o)})) << errors();
    EXPECT_EQ(o.get(0), (n % 2 ? -1 : 1) * collatz(n)) << n;
  }
}

TEST_F(ControlFlowTest, StepBudgetStopsARunawayWhile) {
  parse(R"(func @k(%n: i32) {
  %one = constant {value = 1} : i32
  %v = while %n : i32 {
  ^bb0(%x: i32):
    %go = cmpi %x, %n {predicate = "sge"} : i1
    condition %go, %x
  } {
  ^bb0(%x: i32):
    %y = add %x, %one : i32
    yield %y
  }
  return
}
)");
  InterpretOptions opts;
  opts.maxSteps = 10000;
  EXPECT_FALSE(run("k", {InterpArg::integer(5)}, opts));
  std::string e = errors();
  EXPECT_NE(e.find("exceeded its budget of 10000 operations in program (0, 0, 0)"),
            std::string::npos)
      << e;
  EXPECT_EQ(stats.steps, 10001u);
  opts.maxSteps = 0;
  opts.timeoutSeconds = 0.2;
  EXPECT_FALSE(run("k", {InterpArg::integer(5)}, opts));
  EXPECT_NE(errors().find("exceeded its time limit"), std::string::npos) << errors();
}

TEST_F(ControlFlowTest, CallsAndRecursionLimit) {
  parse(R"(func @sq(%x: fp32) -> fp32 {
  %y = mul %x, %x : fp32
  return %y
}
func @k(%x: fp32, %o: ptr<fp32>) {
  %y = call %x {callee = "sq"} : fp32
  %z = call %y {callee = "sq"} : fp32
  store %o, %z
  return
}
func @rec(%x: fp32) -> fp32 {
  %y = call %x {callee = "rec"} : fp32
  return %y
}
)");
  HostBuffer o = HostBuffer::allocate("o", DType::F32, 1);
  ASSERT_TRUE(run("k", {InterpArg::real(1.5), InterpArg::pointer(o)})) << errors();
  EXPECT_EQ(o.get(0), 1.5 * 1.5 * 1.5 * 1.5);
  EXPECT_FALSE(run("rec", {InterpArg::real(1.0)}));
  EXPECT_NE(errors().find("calls nest deeper than 64"), std::string::npos) << errors();
}

TEST_F(ControlFlowTest, AssertStopsWithMessageAndElement) {
  parse(R"(func @k(%n: i32) {
  %r = make_range {end = 8, start = 0} : tensor<8xi32>
  %ns = splat %n : tensor<8xi32>
  %ok = cmpi %r, %ns {predicate = "slt"} : tensor<8xi1>
  assert %ok {message = "index out of range"}
  return
}
)");
  ASSERT_TRUE(run("k", {InterpArg::integer(8)})) << errors();
  InterpretOptions opts;
  opts.grid = {2, 3, 1};
  EXPECT_FALSE(run("k", {InterpArg::integer(6)}, opts));
  EXPECT_NE(errors().find("test.tkir:5:3: error: assertion failed in program (0, 0, 0), element "
                          "6 (index [6]): index out of range"),
            std::string::npos)
      << errors();
}

TEST_F(ControlFlowTest, PrintWritesToTheSinkInProgramOrder) {
  parse(R"(func @k() {
  %pid = program_id {axis = 0} : i32
  %y = program_id {axis = 1} : i32
  %np = num_programs {axis = 0} : i32
  %r = make_range {end = 2, start = 0} : tensor<2xi32>
  %ps = splat %pid : tensor<2xi32>
  %v = add %r, %ps : tensor<2xi32>
  print %v {prefix = "v: "}
  print %np, %y {prefix = "n "}
  print %pid {prefix = "h ", hex = true}
  return
}
)");
  std::string out;
  InterpretOptions opts;
  opts.grid = {2, 2, 1};
  opts.printOutput = &out;
  ASSERT_TRUE(run("k", {}, opts)) << errors();
  EXPECT_NE(out.find("pid (1, 1, 0) idx (1) v: 2\n"), std::string::npos) << out;
  EXPECT_NE(out.find("pid (0, 1, 0) n (operand 0) 2\npid (0, 1, 0) n (operand 1) 1\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("pid (1, 0, 0) h 0x00000001\n"), std::string::npos) << out;
  // Parallel runs gather the same text in the same order.
  std::string parallel;
  opts.printOutput = &parallel;
  opts.numThreads = 3;
  ASSERT_TRUE(run("k", {}, opts)) << errors();
  EXPECT_EQ(parallel, out);
}

TEST_F(ControlFlowTest, ParallelProgramsMatchSequentialOnes) {
  // Each of 64 programs writes a 3-D program-id signature into its slot.
  parse(R"(func @k(%o: ptr<i32>) {
  %x = program_id {axis = 0} : i32
  %y = program_id {axis = 1} : i32
  %z = program_id {axis = 2} : i32
  %nx = num_programs {axis = 0} : i32
  %ny = num_programs {axis = 1} : i32
  %zy = mul %z, %ny : i32
  %zyy = add %zy, %y : i32
  %lin0 = mul %zyy, %nx : i32
  %lin = add %lin0, %x : i32
  %c100 = constant {value = 100} : i32
  %a = mul %z, %c100 : i32
  %b = mul %y, %c100 : i32
  %c10 = constant {value = 10} : i32
  %bb = mul %b, %c10 : i32
  %s0 = add %a, %bb : i32
  %s = add %s0, %x : i32
  %p = addptr %o, %lin : ptr<i32>
  store %p, %s
  return
}
)");
  HostBuffer seq = HostBuffer::allocate("o", DType::I32, 64),
             par = HostBuffer::allocate("o", DType::I32, 64);
  InterpretOptions opts;
  opts.grid = {4, 4, 4};
  ASSERT_TRUE(run("k", {InterpArg::pointer(seq)}, opts)) << errors();
  opts.numThreads = 4;
  ASSERT_TRUE(run("k", {InterpArg::pointer(par)}, opts)) << errors();
  for (int i = 0; i < 64; ++i) {
    int x = i % 4, y = (i / 4) % 4, z = i / 16;
    EXPECT_EQ(seq.get(i), z * 100 + y * 1000 + x);
    EXPECT_EQ(par.get(i), seq.get(i));
  }
  EXPECT_EQ(stats.programs, 64u);
}

TEST_F(ControlFlowTest, ShapeOpsTransBroadcastReshape) {
  parse(R"(func @k(%x: ptr<i16>, %o: ptr<i16>) {
  %r = make_range {end = 8, start = 0} : tensor<8xi32>
  %xp = splat %x : tensor<8xptr<i16>>
  %xq = addptr %xp, %r : tensor<8xptr<i16>>
  %v = load %xq : tensor<8xi16>
  %m = reshape %v : tensor<2x4xi16>
  %t = trans %m {order = [1, 0]} : tensor<4x2xi16>
  %e = expand_dims %t {axis = 0} : tensor<1x4x2xi16>
  %b = broadcast %e : tensor<3x4x2xi16>
  %f = reshape %b : tensor<24xi16>
  %r24 = make_range {end = 32, start = 0} : tensor<32xi32>
  %op = splat %o : tensor<24xptr<i16>>
  %rr = reshape %r24 : tensor<32xi32>
  return
}
)");
  // (the verifier rejects nothing above but the last two lines are unused;
  // the real check is below)
  module.reset();
  parse(R"(func @k(%x: ptr<i16>, %o: ptr<i16>) {
  %r = make_range {end = 8, start = 0} : tensor<8xi32>
  %xp = splat %x : tensor<8xptr<i16>>
  %xq = addptr %xp, %r : tensor<8xptr<i16>>
  %v = load %xq : tensor<8xi16>
  %m = reshape %v : tensor<2x4xi16>
  %t = trans %m {order = [1, 0]} : tensor<4x2xi16>
  %e = expand_dims %t {axis = 0} : tensor<1x4x2xi16>
  %b = broadcast %e : tensor<2x4x2xi16>
  %f = reshape %b : tensor<16xi16>
  %r16 = make_range {end = 16, start = 0} : tensor<16xi32>
  %op = splat %o : tensor<16xptr<i16>>
  %oq = addptr %op, %r16 : tensor<16xptr<i16>>
  store %oq, %f
  return
}
)");
  HostBuffer x = random("x", DType::I16, 8, -1000, 1000),
             o = HostBuffer::allocate("o", DType::I16, 16);
  ASSERT_TRUE(run("k", {InterpArg::pointer(x), InterpArg::pointer(o)})) << errors();
  for (int rep = 0; rep < 2; ++rep)
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 2; ++j)
        EXPECT_EQ(o.get(rep * 8 + i * 2 + j), x.get(j * 4 + i));
}

} // namespace

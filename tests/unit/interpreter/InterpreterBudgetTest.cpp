// The interpreter's budgets on what a run may take from the host: the memory
// its blocks hold (InterpretOptions::maxMemoryBytes), checked before the op
// that would go past it, with the op, its type and the figures in the error;
// and the interruption poll (InterpretOptions::interrupted) that lets Ctrl-C
// stop a run that would never end, on one thread and on several.
#include "InterpTestUtil.h"

#include <fmt/format.h>

#include <chrono>
#include <thread>

using namespace tk;
using namespace tk::test;

namespace {

class BudgetTest : public InterpFixture {};

// The issue's case: a 2^30-element block (4 GiB of i32) reduced to one
// number. Refused at the make_range, before anything is allocated.
const char *kHugeReduction = R"(func @k(%o: ptr<i32>) {
  %r = make_range {end = 1073741824, start = 0} : tensor<1073741824xi32>
  %s = reduce %r {axis = 0, kind = "sum"} : i32
  store %o, %s
  return
}
)";

TEST_F(BudgetTest, AHugeBlockIsRefusedAtTheOpThatMakesIt) {
  parse(kHugeReduction);
  HostBuffer o = HostBuffer::allocate("o", DType::I32, 1);
  EXPECT_FALSE(run("k", {InterpArg::pointer(o)}));
  std::string e = errors();
  EXPECT_NE(e.find("test.tkir:2:"), std::string::npos) << e;
  EXPECT_NE(e.find("'make_range' in program (0, 0, 0) makes tensor<1073741824xi32> (4 GiB) while "
                   "the run's blocks hold 0 bytes: over the interpreter's memory budget of 1 GiB"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("TK_INTERPRET_MAX_MEMORY"), std::string::npos) << e;
  EXPECT_EQ(stats.steps, 1u) << "stopped at the first op";
  EXPECT_FALSE(o.storedByKernel());
}

// Five 512 KiB blocks alive at once: with a 2 MiB budget the first four fit
// (exactly 2 MiB) and the fifth is refused, naming what is already held.
TEST_F(BudgetTest, BlocksAliveAtOnceAddUp) {
  std::string text = "func @k(%o: ptr<i32>) {\n";
  for (int i = 0; i < 5; ++i)
    text +=
        fmt::format("  %r{} = make_range {{end = 131072, start = 0}} : tensor<131072xi32>\n", i);
  text += "  %a = reduce %r0 {axis = 0, kind = \"sum\"} : i32\n";
  for (int i = 1; i < 5; ++i)
    text += fmt::format("  %s{} = reduce %r{} {{axis = 0, kind = \"sum\"}} : i32\n", i, i);
  text += "  store %o, %a\n  return\n}\n";
  parse(text);
  HostBuffer o = HostBuffer::allocate("o", DType::I32, 1);
  InterpretOptions opts;
  opts.maxMemoryBytes = 2 << 20;
  EXPECT_FALSE(run("k", {InterpArg::pointer(o)}, opts));
  std::string e = errors();
  EXPECT_NE(e.find("test.tkir:6:"), std::string::npos) << "the fifth make_range: " << e;
  EXPECT_NE(e.find("makes tensor<131072xi32> (512 KiB) while the run's blocks hold 2 MiB: over "
                   "the interpreter's memory budget of 2 MiB"),
            std::string::npos)
      << e;
  // Without the fifth block's neighbours alive, the same budget suffices.
  opts.maxMemoryBytes = 3 << 20;
  EXPECT_TRUE(run("k", {InterpArg::pointer(o)}, opts)) << errors();
  EXPECT_EQ(o.get(0), 131072.0 * 131071 / 2 - 4294967296.0 * 2);
}

// A loop that makes three 512 KiB blocks per iteration holds one
// iteration's (each freed when the next iteration's replaces it in its
// slot), so 100 iterations, 150 MiB made in all, run within a 3 MiB budget:
// freed values are taken off the count.
TEST_F(BudgetTest, FreedBlocksAreTakenOff) {
  parse(R"(func @k(%o: ptr<i32>) {
  %lo = constant {value = 0} : i32
  %hi = constant {value = 100} : i32
  %one = constant {value = 1} : i32
  %zero = constant {value = 0} : i32
  %acc = for %lo, %hi, %one, %zero : i32 {
  ^bb0(%i: i32, %a: i32):
    %r = make_range {end = 131072, start = 0} : tensor<131072xi32>
    %is = splat %i : tensor<131072xi32>
    %v = add %r, %is : tensor<131072xi32>
    %m = reduce %v {axis = 0, kind = "max"} : i32
    %n = add %a, %m : i32
    yield %n
  }
  store %o, %acc
  return
}
)");
  HostBuffer o = HostBuffer::allocate("o", DType::I32, 1);
  InterpretOptions opts;
  opts.maxMemoryBytes = 3 << 20;
  ASSERT_TRUE(run("k", {InterpArg::pointer(o)}, opts)) << errors();
  // sum over i of (131071 + i)
  EXPECT_EQ(o.get(0), 100.0 * 131071 + 99.0 * 100 / 2);
  // 0 means no limit; a budget below one block refuses the first.
  opts.maxMemoryBytes = 0;
  EXPECT_TRUE(run("k", {InterpArg::pointer(o)}, opts)) << errors();
  opts.maxMemoryBytes = 256 << 10;
  EXPECT_FALSE(run("k", {InterpArg::pointer(o)}, opts));
  EXPECT_NE(errors().find("'make_range' in program (0, 0, 0) makes tensor<131072xi32> (512 KiB)"),
            std::string::npos)
      << errors();
}

// Programs on several threads share the one budget: each program holds at
// most three 512 KiB blocks, so 8 programs on 4 threads never need more than
// 6 MiB, plus the 32-byte output the budget counts too (64 KiB of room: with
// exactly 6 MiB, four threads each making their third block at once were
// refused, as they should be).
TEST_F(BudgetTest, ThreadsShareTheBudget) {
  parse(R"(func @k(%o: ptr<i32>) {
  %pid = program_id {axis = 0} : i32
  %r = make_range {end = 131072, start = 0} : tensor<131072xi32>
  %ps = splat %pid : tensor<131072xi32>
  %v = add %r, %ps : tensor<131072xi32>
  %m = reduce %v {axis = 0, kind = "max"} : i32
  %q = addptr %o, %pid : ptr<i32>
  store %q, %m
  return
}
)");
  HostBuffer o = HostBuffer::allocate("o", DType::I32, 8);
  InterpretOptions opts;
  opts.grid = {8, 1, 1};
  opts.numThreads = 4;
  opts.maxMemoryBytes = (6 << 20) + (64 << 10);
  ASSERT_TRUE(run("k", {InterpArg::pointer(o)}, opts)) << errors();
  for (int p = 0; p < 8; ++p)
    EXPECT_EQ(o.get(p), 131071.0 + p);
  // One program's two blocks alone exceed a 768 KiB budget, on any thread.
  opts.maxMemoryBytes = 768 << 10;
  EXPECT_FALSE(run("k", {InterpArg::pointer(o)}, opts));
  EXPECT_NE(errors().find("over the interpreter's memory budget of 768 KiB"), std::string::npos)
      << errors();
}

// An endless loop with the step budget off: only the poll stops it. It is
// called on the calling thread, about every 10 ms.
const char *kEndless = R"(func @k(%n: i32) {
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
)";

TEST_F(BudgetTest, TheInterruptPollStopsAnEndlessRun) {
  parse(kEndless);
  for (unsigned threads : {1u, 4u}) {
    SCOPED_TRACE(threads);
    InterpretOptions opts;
    opts.maxSteps = 0;
    opts.numThreads = threads;
    opts.grid = {threads == 1 ? 1 : 8, 1, 1};
    std::thread::id caller = std::this_thread::get_id();
    int polls = 0;
    bool onCaller = true;
    opts.interrupted = [&] {
      onCaller = onCaller && std::this_thread::get_id() == caller;
      return ++polls == 5;
    };
    auto start = std::chrono::steady_clock::now();
    EXPECT_FALSE(run("k", {InterpArg::integer(5)}, opts));
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_TRUE(stats.interrupted);
    EXPECT_EQ(polls, 5);
    EXPECT_TRUE(onCaller) << "polled on the calling thread only";
    EXPECT_LT(seconds, 5.0) << "five polls of about 10 ms each";
    std::string e = errors();
    if (threads == 1) {
      EXPECT_NE(e.find("test.tkir:"), std::string::npos) << e;
    }
    EXPECT_NE(e.find(threads == 1 ? "the run was interrupted in program (0, 0, 0) after "
                                  : "the run was interrupted after 0 of 8 programs"),
              std::string::npos)
        << e;
  }
}

} // namespace

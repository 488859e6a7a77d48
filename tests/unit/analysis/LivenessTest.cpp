// Liveness of shared-memory users (analysis/Liveness.h) on hand-written IR:
// the program-order numbering (a region op before, and spanning, its
// regions), a buffer widened to the end of each loop around a use that the
// alloc is outside of and to nothing more, a buffer that flows into control
// flow live forever, and a cp.async ring live to the closing
// `async_wait {pending = 0}` in its own block, else forever.
#include "analysis/Liveness.h"
#include "tests/unit/ir/IRTestUtil.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

namespace tk {
namespace {

constexpr const char *k1D = "blocked<size = [1], threads = [32], warps = [4], order = [0]>";
constexpr const char *k1D4 = "blocked<size = [4], threads = [32], warps = [4], order = [0]>";
constexpr const char *kFlat = "shared<vec = 1, per_phase = 1, max_phase = 1, order = [0]>";

constexpr const char *kPtrs =
    "blocked<size = [1, 1], threads = [1, 32], warps = [1, 4], order = [1, 0]>";

// `body` as the body of @k(%x: 1024 floats, %y: 512 floats, %lo, %hi, %step:
// i32, %c: i1, %p: 2x256 pointers); in `body`, {L} and {L4} are two 1-D
// layouts and {S} a flat shared layout.
struct Fixture {
  test::ParsedIR ir;
  Function *fn = nullptr;

  bool parse(const std::string &body) {
    std::string ops = fmt::format(fmt::runtime(body), fmt::arg("L", k1D), fmt::arg("L4", k1D4),
                                  fmt::arg("S", kFlat));
    std::string text = fmt::format("func @k(%x: tensor<1024xfp32, {0}>, %y: tensor<512xfp32, {0}>, "
                                   "%lo: i32, %hi: i32, %step: i32, %c: i1, "
                                   "%p: tensor<2x256xptr<fp32>, {1}>) attributes {{num_warps = "
                                   "4}} {{\n{2}  return\n}}\n",
                                   k1D, kPtrs, ops);
    if (!ir.parse(text) || !ir.verify())
      return false;
    fn = ir.module->functions().front().get();
    return true;
  }

  // The n-th op of `opcode`, in program order.
  static Operation *nth(const Liveness &live, Opcode opcode, int n = 0) {
    for (Operation *op : live.order())
      if (op->is(opcode) && n-- == 0)
        return op;
    return nullptr;
  }
};

TEST(Liveness, HeaderExample) {
  Fixture f;
  ASSERT_TRUE(f.parse("  %buf = local_alloc %x : tensor<1024xfp32, {S}>\n"
                      "  for %lo, %hi, %step {{\n"
                      "  ^bb0(%i: i32):\n"
                      "    %v = local_load %buf : tensor<1024xfp32, {L}>\n"
                      "    %cv = convert_layout %v : tensor<1024xfp32, {L4}>\n"
                      "    yield\n"
                      "  }}\n"
                      "  %r = reduce %y {{axis = 0, kind = \"sum\"}} : fp32\n"))
      << f.ir.errors();
  Liveness live(*f.fn);
  ASSERT_EQ(live.order().size(), 7u);
  for (size_t i = 0; i < live.order().size(); ++i) {
    EXPECT_EQ(live.first(*live.order()[i]), int64_t(i));
    if (live.order()[i]->numRegions() == 0) {
      EXPECT_EQ(live.last(*live.order()[i]), int64_t(i));
    }
  }
  Operation *alloc = f.nth(live, Opcode::LocalAlloc);
  Operation *loop = f.nth(live, Opcode::For);
  Operation *convert = f.nth(live, Opcode::ConvertLayout);
  Operation *reduce = f.nth(live, Opcode::Reduce);
  ASSERT_TRUE(alloc && loop && convert && reduce);
  EXPECT_EQ(live.first(*alloc), 0);
  EXPECT_EQ(live.first(*loop), 1);
  EXPECT_EQ(live.last(*loop), 4); // the yield
  EXPECT_EQ(live.first(*convert), 3);
  EXPECT_EQ(live.first(*reduce), 5);
  // The load at 2 is inside the loop, which the alloc is outside of.
  EXPECT_EQ(live.bufferEnd(*alloc), 4);
}

TEST(Liveness, WidenedToEveryLoopAroundTheUseUpToTheAlloc) {
  Fixture f;
  // %a outside both loops, used in the inner one: live to the outer loop's
  // end. %b allocated in the outer body, used in the inner loop: live to the
  // inner loop's end only. %d in the inner body: its last use.
  ASSERT_TRUE(f.parse("  %a = local_alloc %x : tensor<1024xfp32, {S}>\n"           // 0
                      "  for %lo, %hi, %step {{\n"                                 // 1
                      "  ^bb0(%i: i32):\n"                                         //
                      "    %b = local_alloc %x : tensor<1024xfp32, {S}>\n"         // 2
                      "    for %lo, %hi, %step {{\n"                               // 3
                      "    ^bb0(%j: i32):\n"                                       //
                      "      %d = local_alloc %x : tensor<1024xfp32, {S}>\n"       // 4
                      "      %va = local_load %a : tensor<1024xfp32, {L}>\n"       // 5
                      "      %vb = local_load %b : tensor<1024xfp32, {L}>\n"       // 6
                      "      %vd = local_load %d : tensor<1024xfp32, {L}>\n"       // 7
                      "      %r = reduce %y {{axis = 0, kind = \"sum\"}} : fp32\n" // 8
                      "      yield\n"                                              // 9
                      "    }}\n"                                                   //
                      "    %s = reduce %y {{axis = 0, kind = \"max\"}} : fp32\n"   // 10
                      "    yield\n"                                                // 11
                      "  }}\n"))                                                   // 12: return
      << f.ir.errors();
  Liveness live(*f.fn);
  ASSERT_EQ(live.order().size(), 13u);
  Operation *outer = f.nth(live, Opcode::For, 0), *inner = f.nth(live, Opcode::For, 1);
  EXPECT_EQ(live.last(*outer), 11);
  EXPECT_EQ(live.last(*inner), 9);
  EXPECT_EQ(live.bufferEnd(*f.nth(live, Opcode::LocalAlloc, 0)), 11);
  EXPECT_EQ(live.bufferEnd(*f.nth(live, Opcode::LocalAlloc, 1)), 9);
  EXPECT_EQ(live.bufferEnd(*f.nth(live, Opcode::LocalAlloc, 2)), 7);
}

TEST(Liveness, UnusedBufferLivesAtItsAllocOnly) {
  Fixture f;
  ASSERT_TRUE(f.parse("  %r = reduce %y {{axis = 0, kind = \"sum\"}} : fp32\n"
                      "  %a = local_alloc %x : tensor<1024xfp32, {S}>\n"))
      << f.ir.errors();
  Liveness live(*f.fn);
  EXPECT_EQ(live.bufferEnd(*f.nth(live, Opcode::LocalAlloc)), 1);
}

TEST(Liveness, BufferFlowingIntoControlFlowLivesForever) {
  Fixture f;
  // Yielded out of an `if`: the result could be read anywhere after.
  ASSERT_TRUE(f.parse("  %a = local_alloc %x : tensor<1024xfp32, {S}>\n"
                      "  %b = local_alloc %x : tensor<1024xfp32, {S}>\n"
                      "  %s = if %c : tensor<1024xfp32, {S}> {{\n"
                      "  ^bb0:\n"
                      "    yield %a\n"
                      "  }} {{\n"
                      "  ^bb0:\n"
                      "    yield %b\n"
                      "  }}\n"
                      "  %v = local_load %s : tensor<1024xfp32, {L}>\n"))
      << f.ir.errors();
  Liveness live(*f.fn);
  EXPECT_EQ(live.bufferEnd(*f.nth(live, Opcode::LocalAlloc, 0)), Liveness::kForever);
  EXPECT_EQ(live.bufferEnd(*f.nth(live, Opcode::LocalAlloc, 1)), Liveness::kForever);
}

// A ring: a buffer async_copy writes in a loop; `after` follows the loop.
std::string ringProgram(const std::string &after) {
  return "  %ring = local_alloc : tensor<2x2x256xfp32, shared<vec = 1, per_phase = 1, max_phase = "
         "1, order = [2, 1, 0]>>\n"
         "  for %lo, %hi, %step {{\n"
         "  ^bb0(%i: i32):\n"
         "    async_copy %ring, %i, %p\n"
         "    yield\n"
         "  }}\n" +
         after + "  %cv = convert_layout %x : tensor<1024xfp32, {L4}>\n";
}

TEST(Liveness, RingLivesToItsClosingWait) {
  Fixture f;
  ASSERT_TRUE(f.parse(ringProgram("  %r = reduce %y {{axis = 0, kind = \"sum\"}} : fp32\n"
                                  "  async_wait {{pending = 0}}\n")))
      << f.ir.errors();
  Liveness live(*f.fn);
  Operation *wait = f.nth(live, Opcode::AsyncWait);
  ASSERT_TRUE(wait);
  // Not the loop's end (its last use), nor the reduce between: the wait.
  EXPECT_EQ(live.bufferEnd(*f.nth(live, Opcode::LocalAlloc)), live.first(*wait));
  EXPECT_GT(live.first(*wait), live.last(*f.nth(live, Opcode::For)) + 1);
}

TEST(Liveness, RingWithoutAClosingWaitLivesForever) {
  for (const char *after : {"  async_wait {{pending = 1}}\n", "",
                            "  if %c {{\n  ^bb0:\n    async_wait {{pending = 0}}\n    yield\n"
                            "  }} {{\n  ^bb0:\n    yield\n  }}\n"}) {
    Fixture f;
    ASSERT_TRUE(f.parse(ringProgram(after))) << f.ir.errors();
    Liveness live(*f.fn);
    EXPECT_EQ(live.bufferEnd(*f.nth(live, Opcode::LocalAlloc)), Liveness::kForever) << after;
  }
}

} // namespace
} // namespace tk

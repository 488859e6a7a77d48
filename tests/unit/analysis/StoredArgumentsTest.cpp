// The arguments a kernel may write through (analysis/StoredArguments.h), on
// hand-written IR: pointers followed through addptr/splat/select, through
// the values a for loop carries, a while loop passes on and an if yields,
// into a called helper that stores; loads alone store nothing; a pointer
// loaded from memory is attributed to no argument; the first store in
// program order is the one named. (A pointer made from an integer loaded
// from a table, too.)
#include "analysis/StoredArguments.h"
#include "tests/unit/ir/IRTestUtil.h"

#include <gtest/gtest.h>

namespace tk {
namespace {

// Which arguments of @k are stored through, as 0/1 per argument, and the
// line of the op named for each (0: none).
struct Answer {
  std::vector<int> stored;
  std::vector<unsigned> lines;
};

Answer storedOf(const std::string &text) {
  test::ParsedIR ir;
  EXPECT_TRUE(ir.parse(text) && ir.verify()) << ir.errors();
  Answer a;
  if (!ir.module)
    return a;
  Function *k = ir.module->lookup("k");
  for (Operation *op : storedArguments(*ir.module, *k)) {
    a.stored.push_back(op != nullptr);
    a.lines.push_back(op ? op->loc().line : 0);
  }
  return a;
}

TEST(StoredArgumentsTest, AddptrSplatAndSelectCarryTheArgument) {
  Answer a = storedOf(R"(func @k(%x: ptr<fp32>, %y: ptr<fp32>, %o: ptr<fp32>, %c: i1, %n: i32) {
  %r = make_range {end = 16, start = 0} : tensor<16xi32>
  %xp = splat %x : tensor<16xptr<fp32>>
  %xq = addptr %xp, %r : tensor<16xptr<fp32>>
  %v = load %xq : tensor<16xfp32>
  %yo = select %c, %y, %o : ptr<fp32>
  %p = splat %yo : tensor<16xptr<fp32>>
  %q = addptr %p, %r : tensor<16xptr<fp32>>
  store %q, %v
  return
}
)");
  EXPECT_EQ(a.stored, (std::vector<int>{0, 1, 1, 0, 0}));
  EXPECT_EQ(a.lines[1], 9u);
}

TEST(StoredArgumentsTest, LoopsAndIfsCarryPointers) {
  // %o is advanced by a for loop and stored through inside it; %w goes round
  // a while loop and out of it; %z leaves an if; %x is only read.
  Answer a =
      storedOf(R"(func @k(%x: ptr<fp32>, %o: ptr<fp32>, %w: ptr<fp32>, %z: ptr<fp32>, %c: i1) {
  %lo = constant {value = 0} : i32
  %hi = constant {value = 4} : i32
  %one = constant {value = 1} : i32
  %v = load %x : fp32
  %end = for %lo, %hi, %one, %o : ptr<fp32> {
  ^bb0(%i: i32, %p: ptr<fp32>):
    store %p, %v
    %next = addptr %p, %one : ptr<fp32>
    yield %next
  }
  %wp, %k = while %w, %lo : ptr<fp32>, i32 {
  ^bb0(%a: ptr<fp32>, %j: i32):
    %go = cmpi %j, %hi {predicate = "slt"} : i1
    condition %go, %a, %j
  } {
  ^bb0(%a: ptr<fp32>, %j: i32):
    %a2 = addptr %a, %one : ptr<fp32>
    %j2 = add %j, %one : i32
    yield %a2, %j2
  }
  store %wp, %v
  %zz = if %c : ptr<fp32> {
  ^bb0:
    yield %z
  } {
  ^bb0:
    yield %z
  }
  %old = atomic_rmw %zz, %v {kind = "add"} : fp32
  return
}
)");
  EXPECT_EQ(a.stored, (std::vector<int>{0, 1, 1, 1, 0}));
  EXPECT_EQ(a.lines, (std::vector<unsigned>{0, 8, 22, 30, 0}));
}

TEST(StoredArgumentsTest, AHelperThatStoresCountsAtTheCall) {
  Answer a = storedOf(R"(func @put(%p: ptr<fp32>, %q: ptr<fp32>, %v: fp32) {
  store %p, %v
  return
}
func @k(%x: ptr<fp32>, %o: ptr<fp32>) {
  %v = load %x : fp32
  call %o, %x, %v {callee = "put"}
  return
}
)");
  EXPECT_EQ(a.stored, (std::vector<int>{0, 1}));
  EXPECT_EQ(a.lines[1], 7u);
}

TEST(StoredArgumentsTest, APointerLoadedFromMemoryBelongsToNoArgument) {
  Answer a = storedOf(R"(func @k(%table: ptr<i64>, %x: ptr<fp32>) {
  %a = load %table : i64
  %p = inttoptr %a : ptr<fp32>
  %v = load %x : fp32
  store %p, %v
  return
}
)");
  EXPECT_EQ(a.stored, (std::vector<int>{0, 0}));
}

} // namespace
} // namespace tk

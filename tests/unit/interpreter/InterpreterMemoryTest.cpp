// Loads, stores, masks, atomics, and the memory checks: out-of-bounds
// accesses and reads of never-written memory are reported at the op's line
// with the program id, element index, address and nearest buffer.
#include "InterpTestUtil.h"

#include <fmt/format.h>

using namespace tk;
using namespace tk::test;

namespace {

class MemoryTest : public InterpFixture {};

// out[i] = x[i] * 2 for i < n, 64 elements per program: the tutorial shape.
const char *kMaskedCopy = R"(func @k(%x: ptr<fp32>, %o: ptr<fp32>, %n: i32) {
  %pid = program_id {axis = 0} : i32
  %c64 = constant {value = 64} : i32
  %start = mul %pid, %c64 : i32
  %range = make_range {end = 64, start = 0} : tensor<64xi32>
  %s = splat %start : tensor<64xi32>
  %offs = add %s, %range : tensor<64xi32>
  %ns = splat %n : tensor<64xi32>
  %mask = cmpi %offs, %ns {predicate = "slt"} : tensor<64xi1>
  %xp = splat %x : tensor<64xptr<fp32>>
  %xq = addptr %xp, %offs : tensor<64xptr<fp32>>
  %v = load %xq, %mask : tensor<64xfp32>
  %two = constant {value = 2.0} : tensor<64xfp32>
  %w = mul %v, %two : tensor<64xfp32>
  %op = splat %o : tensor<64xptr<fp32>>
  %oq = addptr %op, %offs : tensor<64xptr<fp32>>
  store %oq, %w, %mask
  return
}
)";

TEST_F(MemoryTest, MaskedEdgesStayInBounds) {
  parse(kMaskedCopy);
  const int64_t n = 200; // 4 programs of 64, the last one partly masked
  HostBuffer x = random("x", DType::F32, n), o = HostBuffer::allocate("o", DType::F32, n);
  InterpretOptions opts;
  opts.grid = {4, 1, 1};
  ASSERT_TRUE(run("k", {InterpArg::pointer(x), InterpArg::pointer(o), InterpArg::integer(n)}, opts))
      << errors();
  for (int64_t i = 0; i < n; ++i)
    EXPECT_EQ(o.get(i), 2 * x.get(i));
  EXPECT_TRUE(o.storedByKernel());
  EXPECT_FALSE(x.storedByKernel());
  EXPECT_EQ(stats.programs, 4u);
}

TEST_F(MemoryTest, OutOfBoundsLoadNamesLineProgramElementAndBuffer) {
  parse(kMaskedCopy);
  const int64_t n = 200;
  HostBuffer x = random("x", DType::F32, n), o = HostBuffer::allocate("o", DType::F32, n);
  InterpretOptions opts;
  opts.grid = {4, 1, 1};
  // The kernel is told n = 210 but x holds 200: program 3's elements 8..17
  // read past x. The first is element 8 (offset 200).
  EXPECT_FALSE(
      run("k", {InterpArg::pointer(x), InterpArg::pointer(o), InterpArg::integer(210)}, opts));
  std::string e = errors();
  EXPECT_NE(e.find("test.tkir:12:"), std::string::npos) << e; // the load's line
  EXPECT_NE(e.find("out-of-bounds load in program (3, 0, 0)"), std::string::npos) << e;
  EXPECT_NE(e.find("element 8 of the block [64] (index [8])"), std::string::npos) << e;
  EXPECT_NE(e.find(fmt::format("at 0x{:x}", x.address() + 800)), std::string::npos) << e;
  EXPECT_NE(e.find("nearest buffer 'x'"), std::string::npos) << e;
  EXPECT_NE(e.find("starts 0 bytes past its end (element 200 of a 200-element buffer)"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("%v = load"), std::string::npos) << e; // the source line is shown
  // Programs 0..2 ran; nothing of program 3 was stored.
  EXPECT_EQ(stats.programs, 3u);
}

TEST_F(MemoryTest, OutOfBoundsStoreBeforeTheStart) {
  parse(R"(func @k(%o: ptr<i32>) {
  %range = make_range {end = 8, start = 0} : tensor<8xi32>
  %m = constant {value = -3} : tensor<8xi32>
  %offs = add %range, %m : tensor<8xi32>
  %p = splat %o : tensor<8xptr<i32>>
  %q = addptr %p, %offs : tensor<8xptr<i32>>
  store %q, %range
  return
}
)");
  std::vector<int32_t> mem(64, 1);
  // Register only the middle: the store's first element lands 12 bytes before.
  HostBuffer o = HostBuffer::wrap("out", mem.data() + 32, 32, DType::I32);
  EXPECT_FALSE(run("k", {InterpArg::pointer(o)}));
  std::string e = errors();
  EXPECT_NE(e.find("test.tkir:7:3: error: out-of-bounds store in program (0, 0, 0): element 0 "
                   "of the block [8] (index [0]) writes 4 bytes"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("nearest buffer 'out'"), std::string::npos) << e;
  EXPECT_NE(e.find("starts 12 bytes before its start"), std::string::npos) << e;
  // A failing store writes nothing, not even its in-bounds elements.
  for (int i = 32; i < 40; ++i)
    EXPECT_EQ(mem[i], 1);
}

TEST_F(MemoryTest, NearestOfSeveralBuffersAndMultiDimIndex) {
  parse(R"(func @k(%a: ptr<fp32>, %b: ptr<fp32>) {
  %r = make_range {end = 4, start = 0} : tensor<4xi32>
  %c = make_range {end = 8, start = 0} : tensor<8xi32>
  %r2 = expand_dims %r {axis = 1} : tensor<4x1xi32>
  %c2 = expand_dims %c {axis = 0} : tensor<1x8xi32>
  %rb = broadcast %r2 : tensor<4x8xi32>
  %cb = broadcast %c2 : tensor<4x8xi32>
  %eight = constant {value = 8} : tensor<4x8xi32>
  %rs = mul %rb, %eight : tensor<4x8xi32>
  %offs = add %rs, %cb : tensor<4x8xi32>
  %p = splat %b : tensor<4x8xptr<fp32>>
  %q = addptr %p, %offs : tensor<4x8xptr<fp32>>
  %v = load %q : tensor<4x8xfp32>
  return
}
)");
  HostBuffer a = random("a", DType::F32, 64), b = random("b", DType::F32, 30);
  EXPECT_FALSE(run("k", {InterpArg::pointer(a), InterpArg::pointer(b)}));
  std::string e = errors();
  EXPECT_NE(e.find("element 30 of the block [4, 8] (index [3, 6])"), std::string::npos) << e;
  EXPECT_NE(e.find("nearest buffer 'b'"), std::string::npos) << e;
}

TEST_F(MemoryTest, ReadOfNeverWrittenMemoryIsReported) {
  parse(R"(func @k(%o: ptr<fp32>) {
  %range = make_range {end = 16, start = 0} : tensor<16xi32>
  %p = splat %o : tensor<16xptr<fp32>>
  %q = addptr %p, %range : tensor<16xptr<fp32>>
  %v = load %q : tensor<16xfp32>
  return
}
)");
  HostBuffer o = HostBuffer::allocate("out", DType::F32, 16);
  for (int i = 0; i < 16; ++i)
    if (i != 5)
      o.set(i, i + 1);
  EXPECT_FALSE(run("k", {InterpArg::pointer(o)}));
  std::string e = errors();
  EXPECT_NE(e.find("test.tkir:5:3: error: load of never-written memory in program (0, 0, 0): "
                   "element 5 of the block [16] (index [5])"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("byte 20 of buffer 'out'"), std::string::npos) << e;
  // Wrapped (caller-owned) memory is trusted.
  std::vector<float> mem(16, 1.5f);
  HostBuffer w = HostBuffer::wrap("w", mem.data(), 64, DType::F32);
  EXPECT_TRUE(run("k", {InterpArg::pointer(w)})) << errors();
}

TEST_F(MemoryTest, MaskedLanesTakeOtherAndNeverTouchMemory) {
  parse(R"(func @k(%x: ptr<fp16>, %o: ptr<fp16>) {
  %range = make_range {end = 32, start = 0} : tensor<32xi32>
  %c = constant {value = 10} : tensor<32xi32>
  %mask = cmpi %range, %c {predicate = "slt"} : tensor<32xi1>
  %other = constant {value = -1.5} : tensor<32xfp16>
  %p = splat %x : tensor<32xptr<fp16>>
  %q = addptr %p, %range : tensor<32xptr<fp16>>
  %v = load %q, %mask, %other : tensor<32xfp16>
  %op = splat %o : tensor<32xptr<fp16>>
  %oq = addptr %op, %range : tensor<32xptr<fp16>>
  store %oq, %v
  return
}
)");
  HostBuffer x = random("x", DType::F16, 10), o = HostBuffer::allocate("o", DType::F16, 32);
  ASSERT_TRUE(run("k", {InterpArg::pointer(x), InterpArg::pointer(o)})) << errors();
  for (int i = 0; i < 32; ++i)
    EXPECT_EQ(o.get(i), i < 10 ? x.get(i) : -1.5);
}

TEST_F(MemoryTest, ScalarLoadStoreAndMisalignment) {
  parse(R"(func @k(%x: ptr<i64>, %o: ptr<i64>, %k: i32) {
  %p = addptr %x, %k : ptr<i64>
  %v = load %p : i64
  store %o, %v
  return
}
func @mis(%x: ptr<i8>) {
  %one = constant {value = 1} : i32
  %p = addptr %x, %one : ptr<i8>
  %pi = ptrtoint %p : i64
  %q = inttoptr %pi : ptr<i32>
  %v = load %q : i32
  return
}
)");
  HostBuffer x = random("x", DType::I64, 8, -1000, 1000),
             o = HostBuffer::allocate("o", DType::I64, 1);
  ASSERT_TRUE(run("k", {InterpArg::pointer(x), InterpArg::pointer(o), InterpArg::integer(6)}))
      << errors();
  EXPECT_EQ(o.get(0), x.get(6));
  EXPECT_FALSE(run("k", {InterpArg::pointer(x), InterpArg::pointer(o), InterpArg::integer(8)}));
  EXPECT_NE(errors().find("the scalar access reads 8 bytes"), std::string::npos) << errors();
  HostBuffer b = random("b", DType::I8, 16, 1, 100);
  EXPECT_FALSE(run("mis", {InterpArg::pointer(b)}));
  EXPECT_NE(errors().find("misaligned load"), std::string::npos) << errors();
}

TEST_F(MemoryTest, AtomicAddReturnsOldValuesInOrder) {
  // Every lane adds into slot offs % 4, so each slot sees 8 updates; the
  // returned old values are the running sums in element order.
  parse(R"(func @k(%acc: ptr<i32>, %old: ptr<i32>, %x: ptr<i32>) {
  %range = make_range {end = 32, start = 0} : tensor<32xi32>
  %four = constant {value = 4} : tensor<32xi32>
  %slot = rem %range, %four : tensor<32xi32>
  %xp = splat %x : tensor<32xptr<i32>>
  %xq = addptr %xp, %range : tensor<32xptr<i32>>
  %v = load %xq : tensor<32xi32>
  %ap = splat %acc : tensor<32xptr<i32>>
  %aq = addptr %ap, %slot : tensor<32xptr<i32>>
  %o = atomic_rmw %aq, %v {kind = "add", sem = "acq_rel"} : tensor<32xi32>
  %op = splat %old : tensor<32xptr<i32>>
  %oq = addptr %op, %range : tensor<32xptr<i32>>
  store %oq, %o
  return
}
)");
  HostBuffer acc = random("acc", DType::I32, 4, -50, 50);
  HostBuffer x = random("x", DType::I32, 32, -50, 50),
             old = HostBuffer::allocate("old", DType::I32, 32);
  std::vector<double> start = {acc.get(0), acc.get(1), acc.get(2), acc.get(3)};
  InterpretOptions opts;
  opts.grid = {3, 1, 1}; // three programs: sequential order across them too
  ASSERT_TRUE(
      run("k", {InterpArg::pointer(acc), InterpArg::pointer(old), InterpArg::pointer(x)}, opts))
      << errors();
  std::vector<double> sum = start;
  for (int p = 0; p < 3; ++p)
    for (int i = 0; i < 32; ++i) {
      if (p == 2) { // the last program's returned values are what `old` holds
        EXPECT_EQ(old.get(i), sum[i % 4]) << i;
      }
      sum[i % 4] += x.get(i);
    }
  for (int s = 0; s < 4; ++s)
    EXPECT_EQ(acc.get(s), sum[s]);
}

TEST_F(MemoryTest, AtomicKindsAndCas) {
  const std::pair<const char *, std::function<double(double, double)>> kinds[] = {
      {"max", [](double a, double b) { return std::max(a, b); }},
      {"min", [](double a, double b) { return std::min(a, b); }},
      {"xchg", [](double, double b) { return b; }},
      {"and", [](double a, double b) { return double(int64_t(a) & int64_t(b)); }},
      {"or", [](double a, double b) { return double(int64_t(a) | int64_t(b)); }},
      {"xor", [](double a, double b) { return double(int64_t(a) ^ int64_t(b)); }},
  };
  for (auto &[kind, ref] : kinds) {
    module.reset();
    parse(std::string(R"(func @k(%acc: ptr<i32>, %v: i32, %o: ptr<i32>) {
  %old = atomic_rmw %acc, %v {kind = ")") +
          kind + R"("} : i32
  store %o, %old
  return
}
)");
    HostBuffer acc = random("acc", DType::I32, 1, -100, 100),
               o = HostBuffer::allocate("o", DType::I32, 1);
    double before = acc.get(0);
    ASSERT_TRUE(run("k", {InterpArg::pointer(acc), InterpArg::integer(37), InterpArg::pointer(o)}))
        << errors();
    EXPECT_EQ(o.get(0), before) << kind;
    EXPECT_EQ(acc.get(0), ref(before, 37)) << kind;
  }
  module.reset();
  parse(R"(func @cas(%p: ptr<fp32>, %cmp: fp32, %v: fp32, %o: ptr<fp32>) {
  %old = atomic_cas %p, %cmp, %v : fp32
  store %o, %old
  return
}
)");
  HostBuffer p = HostBuffer::allocate("p", DType::F32, 1),
             o = HostBuffer::allocate("o", DType::F32, 1);
  p.set(0, 2.5);
  ASSERT_TRUE(run("cas", {InterpArg::pointer(p), InterpArg::real(1.0), InterpArg::real(7.0),
                          InterpArg::pointer(o)}));
  EXPECT_EQ(p.get(0), 2.5); // no match: unchanged
  ASSERT_TRUE(run("cas", {InterpArg::pointer(p), InterpArg::real(2.5), InterpArg::real(7.0),
                          InterpArg::pointer(o)}));
  EXPECT_EQ(o.get(0), 2.5);
  EXPECT_EQ(p.get(0), 7.0);
}

TEST_F(MemoryTest, FloatAtomicAddRoundsInItsType) {
  parse(R"(func @k(%acc: ptr<fp16>, %x: ptr<fp16>) {
  %range = make_range {end = 64, start = 0} : tensor<64xi32>
  %xp = splat %x : tensor<64xptr<fp16>>
  %xq = addptr %xp, %range : tensor<64xptr<fp16>>
  %v = load %xq : tensor<64xfp16>
  %ap = splat %acc : tensor<64xptr<fp16>>
  %o = atomic_rmw %ap, %v {kind = "add"} : tensor<64xfp16>
  return
}
)");
  HostBuffer acc = random("acc", DType::F16, 1), x = random("x", DType::F16, 64);
  double sum = acc.get(0);
  for (int i = 0; i < 64; ++i)
    sum = halfToFloat(doubleToHalf(sum + x.get(i))); // one fp16 rounding per update
  ASSERT_TRUE(run("k", {InterpArg::pointer(acc), InterpArg::pointer(x)})) << errors();
  EXPECT_EQ(acc.get(0), sum);
}

TEST_F(MemoryTest, ArgumentChecks) {
  parse(kMaskedCopy);
  HostBuffer x = random("x", DType::F32, 4);
  EXPECT_FALSE(run("k", {InterpArg::pointer(x)}));
  EXPECT_NE(errors().find("takes 3 argument(s), got 1"), std::string::npos) << errors();
  EXPECT_FALSE(
      run("k", {InterpArg::pointer(x), InterpArg::pointer(x), InterpArg::integer(1LL << 40)}));
  EXPECT_NE(errors().find("does not fit in i32"), std::string::npos) << errors();
  EXPECT_FALSE(run("k", {InterpArg::integer(1), InterpArg::pointer(x), InterpArg::integer(1)}));
  EXPECT_NE(errors().find("expects a pointer"), std::string::npos) << errors();
  InterpretOptions opts;
  opts.grid = {0, 1, 1};
  EXPECT_FALSE(
      run("k", {InterpArg::pointer(x), InterpArg::pointer(x), InterpArg::integer(1)}, opts));
  EXPECT_NE(errors().find("grid dimension 0 is 0"), std::string::npos) << errors();
}

// A read-only buffer refuses stores and atomics, on the whole-block fast
// path and lane by lane, before writing; loads from it are fine.
TEST_F(MemoryTest, ReadOnlyBuffersRefuseStoresAndAtomics) {
  parse(kMaskedCopy);
  const int64_t n = 64;
  HostBuffer x = random("x", DType::F32, n), o = random("o", DType::F32, n);
  std::vector<double> before;
  for (int64_t i = 0; i < n; ++i)
    before.push_back(o.get(i));
  o.setReadOnly(true);
  x.setReadOnly(true);
  auto args = [&] {
    return std::vector<InterpArg>{InterpArg::pointer(x), InterpArg::pointer(o),
                                  InterpArg::integer(n)};
  };
  EXPECT_FALSE(run("k", args()));
  EXPECT_TRUE(stats.readOnlyStore);
  EXPECT_NE(errors().find("store into a read-only buffer in program (0, 0, 0): element 0 of the "
                          "block [64] (index [0]) writes 4 bytes at"),
            std::string::npos)
      << errors();
  EXPECT_NE(errors().find("buffer 'o', which is not writeable"), std::string::npos) << errors();
  for (int64_t i = 0; i < n; ++i)
    EXPECT_EQ(o.get(i), before[size_t(i)]) << i;
  o.setReadOnly(false);
  ASSERT_TRUE(run("k", args())) << errors();
  EXPECT_FALSE(stats.readOnlyStore);
  EXPECT_EQ(o.get(5), 2 * x.get(5));

  parse(R"(func @k(%c: ptr<i32>) {
  %one = constant {value = 1} : i32
  %old = atomic_rmw %c, %one {kind = "add"} : i32
  return
}
)");
  HostBuffer c = HostBuffer::allocate("c", DType::I32, 1);
  c.set(0, 41);
  c.setReadOnly(true);
  EXPECT_FALSE(run("k", {InterpArg::pointer(c)}));
  EXPECT_NE(errors().find("atomic into a read-only buffer"), std::string::npos) << errors();
  EXPECT_EQ(c.get(0), 41);
}

// The store log names every element written, with its op and program; a
// selection of programs runs only those (num_programs still the grid's).
TEST_F(MemoryTest, StoreLogAndProgramSelection) {
  parse(kMaskedCopy);
  const int64_t n = 200;
  HostBuffer x = random("x", DType::F32, n), o = HostBuffer::allocate("o", DType::F32, n);
  std::vector<StoreRecord> log;
  InterpretOptions opts;
  opts.grid = {4, 1, 1};
  opts.storeLog = &log;
  opts.programs = {3, 1};
  ASSERT_TRUE(run("k", {InterpArg::pointer(x), InterpArg::pointer(o), InterpArg::integer(n)}, opts))
      << errors();
  EXPECT_EQ(stats.programs, 2u);
  // Program 3 (elements 192..199, the rest masked off: lane by lane), then
  // program 1 (64..127, dense: one record).
  ASSERT_EQ(log.size(), 9u);
  for (size_t i = 0; i < 8; ++i) {
    EXPECT_EQ(log[i].buffer, &o);
    EXPECT_EQ(log[i].offset, (192 + i) * 4);
    EXPECT_EQ(log[i].count, 1);
    EXPECT_EQ(log[i].program, (std::array<int32_t, 3>{3, 0, 0}));
    EXPECT_EQ(log[i].loc.line, 17u);
  }
  EXPECT_EQ(log[8].offset, 64u * 4);
  EXPECT_EQ(log[8].count, 64);
  EXPECT_EQ(log[8].elementBytes, 4u);
  EXPECT_FALSE(log[8].atomic);
  EXPECT_TRUE(o.isWritten(64 * 4, 64 * 4));
  EXPECT_FALSE(o.isWritten(0, 4)) << "program 0 did not run";
  opts.programs = {4};
  EXPECT_FALSE(
      run("k", {InterpArg::pointer(x), InterpArg::pointer(o), InterpArg::integer(n)}, opts));
  EXPECT_NE(errors().find("program 4 is not in the grid (4, 1, 1) of 4 programs"),
            std::string::npos)
      << errors();
}

} // namespace

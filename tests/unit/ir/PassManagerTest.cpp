#include "IRTestUtil.h"

#include "compiler/Pipeline.h"
#include "lowering/PassManager.h"

#include <gtest/gtest.h>

namespace tk {
namespace {

constexpr const char *kInput = R"(func @f(%x: i32) -> i32 {
  %one = constant {value = 1} : i32
  %a = mul %x, %one : i32
  %b = add %x, %x : i32
  %c = add %x, %x : i32
  %d = add %b, %c : i32
  return %d
}
)";

TEST(PassManager, PipelineSimplifies) {
  test::ParsedIR ir;
  ASSERT_TRUE(ir.parse(kInput));
  PassManager pm(ir.diag);
  pm.setVerifyEach(true);
  buildPipeline(pm);
  ASSERT_EQ(pm.passes().size(), 4u);
  EXPECT_EQ(pm.passes()[0]->flag(), "inline");
  EXPECT_EQ(pm.passes()[1]->flag(), "canonicalize");
  EXPECT_TRUE(pm.run(*ir.module)) << ir.errors();
  EXPECT_EQ(ir.print(), "func @f(%arg0: i32) -> i32 {\n"
                        "  %0 = add %arg0, %arg0 : i32\n"
                        "  %1 = add %0, %0 : i32\n"
                        "  return %1\n"
                        "}\n");
}

TEST(PassManager, DumpsOnlyWhatChangedAndTimes) {
  test::ParsedIR ir;
  ASSERT_TRUE(ir.parse(kInput));
  PassManager pm(ir.diag);
  std::string sink;
  pm.setSink([&](std::string_view s) { sink += s; });
  pm.setDumpIR("all");
  pm.setTimePasses(true);
  pm.add(createCSEPass());
  pm.add(createCSEPass()); // finds nothing more: no dump
  EXPECT_TRUE(pm.run(*ir.module));
  size_t first = sink.find("IR after cse");
  ASSERT_NE(first, std::string::npos) << sink;
  EXPECT_EQ(sink.find("IR after cse", first + 1), std::string::npos) << sink;
  EXPECT_NE(sink.find("pass timing"), std::string::npos);
  EXPECT_NE(sink.find("total"), std::string::npos);

  // A filter naming another pass dumps nothing; no sink means no output at all.
  test::ParsedIR again;
  ASSERT_TRUE(again.parse(kInput));
  PassManager quiet(again.diag);
  std::string none;
  quiet.setSink([&](std::string_view s) { none += s; });
  quiet.setDumpIR("dce,canonicalize");
  quiet.add(createCSEPass());
  EXPECT_TRUE(quiet.run(*again.module));
  EXPECT_EQ(none, "");
}

TEST(PassManager, Registry) {
  ASSERT_NE(lookupPass("dce"), nullptr);
  EXPECT_EQ(lookupPass("dce")->create()->flag(), "dce");
  EXPECT_FALSE(lookupPass("dce")->summary.empty());
  EXPECT_EQ(lookupPass("nope"), nullptr);
  EXPECT_GE(registeredPasses().size(), 3u);
  EXPECT_EQ(registeredPasses()[0].flag, "canonicalize");
}

} // namespace
} // namespace tk

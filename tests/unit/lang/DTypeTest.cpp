#include "lang/DType.h"

#include <gtest/gtest.h>

namespace tk {
namespace {

TEST(DType, SpellingsRoundTrip) {
  for (DType t : {DType::I1, DType::I8, DType::I16, DType::I32, DType::I64, DType::U8, DType::U16,
                  DType::U32, DType::U64, DType::F16, DType::BF16, DType::F32, DType::F64}) {
    EXPECT_EQ(parseDTypeName(dtypeName(t)), t) << dtypeName(t);
    EXPECT_EQ(parseDTypePythonName(dtypePythonName(t)), t) << dtypePythonName(t);
  }
}

TEST(DType, WidthsAndKinds) {
  EXPECT_EQ(dtypeBits(DType::BF16), 16u);
  EXPECT_EQ(dtypeBytes(DType::I1), 1u);
  EXPECT_EQ(dtypeBytes(DType::F64), 8u);
  EXPECT_TRUE(isFloat(DType::BF16));
  EXPECT_TRUE(isUnsigned(DType::U32));
  EXPECT_TRUE(isSigned(DType::I8));
  EXPECT_FALSE(isSigned(DType::I1));
  EXPECT_EQ(parseDTypePythonName("fp16"), DType::F16);
  EXPECT_EQ(parseDTypeName("float16"), std::nullopt);
}

} // namespace
} // namespace tk

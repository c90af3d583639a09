// DType names, sizes and the 16-bit float conversions.
#include "graph/dtype.h"

#include <cmath>
#include <limits>

#include "gtest/gtest.h"

namespace tsr {
namespace {

TEST(DTypeTest, NamesRoundTrip) {
  for (DType d : kAllDTypes) {
    absl::StatusOr<DType> parsed = ParseDType(DTypeName(d));
    ASSERT_TRUE(parsed.ok()) << DTypeName(d);
    EXPECT_EQ(*parsed, d);
  }
  EXPECT_EQ(*ParseDType("float32"), DType::kF32);
  EXPECT_EQ(*ParseDType("int64"), DType::kI64);
  absl::StatusOr<DType> bad = ParseDType("f33");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("unknown dtype 'f33'"), std::string::npos);
}

TEST(DTypeTest, SizesAndClasses) {
  EXPECT_EQ(DTypeSize(DType::kF32), 4u);
  EXPECT_EQ(DTypeSize(DType::kF64), 8u);
  EXPECT_EQ(DTypeSize(DType::kF16), 2u);
  EXPECT_EQ(DTypeSize(DType::kBF16), 2u);
  EXPECT_EQ(DTypeSize(DType::kI8), 1u);
  EXPECT_EQ(DTypeSize(DType::kBool), 1u);
  EXPECT_EQ(DTypeSize(DType::kInvalid), 0u);
  EXPECT_TRUE(IsFloating(DType::kBF16));
  EXPECT_FALSE(IsFloating(DType::kI32));
  EXPECT_TRUE(IsInteger(DType::kU8));
  EXPECT_FALSE(IsInteger(DType::kBool));
  EXPECT_TRUE(IsSignedInteger(DType::kI8));
  EXPECT_FALSE(IsSignedInteger(DType::kU8));
  EXPECT_FALSE(IsValidDType(DType::kInvalid));
  EXPECT_FALSE(IsValidDType(static_cast<DType>(42)));
}

TEST(Float16Test, ExactValuesRoundTrip) {
  for (float f : {0.0f, -0.0f, 1.0f, -2.5f, 65504.0f, 6.103515625e-05f /*min normal*/, 5.960464477539063e-08f}) {
    EXPECT_EQ(Float16::FromFloat(f).ToFloat(), f) << f;
  }
  EXPECT_EQ(Float16::FromFloat(1.0f).bits, 0x3c00);
  EXPECT_EQ(Float16::FromFloat(-2.0f).bits, 0xc000);
}

TEST(Float16Test, RoundsToNearestEvenAndSaturatesToInf) {
  // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties go to the even mantissa (1).
  EXPECT_EQ(Float16::FromFloat(1.0f + std::ldexp(1.0f, -11)).bits, 0x3c00);
  // 1 + 3*2^-11 is halfway between 1+2^-10 (odd) and 1+2^-9 (even).
  EXPECT_EQ(Float16::FromFloat(1.0f + 3 * std::ldexp(1.0f, -11)).bits, 0x3c02);
  EXPECT_TRUE(std::isinf(Float16::FromFloat(70000.0f).ToFloat()));
  EXPECT_TRUE(std::isnan(Float16::FromFloat(std::numeric_limits<float>::quiet_NaN()).ToFloat()));
  EXPECT_EQ(Float16::FromFloat(1e-10f).ToFloat(), 0.0f);
}

TEST(Float16Test, EveryHalfSurvivesFloatRoundTrip) {
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    const Float16 h = Float16::FromBits(static_cast<uint16_t>(bits));
    const float f = h.ToFloat();
    if (std::isnan(f)) continue;
    ASSERT_EQ(Float16::FromFloat(f).bits, h.bits) << "bits " << bits;
  }
}

TEST(BFloat16Test, RoundTripAndRounding) {
  EXPECT_EQ(BFloat16::FromFloat(1.0f).bits, 0x3f80);
  EXPECT_EQ(BFloat16::FromFloat(-3.0f).ToFloat(), -3.0f);
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to even (1).
  EXPECT_EQ(BFloat16::FromFloat(1.0f + std::ldexp(1.0f, -8)).ToFloat(), 1.0f);
  EXPECT_TRUE(std::isnan(BFloat16::FromFloat(std::numeric_limits<float>::quiet_NaN()).ToFloat()));
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    const BFloat16 h = BFloat16::FromBits(static_cast<uint16_t>(bits));
    const float f = h.ToFloat();
    if (std::isnan(f)) continue;
    ASSERT_EQ(BFloat16::FromFloat(f).bits, h.bits) << "bits " << bits;
  }
}

}  // namespace
}  // namespace tsr

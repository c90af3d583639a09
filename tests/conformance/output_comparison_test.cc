// Tests of CompareOutput: the ONNX backend tests' tolerances (rtol 1e-3, atol 1e-7),
// NaN and infinity handling, exact integers and bools, dtype and shape checks.
#include "tests/conformance/output_comparison.h"

#include <cmath>
#include <limits>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tsr::conformance {
namespace {

using ::testing::HasSubstr;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

TEST(CompareOutputTest, FloatsWithinRelativeToleranceMatch) {
  const Tensor expected = Tensor::FromVector<float>({2, 2}, {1000.f, -2.f, 0.f, 1e-9f});
  // 1000 * (1 + 0.9e-3), -2 * (1 + 0.9e-3), 0 + 0.9e-7 (atol), 1e-9 + 0.9e-7.
  const Tensor actual = Tensor::FromVector<float>({2, 2}, {1000.9f, -2.0018f, 0.9e-7f, 0.91e-7f});
  EXPECT_TRUE(CompareOutput(expected, actual).ok());
}

TEST(CompareOutputTest, FloatsBeyondToleranceNameTheWorstElement) {
  const Tensor expected = Tensor::FromVector<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor actual = Tensor::FromVector<float>({2, 3}, {1, 2.0021f, 3, 4, 5.5f, 6});
  const absl::Status s = CompareOutput(expected, actual);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("2 of 6 values differ"));
  EXPECT_THAT(s.message(), HasSubstr("max abs diff 0.5"));
  EXPECT_THAT(s.message(), HasSubstr("max rel diff 0.1"));
  EXPECT_THAT(s.message(), HasSubstr("at [1,1] expected 5, got 5.5"));
}

TEST(CompareOutputTest, AbsoluteToleranceAloneCoversZero) {
  const Tensor zero = Tensor::FromVector<float>({1}, {0.f});
  EXPECT_TRUE(CompareOutput(zero, Tensor::FromVector<float>({1}, {5e-8f})).ok());
  EXPECT_FALSE(CompareOutput(zero, Tensor::FromVector<float>({1}, {2e-7f})).ok());
}

TEST(CompareOutputTest, NaNEqualsNaNAndInfinitiesMustAgree) {
  const Tensor expected = Tensor::FromVector<float>({3}, {kNaN, kInf, -kInf});
  EXPECT_TRUE(CompareOutput(expected, Tensor::FromVector<float>({3}, {kNaN, kInf, -kInf})).ok());
  EXPECT_FALSE(CompareOutput(expected, Tensor::FromVector<float>({3}, {0.f, kInf, -kInf})).ok());
  EXPECT_FALSE(CompareOutput(expected, Tensor::FromVector<float>({3}, {kNaN, -kInf, -kInf})).ok());
  EXPECT_FALSE(CompareOutput(expected, Tensor::FromVector<float>({3}, {kNaN, 3e38f, -kInf})).ok());
  // A NaN where a number is expected is a mismatch, too.
  EXPECT_FALSE(CompareOutput(Tensor::FromVector<float>({1}, {1.f}), Tensor::FromVector<float>({1}, {kNaN})).ok());
}

TEST(CompareOutputTest, IntegersAndBoolsMustBeExact) {
  // Within rtol 1e-3 of 10000, but integers are compared exactly.
  const absl::Status s =
      CompareOutput(Tensor::FromVector<int64_t>({2}, {7, 10000}), Tensor::FromVector<int64_t>({2}, {7, 10001}));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(),
              HasSubstr("1 of 2 values differ (exact comparison); first at [1]: expected 10000, got 10001"));
  EXPECT_TRUE(CompareOutput(Tensor::FromVector<int32_t>({2}, {-3, 4}), Tensor::FromVector<int32_t>({2}, {-3, 4})).ok());
  EXPECT_FALSE(
      CompareOutput(Tensor::FromVector<bool>({2}, {true, false}), Tensor::FromVector<bool>({2}, {true, true})).ok());
}

TEST(CompareOutputTest, HalfPrecisionIsComparedAsItsValues) {
  const Tensor expected = Tensor::FromVector<Float16>({2}, {Float16::FromFloat(1.5f), Float16::FromFloat(-2.f)});
  EXPECT_TRUE(
      CompareOutput(expected, Tensor::FromVector<Float16>({2}, {Float16::FromFloat(1.5f), Float16::FromFloat(-2.f)}))
          .ok());
  EXPECT_FALSE(
      CompareOutput(expected, Tensor::FromVector<Float16>({2}, {Float16::FromFloat(1.5f), Float16::FromFloat(-2.5f)}))
          .ok());
}

TEST(CompareOutputTest, DTypeAndShapeMustMatch) {
  const Tensor f = Tensor::FromVector<float>({2}, {1, 2});
  const absl::Status dtype = CompareOutput(f, Tensor::FromVector<double>({2}, {1, 2}));
  ASSERT_FALSE(dtype.ok());
  EXPECT_THAT(dtype.message(), HasSubstr("dtype f64 where f32 is expected"));
  const absl::Status shape = CompareOutput(f, Tensor::FromVector<float>({1, 2}, {1, 2}));
  ASSERT_FALSE(shape.ok());
  EXPECT_THAT(shape.message(), HasSubstr("where [2] is expected"));
  // A scalar is not a one-element vector.
  EXPECT_FALSE(CompareOutput(Tensor::Scalar<float>(1), Tensor::FromVector<float>({1}, {1})).ok());
}

TEST(CompareOutputTest, CustomTolerance) {
  const Tensor expected = Tensor::FromVector<double>({1}, {1.0});
  const Tensor actual = Tensor::FromVector<double>({1}, {1.01});
  EXPECT_FALSE(CompareOutput(expected, actual).ok());
  EXPECT_TRUE(CompareOutput(expected, actual, {.rtol = 0.02, .atol = 0}).ok());
}

}  // namespace
}  // namespace tsr::conformance

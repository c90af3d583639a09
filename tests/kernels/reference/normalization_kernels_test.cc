// Reference normalization kernels (kernels/reference/normalization_kernels.cc):
// BatchNormalization in inference and training mode (batch statistics, running
// statistics per ONNX), LayerNormalization (axis, broadcast Scale/B, Mean and
// InvStdDev outputs), Softmax (rows sum to 1, stable at +-1000) and LogSoftmax
// (== log(Softmax)).
#include <cmath>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/attribute.h"
#include "graph/tensor.h"
#include "gtest/gtest.h"
#include "kernels/run_op.h"
#include "tests/kernels/kernel_test_util.h"

namespace tsr {
namespace {

using ::tsr::testing::ExpectNear;
using ::tsr::testing::Random;
using ::tsr::testing::RunAll;

// Absolute tolerance of ExpectNear where a test gives none.
constexpr double kTol = 1e-9;

Tensor D(Shape shape, std::vector<double> v) { return Tensor::FromVector<double>(std::move(shape), v); }

TEST(BatchNormalizationKernelTest, InferenceUsesTheGivenStatistics) {
  // X [2,2,1,2]; channel c: scale, B, mean, var.
  Tensor x = D({2, 2, 1, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  Tensor scale = D({2}, {2, 0.5}), b = D({2}, {1, -1}), mean = D({2}, {3, 5}), var = D({2}, {4, 0.25});
  std::vector<Tensor> out =
      RunAll("BatchNormalization", {x, scale, b, mean, var}, {{"epsilon", AttrValue::Float(0.0)}});
  ASSERT_EQ(out.size(), 1u);
  // c=0: 2 * (x - 3) / 2 + 1 = x - 2; c=1: 0.5 * (x - 5) / 0.5 - 1 = x - 6.
  ExpectNear(out[0], {-1, 0, -3, -2, 3, 4, 1, 2}, kTol);
  // epsilon enters under the square root.
  std::vector<Tensor> eps = RunAll("BatchNormalization", {x, scale, b, mean, var}, {{"epsilon", AttrValue::Float(5)}});
  EXPECT_NEAR(eps[0].GetAsDouble(0), 2 * (1 - 3) / 3.0 + 1, 1e-12);
}

TEST(BatchNormalizationKernelTest, TrainingUsesBatchStatisticsAndUpdatesRunningOnes) {
  // Channel 0 holds {1,2,3,4} (mean 2.5, population var 1.25), channel 1 {10,10,10,14}
  // (mean 11, var 3).
  Tensor x = D({2, 2, 2}, {1, 2, 10, 10, 3, 4, 10, 14});
  Tensor scale = D({2}, {1, 2}), b = D({2}, {0, 1}), mean = D({2}, {0, 1}), var = D({2}, {1, 2});
  std::vector<Tensor> out = RunAll(
      "BatchNormalization", {x, scale, b, mean, var},
      {{"training_mode", AttrValue::Int(1)}, {"momentum", AttrValue::Float(0.75)}, {"epsilon", AttrValue::Float(0.0)}});
  ASSERT_EQ(out.size(), 3u);
  const double s0 = std::sqrt(1.25), s1 = std::sqrt(3.0);
  ExpectNear(
      out[0],
      {-1.5 / s0, -0.5 / s0, 2 * -1 / s1 + 1, 2 * -1 / s1 + 1, 0.5 / s0, 1.5 / s0, 2 * -1 / s1 + 1, 2 * 3 / s1 + 1},
      kTol);
  ExpectNear(out[1], {0.75 * 0 + 0.25 * 2.5, 0.75 * 1 + 0.25 * 11}, kTol);
  ExpectNear(out[2], {0.75 * 1 + 0.25 * 1.25, 0.75 * 2 + 0.25 * 3}, kTol);
}

TEST(BatchNormalizationKernelTest, OneDimensionalInputAndMixedParameterDTypes) {
  // X [N] has a single channel; the parameters may be f32 while X is f64.
  Tensor x = D({4}, {1, 2, 3, 4});
  auto f = [](float v) { return Tensor::FromVector<float>({1}, {v}); };
  std::vector<Tensor> out =
      RunAll("BatchNormalization", {x, f(2), f(1), f(2.5f), f(1.25f)}, {{"epsilon", AttrValue::Float(0.0)}});
  ASSERT_EQ(out[0].dtype(), DType::kF64);
  const double s = std::sqrt(1.25);
  ExpectNear(out[0], {2 * -1.5 / s + 1, 2 * -0.5 / s + 1, 2 * 0.5 / s + 1, 2 * 1.5 / s + 1}, 1e-7);
}

TEST(LayerNormalizationKernelTest, LastAxisHandComputed) {
  // Rows {1,2,3} (mean 2, var 2/3) and {2,4,6} (mean 4, var 8/3).
  Tensor x = D({2, 3}, {1, 2, 3, 2, 4, 6});
  std::vector<Tensor> out =
      RunAll("LayerNormalization", {x, D({3}, {1, 2, 3}), D({3}, {0, 0, 1})}, {{"epsilon", AttrValue::Float(0.0)}});
  ASSERT_EQ(out.size(), 3u);
  const double i0 = 1 / std::sqrt(2.0 / 3), i1 = 1 / std::sqrt(8.0 / 3);
  ExpectNear(out[0], {-i0, 0, 3 * i0 + 1, -2 * i1, 0, 3 * 2 * i1 + 1}, kTol);
  EXPECT_EQ(out[1].shape(), (Shape{2, 1}));
  EXPECT_EQ(out[1].dtype(), DType::kF32);
  ExpectNear(out[1], {2, 4}, 1e-6);
  ExpectNear(out[2], {i0, i1}, 1e-6);
}

TEST(LayerNormalizationKernelTest, InnerAxisWithBroadcastScale) {
  constexpr uint32_t kSeed = 5;
  SCOPED_TRACE(absl::StrCat("seed ", kSeed));
  // axis 1 of [2,3,2]: normalize over 6 values; Scale [2] repeats along the 3.
  const Tensor x = Random({2, 3, 2}, kSeed);
  const Tensor scale = D({2}, {2, -1});
  std::vector<Tensor> out = RunAll("LayerNormalization", {x, scale, std::nullopt},
                                   {{"axis", AttrValue::Int(1)}, {"epsilon", AttrValue::Float(1e-3)}});
  EXPECT_EQ(out[1].shape(), (Shape{2, 1, 1}));
  for (int n = 0; n < 2; ++n) {
    double mean = 0, var = 0;
    for (int j = 0; j < 6; ++j) mean += x.GetAsDouble(n * 6 + j) / 6;
    for (int j = 0; j < 6; ++j) var += std::pow(x.GetAsDouble(n * 6 + j) - mean, 2) / 6;
    const double inv = 1 / std::sqrt(var + 1e-3);
    for (int j = 0; j < 6; ++j) {
      EXPECT_NEAR(out[0].GetAsDouble(n * 6 + j), (x.GetAsDouble(n * 6 + j) - mean) * inv * (j % 2 == 0 ? 2 : -1),
                  1e-12);
    }
    EXPECT_NEAR(out[1].GetAsDouble(n), mean, 1e-6);
    EXPECT_NEAR(out[2].GetAsDouble(n), inv, 1e-5);
  }
}

TEST(SoftmaxKernelTest, RowsSumToOneAndLogSoftmaxIsItsLog) {
  constexpr uint32_t kSeed = 9;
  SCOPED_TRACE(absl::StrCat("seed ", kSeed));
  const Tensor x = Random({2, 3, 4}, kSeed, 5.0);
  for (int axis : {0, 1, 2, -1}) {
    SCOPED_TRACE(absl::StrCat("axis ", axis));
    const AttrMap attrs{{"axis", AttrValue::Int(axis)}};
    Tensor sm = RunAll("Softmax", {x}, attrs)[0];
    Tensor lsm = RunAll("LogSoftmax", {x}, attrs)[0];
    const int a = axis < 0 ? axis + 3 : axis;
    const int64_t dims[] = {2, 3, 4};
    const int64_t inner = a == 2 ? 1 : (a == 1 ? 4 : 12), outer = a == 0 ? 1 : (a == 1 ? 2 : 6);
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        double sum = 0, denom = 0;
        for (int64_t k = 0; k < dims[a]; ++k) denom += std::exp(x.GetAsDouble((o * dims[a] + k) * inner + i));
        for (int64_t k = 0; k < dims[a]; ++k) {
          const int64_t e = (o * dims[a] + k) * inner + i;
          sum += sm.GetAsDouble(e);
          EXPECT_NEAR(sm.GetAsDouble(e), std::exp(x.GetAsDouble(e)) / denom, 1e-12);
          EXPECT_NEAR(lsm.GetAsDouble(e), std::log(sm.GetAsDouble(e)), 1e-12);
        }
        EXPECT_NEAR(sum, 1.0, 1e-12);
      }
    }
  }
}

TEST(SoftmaxKernelTest, StableAtPlusMinusOneThousand) {
  Tensor x = Tensor::FromVector<float>({3, 2}, {1000, 1000, -1000, 0, 1000, -1000});
  ExpectNear(RunAll("Softmax", {x})[0], {0.5, 0.5, 0, 1, 1, 0}, 1e-7);
  Tensor lsm = RunAll("LogSoftmax", {x})[0];
  ExpectNear(lsm, {-std::log(2.0), -std::log(2.0), -1000, 0, 0, -2000}, 1e-4);
  for (int64_t i = 0; i < 6; ++i) EXPECT_TRUE(std::isfinite(lsm.GetAsDouble(i)));
}

TEST(SoftmaxKernelTest, HalfDTypesAndZeroSize) {
  Tensor h(DType::kBF16, {2});
  h.data<BFloat16>()[0] = BFloat16::FromFloat(0);
  h.data<BFloat16>()[1] = BFloat16::FromFloat(0);
  Tensor y = RunAll("Softmax", {h})[0];
  ASSERT_EQ(y.dtype(), DType::kBF16);
  ExpectNear(y, {0.5, 0.5}, kTol);
  EXPECT_EQ(RunAll("Softmax", {Tensor(DType::kF32, {0, 5})})[0].shape(), (Shape{0, 5}));
}

}  // namespace
}  // namespace tsr

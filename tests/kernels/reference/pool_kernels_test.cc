// Reference pooling kernels (kernels/reference/pool_kernels.cc): hand-computed MaxPool
// values and Indices (row- and column-major, N and C counted), padding never winning
// a max, AveragePool's count_include_pad / ceil_mode / auto_pad divisors, randomized
// MaxPool invariants, and GlobalAveragePool.
#include <algorithm>
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
using ::tsr::testing::RunAll;

// Absolute tolerance of ExpectNear where a test gives none.
constexpr double kTol = 1e-12;

std::vector<int64_t> Ints(const Tensor& t) { return t.ToInt64Vector(); }

Tensor Iota(Shape shape, double start = 0) {
  std::vector<float> v(static_cast<size_t>(shape.num_elements()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(start + static_cast<double>(i));
  return Tensor::FromVector<float>(std::move(shape), v);
}

TEST(MaxPoolKernelTest, HandComputedValuesAndIndices) {
  // Two batches x two channels of a 4x4 iota; 2x2 windows, stride 2.
  const AttrMap attrs{{"kernel_shape", AttrValue::Ints({2, 2})}, {"strides", AttrValue::Ints({2, 2})}};
  std::vector<Tensor> out = RunAll("MaxPool", {Iota({2, 2, 4, 4})}, attrs);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].shape(), (Shape{2, 2, 2, 2}));
  ExpectNear(out[0], {5, 7, 13, 15, 21, 23, 29, 31, 37, 39, 45, 47, 53, 55, 61, 63}, kTol);
  ASSERT_EQ(out[1].dtype(), DType::kI64);
  // Row-major flat indices into X, N and C included: equal to the iota values.
  EXPECT_EQ(Ints(out[1]), (std::vector<int64_t>{5, 7, 13, 15, 21, 23, 29, 31, 37, 39, 45, 47, 53, 55, 61, 63}));
}

TEST(MaxPoolKernelTest, ColumnMajorIndicesWithStorageOrder1) {
  // X [1,2,2,3]: maximum of each 2x2 window at (1,1) and (1,2).
  std::vector<Tensor> out = RunAll("MaxPool", {Iota({1, 2, 2, 3})},
                                   {{"kernel_shape", AttrValue::Ints({2, 2})}, {"storage_order", AttrValue::Int(1)}});
  ExpectNear(out[0], {4, 5, 10, 11}, kTol);
  // Column-major spatial index h + w * H: (1,1) -> 3, (1,2) -> 5; channel 1 adds 6.
  EXPECT_EQ(Ints(out[1]), (std::vector<int64_t>{3, 5, 9, 11}));
}

TEST(MaxPoolKernelTest, PaddingNeverWinsAndCeilModeAddsAPartialWindow) {
  // All-negative input: a zero pad would win if padding were read.
  Tensor x = Tensor::FromVector<float>({1, 1, 5}, {-5, -4, -3, -2, -1});
  std::vector<Tensor> padded =
      RunAll("MaxPool", {x}, {{"kernel_shape", AttrValue::Ints({3})}, {"pads", AttrValue::Ints({1, 1})}});
  ExpectNear(padded[0], {-4, -3, -2, -1, -1}, kTol);
  EXPECT_EQ(Ints(padded[1]), (std::vector<int64_t>{1, 2, 3, 4, 4}));
  std::vector<Tensor> ceil = RunAll(
      "MaxPool", {Tensor::FromVector<float>({1, 1, 5}, {3, 1, 4, 1, 5})},
      {{"kernel_shape", AttrValue::Ints({2})}, {"strides", AttrValue::Ints({2})}, {"ceil_mode", AttrValue::Int(1)}});
  ExpectNear(ceil[0], {3, 4, 5}, kTol);
  EXPECT_EQ(Ints(ceil[1]), (std::vector<int64_t>{0, 2, 4}));
  // Ties keep the first maximum; dilation 2 skips the odd positions.
  std::vector<Tensor> dilated = RunAll("MaxPool", {Tensor::FromVector<float>({1, 1, 5}, {7, 9, 7, 9, 1})},
                                       {{"kernel_shape", AttrValue::Ints({2})}, {"dilations", AttrValue::Ints({2})}});
  ExpectNear(dilated[0], {7, 9, 7}, kTol);
  EXPECT_EQ(Ints(dilated[1]), (std::vector<int64_t>{0, 1, 2}));
}

TEST(MaxPoolKernelTest, IntegerAndHalfDTypes) {
  Tensor x8 = Tensor::FromVector<int8_t>({1, 1, 4}, {-128, 127, -3, -7});
  std::vector<Tensor> out = RunAll("MaxPool", {x8}, {{"kernel_shape", AttrValue::Ints({2})}});
  ASSERT_EQ(out[0].dtype(), DType::kI8);
  ExpectNear(out[0], {127, 127, -3}, kTol);
  Tensor h(DType::kF16, {1, 1, 3});
  for (int i = 0; i < 3; ++i) h.data<Float16>()[i] = Float16::FromFloat(0.5f * static_cast<float>(i));
  std::vector<Tensor> hout = RunAll("MaxPool", {h}, {{"kernel_shape", AttrValue::Ints({3})}});
  ASSERT_EQ(hout[0].dtype(), DType::kF16);
  ExpectNear(hout[0], {1.0}, kTol);
}

TEST(MaxPoolKernelTest, RandomizedIndicesPointAtTheMaximumOfTheirWindow) {
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    SCOPED_TRACE(absl::StrCat("seed ", seed));
    std::mt19937 rng(seed);
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    const int64_t h = pick(3, 7), w = pick(3, 7), kh = pick(1, 3), kw = pick(1, 3), s = pick(1, 2);
    const int64_t p = std::min<int64_t>(pick(0, 1), std::min(kh, kw) - 1);
    std::vector<float> v(static_cast<size_t>(2 * 3 * h * w));
    std::uniform_real_distribution<float> dist(-1, 1);
    for (float& f : v) f = dist(rng);
    const Tensor x = Tensor::FromVector<float>({2, 3, h, w}, v);
    std::vector<Tensor> out = RunAll("MaxPool", {x},
                                     {{"kernel_shape", AttrValue::Ints({kh, kw})},
                                      {"strides", AttrValue::Ints({s, s})},
                                      {"pads", AttrValue::Ints({p, p, p, p})}});
    const int64_t oh = out[0].shape().dim(2), ow = out[0].shape().dim(3);
    ASSERT_EQ(oh, (h + 2 * p - kh) / s + 1);
    for (int64_t plane = 0; plane < 6; ++plane) {
      for (int64_t i = 0; i < oh; ++i) {
        for (int64_t j = 0; j < ow; ++j) {
          const int64_t o = (plane * oh + i) * ow + j;
          double best = -1e9;
          for (int64_t a = i * s - p; a < i * s - p + kh; ++a) {
            for (int64_t b = j * s - p; b < j * s - p + kw; ++b) {
              if (a >= 0 && a < h && b >= 0 && b < w) best = std::max<double>(best, v[(plane * h + a) * w + b]);
            }
          }
          EXPECT_EQ(out[0].GetAsDouble(o), best) << "output " << o;
          EXPECT_EQ(v[out[1].GetAsInt64(o)], best) << "output " << o;
        }
      }
    }
  }
}

TEST(AveragePoolKernelTest, CountIncludePad) {
  // X = 1..9 as 3x3, 3x3 window, pads 1: the corner window covers {1,2,4,5}.
  Tensor x = Iota({1, 1, 3, 3}, 1);
  AttrMap attrs{{"kernel_shape", AttrValue::Ints({3, 3})}, {"pads", AttrValue::Ints({1, 1, 1, 1})}};
  std::vector<Tensor> excl = RunAll("AveragePool", {x}, attrs);
  EXPECT_NEAR(excl[0].GetAsDouble(0), 12.0 / 4, 1e-6);
  EXPECT_NEAR(excl[0].GetAsDouble(1), 21.0 / 6, 1e-6);
  EXPECT_NEAR(excl[0].GetAsDouble(4), 5.0, 1e-6);
  attrs["count_include_pad"] = AttrValue::Int(1);
  std::vector<Tensor> incl = RunAll("AveragePool", {x}, attrs);
  EXPECT_NEAR(incl[0].GetAsDouble(0), 12.0 / 9, 1e-6);
  EXPECT_NEAR(incl[0].GetAsDouble(1), 21.0 / 9, 1e-6);
  EXPECT_NEAR(incl[0].GetAsDouble(4), 5.0, 1e-6);
}

TEST(AveragePoolKernelTest, CeilModeWindowPastTheEndCountsOnlyRealPositions) {
  Tensor x = Tensor::FromVector<double>({1, 1, 5}, {1, 2, 3, 4, 5});
  for (int include : {0, 1}) {
    SCOPED_TRACE(absl::StrCat("count_include_pad=", include));
    std::vector<Tensor> out = RunAll("AveragePool", {x},
                                     {{"kernel_shape", AttrValue::Ints({2})},
                                      {"strides", AttrValue::Ints({2})},
                                      {"ceil_mode", AttrValue::Int(1)},
                                      {"count_include_pad", AttrValue::Int(include)}});
    ExpectNear(out[0], {1.5, 3.5, 5}, kTol);
  }
  // With an explicit end pad, count_include_pad counts that pad but not beyond it.
  std::vector<Tensor> padded = RunAll("AveragePool", {Tensor::FromVector<double>({1, 1, 4}, {1, 2, 3, 4})},
                                      {{"kernel_shape", AttrValue::Ints({3})},
                                       {"strides", AttrValue::Ints({2})},
                                       {"pads", AttrValue::Ints({0, 1})},
                                       {"ceil_mode", AttrValue::Int(1)},
                                       {"count_include_pad", AttrValue::Int(1)}});
  ExpectNear(padded[0], {2, 7.0 / 3}, kTol);
}

TEST(AveragePoolKernelTest, AutoPadPutsTheOddUnitAtTheRightEnd) {
  Tensor x = Tensor::FromVector<double>({1, 1, 4}, {2, 4, 6, 8});
  std::vector<Tensor> upper = RunAll(
      "AveragePool", {x}, {{"kernel_shape", AttrValue::Ints({2})}, {"auto_pad", AttrValue::String("SAME_UPPER")}});
  ExpectNear(upper[0], {3, 5, 7, 8}, kTol);
  std::vector<Tensor> lower = RunAll(
      "AveragePool", {x}, {{"kernel_shape", AttrValue::Ints({2})}, {"auto_pad", AttrValue::String("SAME_LOWER")}});
  ExpectNear(lower[0], {2, 3, 5, 7}, kTol);
}

TEST(AveragePoolKernelTest, ThreeDimensionalWindow) {
  // 2x2x2 window over a 2x2x3 iota: averages of two 8-element blocks.
  std::vector<Tensor> out =
      RunAll("AveragePool", {Iota({1, 1, 2, 2, 3})}, {{"kernel_shape", AttrValue::Ints({2, 2, 2})}});
  EXPECT_EQ(out[0].shape(), (Shape{1, 1, 1, 1, 2}));
  ExpectNear(out[0], {(0 + 1 + 3 + 4 + 6 + 7 + 9 + 10) / 8.0, (1 + 2 + 4 + 5 + 7 + 8 + 10 + 11) / 8.0}, 1e-6);
}

TEST(GlobalAveragePoolKernelTest, MeansOverAllSpatialDims) {
  std::vector<Tensor> out = RunAll("GlobalAveragePool", {Iota({2, 3, 2, 2})});
  EXPECT_EQ(out[0].shape(), (Shape{2, 3, 1, 1}));
  ExpectNear(out[0], {1.5, 5.5, 9.5, 13.5, 17.5, 21.5}, 1e-6);
  std::vector<Tensor> one_d = RunAll("GlobalAveragePool", {Tensor::FromVector<double>({1, 2, 3}, {1, 2, 6, -1, 0, 4})});
  EXPECT_EQ(one_d[0].shape(), (Shape{1, 2, 1}));
  ExpectNear(one_d[0], {3, 1}, kTol);
  std::vector<Tensor> empty = RunAll("GlobalAveragePool", {Tensor(DType::kF32, {0, 3, 4, 4})});
  EXPECT_EQ(empty[0].shape(), (Shape{0, 3, 1, 1}));
}

}  // namespace
}  // namespace tsr

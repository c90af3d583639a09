// Reference kernels of the backward ops (kernels/reference/gradient_kernels.cc):
// hand-computed ConvGradFilter, MaxPoolGrad (first maximum wins a tie),
// AveragePoolGrad (both count_include_pad divisors), GatherGrad (repeated and
// negative indices accumulate; out-of-range fails), SliceGrad (negative steps),
// PadGrad (each mode folds the padding back; a dY of the wrong shape fails), the
// invariants of the normalization backward, and f32 agreeing with f64 for every op.
#include <cmath>
#include <cstdint>
#include <functional>
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
using ::tsr::testing::Make;
using ::tsr::testing::Random;
using ::tsr::testing::RunAll;
using ::tsr::testing::RunOne;
using ::tsr::testing::Values;

constexpr double kTol = 1e-12;

Tensor F64(Shape shape, const std::vector<double>& values) { return Make(DType::kF64, std::move(shape), values); }
Tensor I64s(const std::vector<int64_t>& v) {
  return Tensor::FromVector<int64_t>(Shape({static_cast<int64_t>(v.size())}), v);
}

TEST(ConvGradFilterKernelTest, HandComputed) {
  // dY of ones: each weight tap's gradient is the sum of the inputs it met.
  const Tensor x = F64({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  const Tensor dy = F64({1, 1, 2, 2}, {1, 1, 1, 1});
  ExpectNear(RunOne("ConvGradFilter", {x, dy}, {{"kernel_shape", AttrValue::Ints({2, 2})}}), {12, 16, 24, 28}, kTol);
  // Stride 2 with a pad of 1: taps outside X contribute nothing.
  const Tensor dy2 = F64({1, 1, 2, 2}, {1, 2, 3, 4});
  ExpectNear(RunOne("ConvGradFilter", {x, dy2},
                    {{"kernel_shape", AttrValue::Ints({2, 2})},
                     {"strides", AttrValue::Ints({2, 2})},
                     {"pads", AttrValue::Ints({1, 1, 1, 1})}}),
             {5 * 4, 4 * 3 + 6 * 4, 2 * 2 + 8 * 4, 1 * 1 + 3 * 2 + 7 * 3 + 9 * 4}, kTol);
}

TEST(MaxPoolGradKernelTest, FirstMaximumTakesTheGradient) {
  const Tensor x = F64({1, 1, 2, 3}, {1, 5, 2, 3, 4, 0});
  const AttrMap attrs = {{"kernel_shape", AttrValue::Ints({2, 2})}};
  ExpectNear(RunOne("MaxPoolGrad", {x, F64({1, 1, 1, 2}, {1, 2})}, attrs), {0, 3, 0, 0, 0, 0}, kTol);
  // All equal: the first element of each window in window order.
  const Tensor flat = F64({1, 1, 2, 3}, {7, 7, 7, 7, 7, 7});
  ExpectNear(RunOne("MaxPoolGrad", {flat, F64({1, 1, 1, 2}, {1, 2})}, attrs), {1, 2, 0, 0, 0, 0}, kTol);
}

TEST(AveragePoolGradKernelTest, Divisors) {
  const Tensor x = F64({1, 1, 3}, {0, 0, 0});
  const Tensor dy = F64({1, 1, 4}, {1, 2, 4, 8});
  AttrMap attrs = {{"kernel_shape", AttrValue::Ints({2})}, {"pads", AttrValue::Ints({1, 1})}};
  ExpectNear(RunOne("AveragePoolGrad", {x, dy}, attrs), {1 + 1, 1 + 2, 2 + 8}, kTol);
  attrs["count_include_pad"] = AttrValue::Int(1);
  ExpectNear(RunOne("AveragePoolGrad", {x, dy}, attrs), {0.5 + 1, 1 + 2, 2 + 4}, kTol);
  // ceil_mode: the last window [4, 6) of X [5] has one tap past the end, never counted.
  const AttrMap ceil = {{"kernel_shape", AttrValue::Ints({2})},
                        {"strides", AttrValue::Ints({2})},
                        {"ceil_mode", AttrValue::Int(1)},
                        {"count_include_pad", AttrValue::Int(1)}};
  ExpectNear(RunOne("AveragePoolGrad", {F64({1, 1, 5}, {0, 0, 0, 0, 0}), F64({1, 1, 3}, {2, 4, 6})}, ceil),
             {1, 1, 2, 2, 6}, kTol);
}

TEST(GatherGradKernelTest, AccumulatesRepeatedAndNegativeIndices) {
  const Tensor data = F64({3, 2}, {0, 0, 0, 0, 0, 0});
  const Tensor indices = Tensor::FromVector<int64_t>(Shape({3}), {2, -1, 0});
  const Tensor dy = F64({3, 2}, {1, 2, 3, 4, 5, 6});
  ExpectNear(RunOne("GatherGrad", {dy, indices, data}), {5, 6, 0, 0, 4, 6}, kTol);
  // Along axis 1 with i32 indices of rank 2.
  const Tensor idx2 = Tensor::FromVector<int32_t>(Shape({1, 2}), {1, 1});
  ExpectNear(RunOne("GatherGrad", {F64({3, 1, 2}, {1, 2, 3, 4, 5, 6}), idx2, data}, {{"axis", AttrValue::Int(1)}}),
             {0, 3, 0, 7, 0, 11}, kTol);
  absl::StatusOr<std::vector<Tensor>> bad =
      RunOp("GatherGrad", {F64({1, 2}, {1, 2}), Tensor::FromVector<int64_t>(Shape({1}), {3}), data});
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(std::string(bad.status().message()).find("out of range"), std::string::npos) << bad.status();
}

TEST(SliceGradKernelTest, NegativeStep) {
  const Tensor data = F64({5}, {0, 0, 0, 0, 0});
  ExpectNear(RunOne("SliceGrad", {F64({3}, {1, 2, 3}), data, I64s({4}), I64s({-100}), I64s({0}), I64s({-2})}),
             {3, 0, 2, 0, 1}, kTol);
  const Tensor grid = F64({2, 3}, {0, 0, 0, 0, 0, 0});
  ExpectNear(RunOne("SliceGrad", {F64({2, 1}, {1, 2}), grid, I64s({1}), I64s({2}), I64s({-1}), std::nullopt}),
             {0, 1, 0, 0, 2, 0}, kTol);
}

TEST(PadGradKernelTest, FoldsThePaddingBack) {
  const Tensor data = F64({3}, {0, 0, 0});
  // Pad [a b c] by (2, 1): reflect [c b | a b c | b], edge [a a | a b c | c],
  // wrap [b c | a b c | a], constant [0 0 | a b c | 0].
  const Tensor dy = F64({6}, {1, 2, 3, 4, 5, 6});
  auto pad_grad = [&](const char* mode) {
    return RunOne("PadGrad", {dy, data, I64s({2, 1})}, {{"mode", AttrValue::String(mode)}});
  };
  ExpectNear(pad_grad("reflect"), {3, 2 + 4 + 6, 1 + 5}, kTol);
  ExpectNear(pad_grad("edge"), {1 + 2 + 3, 4, 5 + 6}, kTol);
  ExpectNear(pad_grad("wrap"), {3 + 6, 1 + 4, 2 + 5}, kTol);
  ExpectNear(pad_grad("constant"), {3, 4, 5}, kTol);
  // Two axes, only the last padded (axes input), with a crop at its end.
  const Tensor grid = F64({2, 2}, {0, 0, 0, 0});
  ExpectNear(RunOne("PadGrad", {F64({2, 2}, {1, 2, 3, 4}), grid, I64s({1, -1}), I64s({-1})},
                    {{"mode", AttrValue::String("edge")}}),
             {1 + 2, 0, 3 + 4, 0}, kTol);
  absl::StatusOr<std::vector<Tensor>> bad = RunOp("PadGrad", {F64({5}, {1, 2, 3, 4, 5}), data, I64s({2, 1})});
  EXPECT_FALSE(bad.ok());
}

// With epsilon = 0: dX sums to 0 and is orthogonal to Normalized over every
// normalized group (dX removes G's components along 1 and Normalized), and Normalized
// has mean 0.
void ExpectNormalizationInvariants(const std::vector<Tensor>& out, int64_t groups, int64_t count,
                                   const std::function<int64_t(int64_t, int64_t)>& at) {
  const std::vector<double> dx = Values(out[0]), xhat = Values(out[1]);
  for (int64_t g = 0; g < groups; ++g) {
    double sum_dx = 0, dot = 0, sum_xhat = 0;
    for (int64_t j = 0; j < count; ++j) {
      sum_dx += dx[at(g, j)];
      dot += dx[at(g, j)] * xhat[at(g, j)];
      sum_xhat += xhat[at(g, j)];
    }
    EXPECT_NEAR(sum_dx, 0, 1e-10) << "group " << g;
    EXPECT_NEAR(dot, 0, 1e-10) << "group " << g;
    EXPECT_NEAR(sum_xhat, 0, 1e-10) << "group " << g;
  }
}

TEST(NormalizationGradKernelTest, Invariants) {
  const uint32_t seed = 77;
  SCOPED_TRACE(absl::StrCat("seed=", seed));
  std::mt19937 rng(seed);
  const Tensor x = Random({3, 2, 4}, rng), g = Random({3, 2, 4}, rng);
  ExpectNormalizationInvariants(RunAll("BatchNormalizationGrad", {x, g}, {{"epsilon", AttrValue::Float(0)}}), 2, 12,
                                [](int64_t c, int64_t j) { return ((j / 4) * 2 + c) * 4 + j % 4; });
  ExpectNormalizationInvariants(
      RunAll("LayerNormalizationGrad", {x, g}, {{"axis", AttrValue::Int(1)}, {"epsilon", AttrValue::Float(0)}}), 3, 8,
      [](int64_t row, int64_t j) { return row * 8 + j; });
}

Tensor ToF32(const Tensor& t) { return Make(DType::kF32, t.shape(), Values(t)); }

// Every op on f32 copies of its float inputs agrees with f64 to f32 precision.
TEST(GradientKernelsTest, F32AgreesWithF64) {
  const uint32_t seed = 78;
  SCOPED_TRACE(absl::StrCat("seed=", seed));
  std::mt19937 rng(seed);
  struct Case {
    std::string op;
    std::vector<std::optional<Tensor>> inputs;
    AttrMap attrs;
  };
  const AttrMap window = {{"kernel_shape", AttrValue::Ints({3, 2})},
                          {"strides", AttrValue::Ints({2, 1})},
                          {"pads", AttrValue::Ints({1, 0, 1, 1})}};
  AttrMap grouped = window;
  grouped["group"] = AttrValue::Int(2);
  const std::vector<Case> cases = {
      {"ConvGradFilter", {Random({2, 4, 5, 4}, rng), Random({2, 6, 3, 4}, rng)}, grouped},
      {"MaxPoolGrad", {Random({2, 3, 5, 4}, rng), Random({2, 3, 3, 4}, rng)}, window},
      {"AveragePoolGrad", {Random({2, 3, 5, 4}, rng), Random({2, 3, 3, 4}, rng)}, window},
      {"BatchNormalizationGrad", {Random({4, 3, 5}, rng), Random({4, 3, 5}, rng)}, {}},
      {"LayerNormalizationGrad", {Random({4, 3, 5}, rng), Random({4, 3, 5}, rng)}, {{"axis", AttrValue::Int(-2)}}},
      {"GatherGrad",
       {Random({4, 3}, rng), Tensor::FromVector<int64_t>(Shape({3}), {1, 1, -1}), Random({4, 2}, rng)},
       {{"axis", AttrValue::Int(1)}}},
      {"SliceGrad", {Random({2, 3}, rng), Random({5, 3}, rng), I64s({0}), I64s({4}), std::nullopt, I64s({2})}, {}},
      {"PadGrad",
       {Random({6, 4}, rng), Random({3, 2}, rng), I64s({2, 1, 1, 1})},
       {{"mode", AttrValue::String("reflect")}}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.op);
    std::vector<std::optional<Tensor>> f32 = c.inputs;
    for (std::optional<Tensor>& t : f32) {
      if (t.has_value() && t->dtype() == DType::kF64) t = ToF32(*t);
    }
    const std::vector<Tensor> want = RunAll(c.op, c.inputs, c.attrs), got = RunAll(c.op, f32, c.attrs);
    ASSERT_EQ(want.size(), got.size());
    for (size_t i = 0; i < want.size(); ++i) {
      ASSERT_EQ(got[i].dtype(), DType::kF32);
      ExpectNear(got[i], Values(want[i]), 1e-4);
    }
  }
}

}  // namespace
}  // namespace tsr

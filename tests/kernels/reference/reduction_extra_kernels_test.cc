// Tests of the reference kernels added for the ONNX reductions, scans, selections,
// normalizations and losses: ReduceL1/SumSquare/LogSum/LogSumExp, ArgMin, CumSum, TopK
// (reduction_kernels.cc), Hardmax, InstanceNormalization, LRN,
// MeanVarianceNormalization (normalization_kernels.cc), NegativeLogLikelihoodLoss
// (loss_kernels.cc) and Einsum (einsum_kernels.cc). Expected values are worked out
// by hand in the comments.
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/attribute.h"
#include "graph/op_registry.h"
#include "gtest/gtest.h"
#include "kernels/kernel.h"
#include "kernels/run_op.h"
#include "tests/kernels/kernel_test_util.h"

namespace tsr {
namespace {

using ::tsr::testing::AcceptedDTypes;
using ::tsr::testing::ExpectValues;
using ::tsr::testing::kInf;
using ::tsr::testing::kNaN;
using ::tsr::testing::Make;
using ::tsr::testing::RunAll;
using ::tsr::testing::RunOne;

Tensor Axes(const std::vector<double>& axes) {
  return Make(DType::kI64, Shape{static_cast<int64_t>(axes.size())}, axes);
}
Tensor I64Scalar(int64_t v) { return Tensor::Scalar<int64_t>(v); }
AttrMap Attrs(std::initializer_list<std::pair<const std::string, AttrValue>> a) { return AttrMap(a); }

TEST(ReductionExtraKernelsTest, RegisteredForEveryAcceptedDType) {
  for (const char* op :
       {"ReduceL1", "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp", "ArgMin", "CumSum", "TopK", "Hardmax",
        "InstanceNormalization", "LRN", "MeanVarianceNormalization", "NegativeLogLikelihoodLoss", "Einsum"}) {
    EXPECT_EQ(KernelRegistry::Global().DTypesFor(op, kReferenceDevice), AcceptedDTypes(op)) << op;
  }
}

TEST(ReductionExtraKernelsTest, NormsAndSumsOfSquaresAlongOneAxis) {
  for (DType dtype : {DType::kF32, DType::kF64, DType::kF16, DType::kBF16, DType::kI32, DType::kI64}) {
    SCOPED_TRACE(DTypeName(dtype));
    const Tensor x = Make(dtype, Shape{2, 3}, {1, -2, 3, 4, 5, -6});
    ExpectValues(RunOne("ReduceL1", {x, Axes({1})}), {6, 15});
    ExpectValues(RunOne("ReduceSumSquare", {x, Axes({1})}), {14, 77});
    // Negative axes and keepdims=0: columns.
    Tensor columns = RunOne("ReduceSumSquare", {x, Axes({-2})}, Attrs({{"keepdims", AttrValue::Int(0)}}));
    EXPECT_EQ(columns.shape(), (Shape{3}));
    ExpectValues(columns, {17, 29, 45});
  }
}

TEST(ReductionExtraKernelsTest, LogSumAndLogSumExp) {
  const Tensor x = Make(DType::kF64, Shape{2, 3}, {1, 2, 3, 4, 5, 6});
  ExpectValues(RunOne("ReduceLogSum", {x, Axes({1})}), {std::log(6.0), std::log(15.0)}, 1e-15);
  // log(e + e^2 + e^3) = 3 + log(1 + e^-1 + e^-2).
  const double lse = 3 + std::log(1 + std::exp(-1.0) + std::exp(-2.0));
  ExpectValues(RunOne("ReduceLogSumExp", {x, Axes({1})}), {lse, lse + 3}, 1e-15);
  // Shifted by the maximum: no overflow at 1000 (log(2 e^1000) = 1000 + log 2).
  const Tensor big = Make(DType::kF32, Shape{2}, {1000, 1000});
  ExpectValues(RunOne("ReduceLogSumExp", {big}), {1000 + std::log(2.0)}, 1e-6);
  // -inf elements drop out; an all -inf group stays -inf (not NaN).
  const Tensor inf = Make(DType::kF64, Shape{2, 2}, {-kInf, 0, -kInf, -kInf});
  ExpectValues(RunOne("ReduceLogSumExp", {inf, Axes({1})}), {0, -kInf});
  // Integers: computed in double, truncated: log 6 = 1.79, log(e+e^2+e^3) = 3.41.
  const Tensor xi = Make(DType::kI32, Shape{1, 3}, {1, 2, 3});
  ExpectValues(RunOne("ReduceLogSum", {xi, Axes({1})}), {1});
  ExpectValues(RunOne("ReduceLogSumExp", {xi, Axes({1})}), {3});
}

TEST(ReductionExtraKernelsTest, EmptyAxesAndNoop) {
  const Tensor x = Make(DType::kF32, Shape{2, 2}, {1, -2, 3, -4});
  // Absent (or empty) axes reduce everything.
  Tensor all = RunOne("ReduceL1", {x});
  EXPECT_EQ(all.shape(), (Shape{1, 1}));
  ExpectValues(all, {10});
  ExpectValues(RunOne("ReduceSumSquare", {x, Axes({})}), {30});
  // noop_with_empty_axes=1 returns the input unchanged.
  for (const char* op : {"ReduceL1", "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp"}) {
    SCOPED_TRACE(op);
    Tensor same = RunOne(op, {x}, Attrs({{"noop_with_empty_axes", AttrValue::Int(1)}}));
    EXPECT_EQ(same.shape(), (Shape{2, 2}));
    ExpectValues(same, {1, -2, 3, -4});
  }
}

TEST(ReductionExtraKernelsTest, EmptyReductionsGiveIdentities) {
  const Tensor x = Make(DType::kF32, Shape{2, 0}, {});
  ExpectValues(RunOne("ReduceL1", {x, Axes({1})}), {0, 0});
  ExpectValues(RunOne("ReduceSumSquare", {x, Axes({1})}), {0, 0});
  ExpectValues(RunOne("ReduceLogSum", {x, Axes({1})}), {-kInf, -kInf});
  ExpectValues(RunOne("ReduceLogSumExp", {x, Axes({1})}), {-kInf, -kInf});
}

TEST(ReductionExtraKernelsTest, IntegerSumOfSquaresWraps) {
  // 50000^2 = 2.5e9 wraps in int32 to 2.5e9 - 2^32 = -1794967296.
  const Tensor x = Make(DType::kI32, Shape{1}, {50000});
  ExpectValues(RunOne("ReduceSumSquare", {x}), {-1794967296.0});
}

TEST(ReductionExtraKernelsTest, ArgMin) {
  const Tensor x = Make(DType::kF32, Shape{2, 3}, {3, 1, 1, 0, 5, 0});
  Tensor first = RunOne("ArgMin", {x}, Attrs({{"axis", AttrValue::Int(1)}}));
  EXPECT_EQ(first.dtype(), DType::kI64);
  EXPECT_EQ(first.shape(), (Shape{2, 1}));
  ExpectValues(first, {1, 0});
  ExpectValues(RunOne("ArgMin", {x}, Attrs({{"axis", AttrValue::Int(1)}, {"select_last_index", AttrValue::Int(1)}})),
               {2, 2});
  Tensor down = RunOne("ArgMin", {x}, Attrs({{"axis", AttrValue::Int(-2)}, {"keepdims", AttrValue::Int(0)}}));
  EXPECT_EQ(down.shape(), (Shape{3}));
  ExpectValues(down, {1, 0, 1});
  // NaN is "smaller" than everything, as numpy's argmin has it.
  ExpectValues(RunOne("ArgMin", {Make(DType::kF64, Shape{3}, {1, kNaN, -5})}), {1});
  ExpectValues(RunOne("ArgMin", {Make(DType::kU8, Shape{3}, {7, 2, 9})}), {1});
}

TEST(ReductionExtraKernelsTest, CumSumDirections) {
  const Tensor x = Make(DType::kF32, Shape{4}, {1, 2, 3, 4});
  const Tensor axis = I64Scalar(0);
  ExpectValues(RunOne("CumSum", {x, axis}), {1, 3, 6, 10});
  ExpectValues(RunOne("CumSum", {x, axis}, Attrs({{"exclusive", AttrValue::Int(1)}})), {0, 1, 3, 6});
  ExpectValues(RunOne("CumSum", {x, axis}, Attrs({{"reverse", AttrValue::Int(1)}})), {10, 9, 7, 4});
  ExpectValues(RunOne("CumSum", {x, axis}, Attrs({{"reverse", AttrValue::Int(1)}, {"exclusive", AttrValue::Int(1)}})),
               {9, 7, 4, 0});
}

TEST(ReductionExtraKernelsTest, CumSumAxes) {
  // [[1,2,3],[4,5,6]]: axis 0 -> [[1,2,3],[5,7,9]]; axis 1 (or -1, as i32) -> rows.
  for (DType dtype : {DType::kF64, DType::kI32, DType::kI64, DType::kBF16}) {
    SCOPED_TRACE(DTypeName(dtype));
    const Tensor x = Make(dtype, Shape{2, 3}, {1, 2, 3, 4, 5, 6});
    ExpectValues(RunOne("CumSum", {x, I64Scalar(0)}), {1, 2, 3, 5, 7, 9});
    ExpectValues(RunOne("CumSum", {x, Make(DType::kI32, Shape{1}, {-1})}), {1, 3, 6, 4, 9, 15});
  }
  absl::StatusOr<std::vector<Tensor>> bad = RunOp("CumSum", {Make(DType::kF32, Shape{2}, {1, 2}), I64Scalar(1)});
  EXPECT_FALSE(bad.ok());
}

TEST(ReductionExtraKernelsTest, TopKLargestSmallestAndTies) {
  const Tensor x = Make(DType::kF32, Shape{2, 4}, {3, 1, 3, 2, 0, 9, 9, 9});
  std::vector<Tensor> largest = RunAll("TopK", {x, Axes({2})});
  ASSERT_EQ(largest.size(), 2u);
  EXPECT_EQ(largest[0].shape(), (Shape{2, 2}));
  EXPECT_EQ(largest[1].dtype(), DType::kI64);
  ExpectValues(largest[0], {3, 3, 9, 9});
  ExpectValues(largest[1], {0, 2, 1, 2});  // equal values: lower index first
  std::vector<Tensor> smallest = RunAll("TopK", {x, Axes({3})}, Attrs({{"largest", AttrValue::Int(0)}}));
  ExpectValues(smallest[0], {1, 2, 3, 0, 9, 9});
  ExpectValues(smallest[1], {1, 3, 0, 0, 1, 2});
  // Along axis 0, K = 1: the larger of each column.
  std::vector<Tensor> column = RunAll("TopK", {x, Axes({1})}, Attrs({{"axis", AttrValue::Int(0)}}));
  EXPECT_EQ(column[0].shape(), (Shape{1, 4}));
  ExpectValues(column[0], {3, 9, 9, 9});
  ExpectValues(column[1], {0, 1, 1, 1});
  // K = 0 gives empty outputs.
  std::vector<Tensor> none = RunAll("TopK", {x, Axes({0})});
  EXPECT_EQ(none[0].shape(), (Shape{2, 0}));
  // NaN ranks above every number.
  std::vector<Tensor> nan = RunAll("TopK", {Make(DType::kF64, Shape{3}, {1, kNaN, 2}), Axes({2})});
  ExpectValues(nan[0], {kNaN, 2});
  ExpectValues(nan[1], {1, 2});
  // Integer data.
  std::vector<Tensor> ints = RunAll("TopK", {Make(DType::kI64, Shape{3}, {-5, 7, 0}), Axes({2})});
  ExpectValues(ints[0], {7, 0});
}

TEST(ReductionExtraKernelsTest, Hardmax) {
  const Tensor x = Make(DType::kF32, Shape{2, 3}, {1, 3, 3, 2, 1, 0});
  ExpectValues(RunOne("Hardmax", {x}), {0, 1, 0, 1, 0, 0});  // the first of equal maxima
  ExpectValues(RunOne("Hardmax", {x}, Attrs({{"axis", AttrValue::Int(0)}})), {0, 1, 1, 1, 0, 0});
}

TEST(ReductionExtraKernelsTest, InstanceNormalization) {
  // x [1,2,2]: channel 0 = [1,3] (mean 2, var 1), channel 1 = [2,2] (var 0).
  const Tensor x = Make(DType::kF64, Shape{1, 2, 2}, {1, 3, 2, 2});
  const Tensor scale = Make(DType::kF64, Shape{2}, {2, 1});
  const Tensor bias = Make(DType::kF64, Shape{2}, {0, 0.5});
  const double eps = 1e-5, k = 2 / std::sqrt(1 + eps);
  ExpectValues(RunOne("InstanceNormalization", {x, scale, bias}), {-k, k, 0.5, 0.5}, 1e-15);
  // epsilon changes the denominator.
  const double k2 = 2 / std::sqrt(1 + 0.5);
  ExpectValues(RunOne("InstanceNormalization", {x, scale, bias}, Attrs({{"epsilon", AttrValue::Float(0.5)}})),
               {-k2, k2, 0.5, 0.5}, 1e-15);
}

TEST(ReductionExtraKernelsTest, LRNWindows) {
  const Tensor x = Make(DType::kF64, Shape{1, 3, 1, 1}, {1, 2, 3});
  // size 3 (channels c-1..c+1), alpha/size = 1, beta 1, bias 1: y = x / (1 + sum x^2).
  ExpectValues(
      RunOne("LRN", {x},
             Attrs({{"size", AttrValue::Int(3)}, {"alpha", AttrValue::Float(3)}, {"beta", AttrValue::Float(1)}})),
      {1.0 / 6, 2.0 / 15, 3.0 / 14}, 1e-15);
  // size 2: channels c..c+1 (floor((2-1)/2) = 0 before, 1 after).
  ExpectValues(
      RunOne("LRN", {x},
             Attrs({{"size", AttrValue::Int(2)}, {"alpha", AttrValue::Float(2)}, {"beta", AttrValue::Float(1)}})),
      {1.0 / 6, 2.0 / 14, 3.0 / 10}, 1e-15);
  // Defaults: alpha 1e-4, beta 0.75, bias 1; size 1 squares the element itself.
  ExpectValues(RunOne("LRN", {x}, Attrs({{"size", AttrValue::Int(1)}})),
               {1 / std::pow(1 + 1e-4, 0.75), 2 / std::pow(1 + 4e-4, 0.75), 3 / std::pow(1 + 9e-4, 0.75)}, 1e-15);
}

TEST(ReductionExtraKernelsTest, MeanVarianceNormalization) {
  // Default axes [0,2,3] of [1,1,2,2]: mean 2.5, population std sqrt(1.25).
  const Tensor x = Make(DType::kF64, Shape{1, 1, 2, 2}, {1, 2, 3, 4});
  const double s = std::sqrt(1.25) + 1e-9;
  ExpectValues(RunOne("MeanVarianceNormalization", {x}), {-1.5 / s, -0.5 / s, 0.5 / s, 1.5 / s}, 1e-15);
  // Per row of [2,2]: [1,2] -> [-1,1] (std 0.5), [3,3] -> [0,0] (0 / 1e-9).
  const Tensor rows = Make(DType::kF32, Shape{2, 2}, {1, 2, 3, 3});
  ExpectValues(RunOne("MeanVarianceNormalization", {rows}, Attrs({{"axes", AttrValue::Ints({1})}})), {-1, 1, 0, 0},
               1e-6);
}

// log-probabilities [2,3]: row 0 = log(0.2, 0.3, 0.5), row 1 = log(0.6, 0.3, 0.1).
Tensor LogProbs() {
  return Make(DType::kF64, Shape{2, 3},
              {std::log(0.2), std::log(0.3), std::log(0.5), std::log(0.6), std::log(0.3), std::log(0.1)});
}

TEST(ReductionExtraKernelsTest, NegativeLogLikelihoodReductions) {
  const Tensor target = Make(DType::kI64, Shape{2}, {2, 0});
  const double l0 = -std::log(0.5), l1 = -std::log(0.6);
  Tensor none =
      RunOne("NegativeLogLikelihoodLoss", {LogProbs(), target}, Attrs({{"reduction", AttrValue::String("none")}}));
  EXPECT_EQ(none.shape(), (Shape{2}));
  ExpectValues(none, {l0, l1}, 1e-15);
  ExpectValues(
      RunOne("NegativeLogLikelihoodLoss", {LogProbs(), target}, Attrs({{"reduction", AttrValue::String("sum")}})),
      {l0 + l1}, 1e-15);
  Tensor mean = RunOne("NegativeLogLikelihoodLoss", {LogProbs(), target});
  EXPECT_EQ(mean.shape(), Shape());
  ExpectValues(mean, {(l0 + l1) / 2}, 1e-15);
  // Weights: class 2 weighs 3, class 0 weighs 0.5; mean divides by 3.5.
  const Tensor weight = Make(DType::kF64, Shape{3}, {0.5, 1, 3});
  ExpectValues(RunOne("NegativeLogLikelihoodLoss", {LogProbs(), target, weight}), {(3 * l0 + 0.5 * l1) / 3.5}, 1e-15);
  ExpectValues(RunOne("NegativeLogLikelihoodLoss", {LogProbs(), target, weight},
                      Attrs({{"reduction", AttrValue::String("none")}})),
               {3 * l0, 0.5 * l1}, 1e-15);
}

TEST(ReductionExtraKernelsTest, NegativeLogLikelihoodIgnoreIndex) {
  // The second sample's target -1 is ignored: loss 0, and out of the mean's weight.
  const Tensor target = Make(DType::kI32, Shape{2}, {2, -1});
  const AttrMap ignore = {{"ignore_index", AttrValue::Int(-1)}};
  ExpectValues(RunOne("NegativeLogLikelihoodLoss", {LogProbs(), target}, ignore), {-std::log(0.5)}, 1e-15);
  AttrMap none = ignore;
  none["reduction"] = AttrValue::String("none");
  ExpectValues(RunOne("NegativeLogLikelihoodLoss", {LogProbs(), target}, none), {-std::log(0.5), 0}, 1e-15);
  // Every target ignored: the mean is 0/0 = NaN (as in ONNX's reference), the sum 0.
  const Tensor all_ignored = Make(DType::kI64, Shape{2}, {-1, -1});
  ExpectValues(RunOne("NegativeLogLikelihoodLoss", {LogProbs(), all_ignored}, ignore), {kNaN});
  AttrMap sum = ignore;
  sum["reduction"] = AttrValue::String("sum");
  ExpectValues(RunOne("NegativeLogLikelihoodLoss", {LogProbs(), all_ignored}, sum), {0});
  // A target outside [0, C) that is not ignore_index is an error.
  EXPECT_FALSE(RunOp("NegativeLogLikelihoodLoss", {LogProbs(), Make(DType::kI64, Shape{2}, {3, 0})}).ok());
}

TEST(ReductionExtraKernelsTest, NegativeLogLikelihoodOverSpatialDims) {
  // input [1,2,2] (N=1, C=2, d1=2), target [1,2] = [1,0]: picks input[0,1,0] and input[0,0,1].
  const Tensor input = Make(DType::kF32, Shape{1, 2, 2}, {-1, -2, -3, -4});
  const Tensor target = Make(DType::kI64, Shape{1, 2}, {1, 0});
  Tensor none = RunOne("NegativeLogLikelihoodLoss", {input, target}, Attrs({{"reduction", AttrValue::String("none")}}));
  EXPECT_EQ(none.shape(), (Shape{1, 2}));
  ExpectValues(none, {3, 2});
}

TEST(ReductionExtraKernelsTest, NegativeLogLikelihoodOfLogSoftmaxIsSoftmaxCrossEntropy) {
  const Tensor scores = Make(DType::kF64, Shape{2, 3, 2}, {0.1, -1, 2, 0.5, 0.3, 0.3, -2, 1, 0, 0, 4, -0.5});
  const Tensor labels = Make(DType::kI64, Shape{2, 2}, {0, 2, 1, 1});
  const Tensor weights = Make(DType::kF64, Shape{3}, {1, 2, 0.5});
  const AttrMap attrs = {{"ignore_index", AttrValue::Int(2)}};
  const std::vector<Tensor> sce = RunAll("SoftmaxCrossEntropyLoss", {scores, labels, weights}, attrs);
  ASSERT_EQ(sce.size(), 2u);
  const Tensor nll = RunOne("NegativeLogLikelihoodLoss", {sce[1], labels, weights}, attrs);
  ExpectValues(nll, testing::Values(sce[0]), 1e-15);
}

TEST(ReductionExtraKernelsTest, EinsumProducts) {
  const Tensor a = Make(DType::kF64, Shape{2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor b = Make(DType::kF64, Shape{3, 2}, {1, 0, 0, 1, 2, 2});
  const AttrMap matmul = {{"equation", AttrValue::String("ij,jk->ik")}};
  // [[1+6, 2+6], [4+12, 5+12]]
  ExpectValues(RunOne("Einsum", {a, b}, matmul), {7, 8, 16, 17});
  // Implicit output: labels used once, sorted: "ij,jk" -> "ik"; "ji" -> "ij" (a transpose).
  ExpectValues(RunOne("Einsum", {a, b}, {{"equation", AttrValue::String("ij,jk")}}), {7, 8, 16, 17});
  Tensor t = RunOne("Einsum", {a}, {{"equation", AttrValue::String("ji")}});
  EXPECT_EQ(t.shape(), (Shape{3, 2}));
  ExpectValues(t, {1, 4, 2, 5, 3, 6});
  // Sum of everything, and an outer product.
  ExpectValues(RunOne("Einsum", {a}, {{"equation", AttrValue::String("ij->")}}), {21});
  const Tensor u = Make(DType::kI32, Shape{2}, {1, 2});
  const Tensor v = Make(DType::kI32, Shape{3}, {3, 4, 5});
  ExpectValues(RunOne("Einsum", {u, v}, {{"equation", AttrValue::String("i,j->ij")}}), {3, 4, 5, 6, 8, 10});
  // Inner product with spaces in the equation.
  ExpectValues(RunOne("Einsum", {u, u}, {{"equation", AttrValue::String("i , i")}}), {5});
}

TEST(ReductionExtraKernelsTest, EinsumDiagonalsAndEllipsis) {
  const Tensor m = Make(DType::kF32, Shape{2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  // Batch diagonal and batch trace.
  ExpectValues(RunOne("Einsum", {m}, {{"equation", AttrValue::String("...ii->...i")}}), {1, 4, 5, 8});
  ExpectValues(RunOne("Einsum", {m}, {{"equation", AttrValue::String("bii->b")}}), {5, 13});
  ExpectValues(RunOne("Einsum", {m}, {{"equation", AttrValue::String("iii")}}), {9});
  // Broadcast ellipsis: [1,2,2] x [2,2,1] -> [2,2,1]; the first operand repeats.
  const Tensor left = Make(DType::kF32, Shape{1, 2, 2}, {1, 2, 3, 4});
  const Tensor right = Make(DType::kF32, Shape{2, 2, 1}, {1, 1, 0, 1});
  Tensor y = RunOne("Einsum", {left, right}, {{"equation", AttrValue::String("...ij,...jk->...ik")}});
  EXPECT_EQ(y.shape(), (Shape{2, 2, 1}));
  ExpectValues(y, {3, 7, 2, 4});
}

}  // namespace
}  // namespace tsr

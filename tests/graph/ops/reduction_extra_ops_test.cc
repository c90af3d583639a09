// Shape/dtype inference, attribute checks and FLOP estimates of the ops added for
// ONNX: ReduceL1/SumSquare/LogSum/LogSumExp, ArgMin, CumSum, TopK
// (reduction_ops.cc), Hardmax, InstanceNormalization, MeanVarianceNormalization, LRN
// (normalization_ops.cc), NegativeLogLikelihoodLoss (loss_ops.cc) and Einsum
// (einsum_ops.cc).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "graph/op_def.h"
#include "gtest/gtest.h"
#include "tests/graph/ops/op_test_util.h"

namespace tsr {
namespace {

using ::tsr::testing::F32;
using ::tsr::testing::FailsWith;
using ::tsr::testing::Flops;
using ::tsr::testing::I64;
using ::tsr::testing::Infer;
using ::tsr::testing::Infer1;
using ::tsr::testing::Ints;
using ::tsr::testing::Str;
using ::tsr::testing::T;

constexpr int64_t N = kBatchDim;

Tensor Vec(std::vector<int64_t> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return Tensor::FromVector<int64_t>(Shape{n}, v);
}

class ReduceExtraTest : public ::testing::TestWithParam<const char*> {};

TEST_P(ReduceExtraTest, AxesKeepdimsAndNoop) {
  const Tensor axes = Vec({-1});
  EXPECT_EQ(Str(Infer1(GetParam(), {F32({N, 3, 4}), I64({1})}, {}, {nullptr, &axes})), "f32[N,3,1]");
  EXPECT_EQ(Str(Infer1(GetParam(), {F32({N, 3, 4}), I64({1})}, {{"keepdims", AttrValue::Int(0)}}, {nullptr, &axes})),
            "f32[N,3]");
  EXPECT_EQ(Str(Infer1(GetParam(), {F32({N, 3, 4})})), "f32[1,1,1]");
  EXPECT_EQ(Str(Infer1(GetParam(), {F32({N, 3, 4})}, {{"noop_with_empty_axes", AttrValue::Int(1)}})), "f32[N,3,4]");
  EXPECT_EQ(Str(Infer1(GetParam(), {T(DType::kI32, {2, 3})})), "i32[1,1]");
}

TEST_P(ReduceExtraTest, Errors) {
  const Tensor axes = Vec({3});
  EXPECT_TRUE(FailsWith(Infer1(GetParam(), {F32({2, 3}), I64({1})}, {}, {nullptr, &axes}), GetParam(), "axis"));
  EXPECT_TRUE(FailsWith(Infer1(GetParam(), {F32({2, 3}), I64({1})}), GetParam(), "must be a constant"));
  EXPECT_TRUE(FailsWith(Infer1(GetParam(), {T(DType::kBool, {2})}), GetParam(), "dtype"));
  EXPECT_TRUE(FailsWith(Infer1(GetParam(), {F32({2})}, {{"keepdims", AttrValue::Int(2)}}), GetParam(), "keepdims"));
}

INSTANTIATE_TEST_SUITE_P(Ops, ReduceExtraTest,
                         ::testing::Values("ReduceL1", "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp"));

TEST(ReduceExtraFlopsTest, PerInputAndOutputElement) {
  const Tensor axes = Vec({1});
  // [2,3,4] over axis 1: 24 input elements, 8 outputs.
  EXPECT_EQ(Flops("ReduceL1", {F32({2, 3, 4}), I64({1})}, {}, {nullptr, &axes}), 48);
  EXPECT_EQ(Flops("ReduceSumSquare", {F32({2, 3, 4}), I64({1})}, {}, {nullptr, &axes}), 48);
  EXPECT_EQ(Flops("ReduceLogSum", {F32({2, 3, 4}), I64({1})}, {}, {nullptr, &axes}), 32);
  EXPECT_EQ(Flops("ReduceLogSumExp", {F32({2, 3, 4}), I64({1})}, {}, {nullptr, &axes}), 112);
}

TEST(ArgMinTest, ShapesAndErrors) {
  EXPECT_EQ(Str(Infer1("ArgMin", {F32({N, 3, 4})}, {{"axis", AttrValue::Int(-1)}})), "i64[N,3,1]");
  EXPECT_EQ(Str(Infer1("ArgMin", {T(DType::kU8, {5})}, {{"keepdims", AttrValue::Int(0)}})), "i64[]");
  EXPECT_TRUE(FailsWith(Infer1("ArgMin", {F32({2, 3})}, {{"axis", AttrValue::Int(2)}}), "ArgMin", "axis"));
  EXPECT_TRUE(FailsWith(Infer1("ArgMin", {F32({2, 0})}, {{"axis", AttrValue::Int(1)}}), "ArgMin", "is empty"));
  EXPECT_TRUE(FailsWith(Infer1("ArgMin", {F32({2})}, {{"select_last_index", AttrValue::Int(3)}}), "ArgMin",
                        "select_last_index"));
}

TEST(CumSumTest, ShapesAndErrors) {
  // The axis need not be constant (the shape does not depend on it).
  EXPECT_EQ(Str(Infer1("CumSum", {F32({N, 3}), I64({})})), "f32[N,3]");
  EXPECT_EQ(Str(Infer1("CumSum", {T(DType::kI32, {4}), T(DType::kI32, {1})})), "i32[4]");
  const Tensor bad_axis = Tensor::Scalar<int64_t>(2);
  EXPECT_TRUE(FailsWith(Infer1("CumSum", {F32({2, 3}), I64({})}, {}, {nullptr, &bad_axis}), "CumSum", "axis"));
  EXPECT_TRUE(FailsWith(Infer1("CumSum", {F32({2, 3}), I64({2})}), "CumSum", "scalar"));
  EXPECT_TRUE(FailsWith(Infer1("CumSum", {F32({}), I64({})}), "CumSum", "scalar"));
  EXPECT_TRUE(FailsWith(Infer1("CumSum", {F32({3}), I64({})}, {{"reverse", AttrValue::Int(2)}}), "CumSum", "reverse"));
  EXPECT_TRUE(FailsWith(Infer1("CumSum", {T(DType::kU8, {3}), I64({})}), "CumSum", "dtype"));
  EXPECT_EQ(Flops("CumSum", {F32({2, 3}), I64({})}), 6);
}

TEST(TopKTest, ShapesAndErrors) {
  const Tensor k2 = Vec({2});
  EXPECT_EQ(Str(Infer("TopK", {F32({N, 5}), I64({1})}, {}, {nullptr, &k2})), "f32[N,2], i64[N,2]");
  EXPECT_EQ(Str(Infer("TopK", {T(DType::kI32, {5, 3}), I64({1})}, {{"axis", AttrValue::Int(0)}}, {nullptr, &k2})),
            "i32[2,3], i64[2,3]");
  // K may be up to the batch when the axis is symbolic.
  EXPECT_EQ(Str(Infer("TopK", {F32({N}), I64({1})}, {}, {nullptr, &k2})), "f32[2], i64[2]");
  const Tensor k9 = Vec({9});
  EXPECT_TRUE(FailsWith(Infer("TopK", {F32({2, 5}), I64({1})}, {}, {nullptr, &k9}), "TopK", "K is 9"));
  EXPECT_TRUE(FailsWith(Infer("TopK", {F32({2, 5}), I64({1})}), "TopK", "must be a constant"));
  EXPECT_TRUE(FailsWith(Infer("TopK", {F32({2, 5}), I64({2})}, {}, {nullptr, &k2}), "TopK", "[1] is required"));
  EXPECT_TRUE(
      FailsWith(Infer("TopK", {F32({2, 5}), I64({1})}, {{"axis", AttrValue::Int(2)}}, {nullptr, &k2}), "TopK", "axis"));
  EXPECT_TRUE(FailsWith(Infer("TopK", {F32({2, 5}), I64({1})}, {{"largest", AttrValue::Int(5)}}, {nullptr, &k2}),
                        "TopK", "largest"));
  // 10 elements per line of 5, about log2(5) = 3 comparisons each.
  EXPECT_EQ(Flops("TopK", {F32({2, 5}), I64({1})}, {}, {nullptr, &k2}), 30);
}

TEST(NormalizationExtraTest, Hardmax) {
  EXPECT_EQ(Str(Infer1("Hardmax", {F32({N, 3})})), "f32[N,3]");
  EXPECT_TRUE(FailsWith(Infer1("Hardmax", {F32({2, 3})}, {{"axis", AttrValue::Int(2)}}), "Hardmax", "axis"));
  EXPECT_TRUE(FailsWith(Infer1("Hardmax", {T(DType::kI32, {2})}), "Hardmax", "dtype"));
}

TEST(NormalizationExtraTest, InstanceNormalization) {
  EXPECT_EQ(Str(Infer1("InstanceNormalization", {F32({N, 3, 4, 4}), F32({3}), F32({3})})), "f32[N,3,4,4]");
  EXPECT_TRUE(FailsWith(Infer1("InstanceNormalization", {F32({N, 3, 4}), F32({4}), F32({3})}), "InstanceNormalization",
                        "input 1 ('scale') has shape [4] but [3]"));
  EXPECT_TRUE(FailsWith(Infer1("InstanceNormalization", {F32({N, 3}), F32({3}), F32({3})}), "InstanceNormalization",
                        "[N,C,D1,...]"));
  EXPECT_TRUE(FailsWith(
      Infer1("InstanceNormalization", {F32({2, 3, 4}), F32({3}), F32({3})}, {{"epsilon", AttrValue::Float(-1)}}),
      "InstanceNormalization", "epsilon"));
}

TEST(NormalizationExtraTest, MeanVarianceNormalization) {
  EXPECT_EQ(Str(Infer1("MeanVarianceNormalization", {F32({N, 3, 4, 4})})), "f32[N,3,4,4]");
  EXPECT_EQ(Str(Infer1("MeanVarianceNormalization", {F32({2, 3})}, {{"axes", Ints({-1})}})), "f32[2,3]");
  // The default axes [0,2,3] need rank 4.
  EXPECT_TRUE(FailsWith(Infer1("MeanVarianceNormalization", {F32({2, 3})}), "MeanVarianceNormalization", "axis"));
}

TEST(NormalizationExtraTest, LRN) {
  EXPECT_EQ(Str(Infer1("LRN", {F32({N, 3, 4, 4})}, {{"size", AttrValue::Int(3)}})), "f32[N,3,4,4]");
  EXPECT_TRUE(FailsWith(Infer1("LRN", {F32({2, 3, 4})}), "LRN", "size"));  // required
  EXPECT_TRUE(FailsWith(Infer1("LRN", {F32({2, 3, 4})}, {{"size", AttrValue::Int(0)}}), "LRN", "size is 0"));
  EXPECT_TRUE(FailsWith(Infer1("LRN", {F32({2, 3})}, {{"size", AttrValue::Int(1)}}), "LRN", "[N,C,D1,...]"));
  EXPECT_TRUE(FailsWith(Infer1("LRN", {F32({2, 3, 4})}, {{"size", AttrValue::Int(1)}, {"bias", AttrValue::Float(0)}}),
                        "LRN", "bias"));
  // (2 * size + 3) per element.
  EXPECT_EQ(Flops("LRN", {F32({2, 3, 4})}, {{"size", AttrValue::Int(3)}}), 9 * 24);
}

TEST(NegativeLogLikelihoodLossTest, Shapes) {
  const AttrMap none = {{"reduction", AttrValue::String("none")}};
  EXPECT_EQ(Str(Infer1("NegativeLogLikelihoodLoss", {F32({N, 5}), I64({N})})), "f32[]");
  EXPECT_EQ(Str(Infer1("NegativeLogLikelihoodLoss", {F32({N, 5}), I64({N})}, none)), "f32[N]");
  EXPECT_EQ(Str(Infer1("NegativeLogLikelihoodLoss", {F32({2, 5, 3, 4}), T(DType::kI32, {2, 3, 4}), F32({5})}, none)),
            "f32[2,3,4]");
  EXPECT_EQ(Str(Infer1("NegativeLogLikelihoodLoss", {F32({2, 5}), I64({2})}, {{"ignore_index", AttrValue::Int(-1)}})),
            "f32[]");
}

TEST(NegativeLogLikelihoodLossTest, Errors) {
  const char* op = "NegativeLogLikelihoodLoss";
  EXPECT_TRUE(FailsWith(Infer1(op, {F32({2, 5}), I64({3})}), op, "input 1 ('target') has shape [3]"));
  EXPECT_TRUE(FailsWith(Infer1(op, {F32({2, 5}), I64({2}), F32({4})}), op, "input 2 ('weight')"));
  EXPECT_TRUE(FailsWith(Infer1(op, {F32({5}), I64({})}), op, "input 0 ('input')"));
  EXPECT_TRUE(
      FailsWith(Infer1(op, {F32({2, 5}), I64({2})}, {{"reduction", AttrValue::String("avg")}}), op, "reduction"));
  EXPECT_TRUE(FailsWith(Infer1(op, {F32({2, 5}), F32({2})}), op, "dtype"));
  EXPECT_EQ(Flops(op, {F32({2, 5, 3}), I64({2, 3})}), 18);
}

TEST(EinsumTest, ExplicitAndImplicitOutputs) {
  auto eq = [](const char* e) { return AttrMap{{"equation", AttrValue::String(e)}}; };
  EXPECT_EQ(Str(Infer1("Einsum", {F32({N, 3}), F32({3, 5})}, eq("ij,jk->ik"))), "f32[N,5]");
  EXPECT_EQ(Str(Infer1("Einsum", {F32({2, 3}), F32({3, 5})}, eq("ij,jk"))), "f32[2,5]");
  EXPECT_EQ(Str(Infer1("Einsum", {F32({2, 3})}, eq("ji"))), "f32[3,2]");
  EXPECT_EQ(Str(Infer1("Einsum", {F32({3, 3})}, eq("ii"))), "f32[]");
  EXPECT_EQ(Str(Infer1("Einsum", {F32({4, 3, 3})}, eq("...ii->...i"))), "f32[4,3]");
  // Implicit with an ellipsis: the broadcast dims first.
  EXPECT_EQ(Str(Infer1("Einsum", {F32({7, 1, 2, 3}), F32({5, 3, 4})}, eq("...ij,...jk"))), "f32[7,5,2,4]");
  EXPECT_EQ(Str(Infer1("Einsum", {T(DType::kI64, {2}), T(DType::kI64, {3})}, eq("i,j->ij"))), "i64[2,3]");
  // Implicit labels are sorted by character code: 'B' before 'a'.
  EXPECT_EQ(Str(Infer1("Einsum", {F32({2, 3})}, eq("aB"))), "f32[3,2]");
}

TEST(EinsumTest, Errors) {
  auto eq = [](const char* e) { return AttrMap{{"equation", AttrValue::String(e)}}; };
  EXPECT_TRUE(FailsWith(Infer1("Einsum", {F32({2, 3})}), "Einsum", "equation"));
  EXPECT_TRUE(FailsWith(Infer1("Einsum", {F32({2, 3})}, eq("ij,jk->ik")), "Einsum", "2 input terms"));
  EXPECT_TRUE(FailsWith(Infer1("Einsum", {F32({2, 3}), F32({4, 5})}, eq("ij,jk->ik")), "Einsum", "label 'j'"));
  EXPECT_TRUE(FailsWith(Infer1("Einsum", {F32({2, 3})}, eq("ijk")), "Einsum", "labels"));
  EXPECT_TRUE(FailsWith(Infer1("Einsum", {F32({2, 3})}, eq("ij->iz")), "Einsum", "'z' does not occur"));
  EXPECT_TRUE(FailsWith(Infer1("Einsum", {F32({2, 2})}, eq("ij->ii")), "Einsum", "repeats"));
  EXPECT_TRUE(FailsWith(Infer1("Einsum", {F32({2, 3})}, eq("i1")), "Einsum", "not a label"));
  EXPECT_TRUE(FailsWith(Infer1("Einsum", {F32({2, 3})}, eq("i..j")), "Einsum", "'...'"));
  EXPECT_TRUE(FailsWith(Infer1("Einsum", {F32({2, 3}), F32({3, 3})}, eq("...i,...i")), "Einsum", "broadcast"));
  // [2,3] x [3,5] over all labels: 30 points, 2 inputs.
  EXPECT_EQ(Flops("Einsum", {F32({2, 3}), F32({3, 5})}, eq("ij,jk->ik")), 60);
}

}  // namespace
}  // namespace tsr

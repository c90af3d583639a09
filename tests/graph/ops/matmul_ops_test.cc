// Shape/dtype inference and FLOP estimates of MatMul and Gemm.
#include <vector>

#include "gmock/gmock.h"
#include "graph/op_def.h"
#include "gtest/gtest.h"
#include "tests/graph/ops/op_test_util.h"

namespace tsr {
namespace {

using ::tsr::testing::F32;
using ::tsr::testing::Flops;
using ::tsr::testing::Infer1;
using ::tsr::testing::IsInvalidWith;
using ::tsr::testing::Yields;

constexpr int64_t kN = kBatchDim;

TEST(MatMulTest, DensePropagatesTheBatchDim) {
  EXPECT_THAT(Infer1("MatMul", {F32({kN, 784}), F32({784, 256})}), Yields(F32({kN, 256})));
}

TEST(MatMulTest, OneDimensionalOperandsFollowNumpy) {
  EXPECT_THAT(Infer1("MatMul", {F32({3}), F32({3})}), Yields(F32({})));
  EXPECT_THAT(Infer1("MatMul", {F32({3}), F32({3, 4})}), Yields(F32({4})));
  EXPECT_THAT(Infer1("MatMul", {F32({2, 3}), F32({3})}), Yields(F32({2})));
  EXPECT_THAT(Infer1("MatMul", {F32({4}), F32({2, 4, 5})}), Yields(F32({2, 5})));
  EXPECT_THAT(Infer1("MatMul", {F32({2, 3, 4}), F32({4})}), Yields(F32({2, 3})));
}

TEST(MatMulTest, BatchDimsBroadcast) {
  EXPECT_THAT(Infer1("MatMul", {F32({2, 3, 4}), F32({4, 5})}), Yields(F32({2, 3, 5})));
  EXPECT_THAT(Infer1("MatMul", {F32({2, 1, 3, 4}), F32({5, 4, 6})}), Yields(F32({2, 5, 3, 6})));
  EXPECT_THAT(Infer1("MatMul", {F32({kN, 8, 3, 4}), F32({8, 4, 6})}), Yields(F32({kN, 8, 3, 6})));
  EXPECT_THAT(Infer1("MatMul", {F32({2, 3, 4}), F32({3, 4, 5})}),
              IsInvalidWith("batch dimensions of A [2,3,4] and B [3,4,5] do not broadcast"));
}

TEST(MatMulTest, ContractionMismatchNamesBothShapes) {
  EXPECT_THAT(Infer1("MatMul", {F32({2, 3}), F32({4, 5})}),
              IsInvalidWith("node 'n' (MatMul): A [2,3] and B [4,5] cannot be multiplied: the contraction "
                            "dimension is 3 in A but 4 in B"));
  EXPECT_THAT(Infer1("MatMul", {F32({3}), F32({4})}), IsInvalidWith("A [3] and B [4]"));
}

TEST(MatMulTest, SymbolicContractionOnlyMatchesSymbolic) {
  EXPECT_THAT(Infer1("MatMul", {F32({3, kN}), F32({kN, 4})}), Yields(F32({3, 4})));
  EXPECT_THAT(Infer1("MatMul", {F32({3, kN}), F32({5, 4})}), IsInvalidWith("is N in A but 5 in B"));
}

TEST(MatMulTest, RejectsScalarsAndBadDtypes) {
  EXPECT_THAT(Infer1("MatMul", {F32({}), F32({3})}), IsInvalidWith("rank >= 1"));
  EXPECT_THAT(Infer1("MatMul", {F32({2, 3}), TensorType(DType::kF16, Shape{3, 4})}), IsInvalidWith("they must match"));
  EXPECT_THAT(Infer1("MatMul", {TensorType(DType::kBool, Shape{2, 3}), TensorType(DType::kBool, Shape{3, 4})}),
              IsInvalidWith("has dtype bool"));
  EXPECT_THAT(Infer1("MatMul", {TensorType(DType::kI32, Shape{2, 3}), TensorType(DType::kI32, Shape{3, 4})}),
              Yields(TensorType(DType::kI32, Shape{2, 4})));
}

TEST(MatMulTest, FlopsAreTwoMNKPerBatch) {
  EXPECT_EQ(Flops("MatMul", {F32({kN, 784}), F32({784, 256})}), 2 * 256 * 784);  // N counts as 1
  EXPECT_EQ(Flops("MatMul", {F32({2, 3, 4}), F32({4, 5})}), 2 * 2 * 3 * 5 * 4);
  EXPECT_EQ(Flops("MatMul", {F32({2, 1, 3, 4}), F32({5, 4, 6})}), 2 * 10 * 3 * 6 * 4);
  EXPECT_EQ(Flops("MatMul", {F32({7}), F32({7})}), 14);
}

TEST(GemmTest, PlainAndTransposed) {
  EXPECT_THAT(Infer1("Gemm", {F32({3, 4}), F32({4, 5})}), Yields(F32({3, 5})));
  EXPECT_THAT(Infer1("Gemm", {F32({4, 3}), F32({4, 5})}, {{"transA", AttrValue::Int(1)}}), Yields(F32({3, 5})));
  EXPECT_THAT(Infer1("Gemm", {F32({3, 4}), F32({5, 4})}, {{"transB", AttrValue::Int(1)}}), Yields(F32({3, 5})));
  EXPECT_THAT(
      Infer1("Gemm", {F32({4, 3}), F32({5, 4})}, {{"transA", AttrValue::Int(1)}, {"transB", AttrValue::Int(1)}}),
      Yields(F32({3, 5})));
  EXPECT_THAT(Infer1("Gemm", {F32({kN, 784}), F32({784, 10}), F32({10})},
                     {{"alpha", AttrValue::Float(0.5)}, {"beta", AttrValue::Float(2.0)}}),
              Yields(F32({kN, 10})));
}

TEST(GemmTest, CBroadcastsOneWayToMN) {
  for (const Shape& c : {Shape{}, Shape{5}, Shape{1, 5}, Shape{3, 1}, Shape{3, 5}, Shape{1, 1}}) {
    EXPECT_THAT(Infer1("Gemm", {F32({3, 4}), F32({4, 5}), F32(c)}), Yields(F32({3, 5}))) << c.ToString();
  }
  EXPECT_THAT(Infer1("Gemm", {F32({3, 4}), F32({4, 5}), F32({3})}),
              IsInvalidWith("input 2 ('C') has shape [3] but must broadcast to the result [3,5]"));
  EXPECT_THAT(Infer1("Gemm", {F32({3, 4}), F32({4, 5}), F32({2, 3, 5})}), IsInvalidWith("('C') has shape [2,3,5]"));
  EXPECT_THAT(Infer1("Gemm", {F32({kN, 4}), F32({4, 5}), F32({kN})}), IsInvalidWith("must broadcast"));
}

TEST(GemmTest, Errors) {
  EXPECT_THAT(Infer1("Gemm", {F32({4}), F32({4, 5})}),
              IsInvalidWith("input 0 ('A') has shape [4] but a rank-2 matrix is required"));
  EXPECT_THAT(Infer1("Gemm", {F32({3, 4}), F32({2, 4, 5})}), IsInvalidWith("input 1 ('B') has shape [2,4,5]"));
  EXPECT_THAT(Infer1("Gemm", {F32({3, 4}), F32({5, 4})}),
              IsInvalidWith("A [3,4] (transA=0) and B [5,4] (transB=0) cannot be multiplied"));
  EXPECT_THAT(Infer1("Gemm", {F32({3, 4}), F32({4, 5})}, {{"transA", AttrValue::Int(2)}}),
              IsInvalidWith("attribute 'transA' is 2 but must be 0 or 1"));
  EXPECT_THAT(Infer1("Gemm", {F32({3, 4}), F32({4, 5})}, {{"alpha", AttrValue::Int(2)}}),
              IsInvalidWith("attribute 'alpha' has type"));
}

TEST(GemmTest, FlopsAreTwoMNK) {
  EXPECT_EQ(Flops("Gemm", {F32({3, 4}), F32({4, 5}), F32({5})}), 2 * 3 * 5 * 4);
  EXPECT_EQ(Flops("Gemm", {F32({4, 3}), F32({5, 4})}, {{"transA", AttrValue::Int(1)}, {"transB", AttrValue::Int(1)}}),
            2 * 3 * 5 * 4);
}

}  // namespace
}  // namespace tsr

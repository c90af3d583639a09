// Shape/dtype inference and FLOP estimates of SoftmaxCrossEntropyLoss.
#include <vector>

#include "gmock/gmock.h"
#include "graph/op_def.h"
#include "gtest/gtest.h"
#include "tests/graph/ops/op_test_util.h"

namespace tsr {
namespace {

using ::tsr::testing::F32;
using ::tsr::testing::Flops;
using ::tsr::testing::I64;
using ::tsr::testing::Infer;
using ::tsr::testing::IsInvalidWith;
using ::tsr::testing::YieldsAll;

constexpr int64_t kN = kBatchDim;

constexpr char kLoss[] = "SoftmaxCrossEntropyLoss";

AttrMap Reduction(const char* r) { return {{"reduction", AttrValue::String(r)}}; }

TEST(SoftmaxCrossEntropyLossTest, MeanAndSumGiveAScalarPlusLogProb) {
  const std::vector<TensorType> expected = {F32({}), F32({kN, 10})};
  EXPECT_THAT(Infer(kLoss, {F32({kN, 10}), I64({kN})}), YieldsAll(expected));
  EXPECT_THAT(Infer(kLoss, {F32({kN, 10}), I64({kN})}, Reduction("sum")), YieldsAll(expected));
  EXPECT_THAT(Infer(kLoss, {F32({kN, 10}), TensorType(DType::kI32, Shape{kN}), F32({10})},
                    {{"ignore_index", AttrValue::Int(-100)}}),
              YieldsAll(expected));
}

TEST(SoftmaxCrossEntropyLossTest, NoneKeepsOneLossPerLabel) {
  EXPECT_THAT(Infer(kLoss, {F32({kN, 10}), I64({kN})}, Reduction("none")),
              YieldsAll(std::vector<TensorType>{F32({kN}), F32({kN, 10})}));
  // Per-pixel classification: scores [N,C,H,W], labels [N,H,W].
  EXPECT_THAT(Infer(kLoss, {F32({kN, 5, 4, 3}), I64({kN, 4, 3})}, Reduction("none")),
              YieldsAll(std::vector<TensorType>{F32({kN, 4, 3}), F32({kN, 5, 4, 3})}));
  EXPECT_THAT(
      Infer(kLoss, {TensorType(DType::kBF16, Shape{2, 5, 4}), I64({2, 4})}),
      YieldsAll(std::vector<TensorType>{TensorType(DType::kBF16, Shape{}), TensorType(DType::kBF16, Shape{2, 5, 4})}));
}

TEST(SoftmaxCrossEntropyLossTest, ShapeErrors) {
  EXPECT_THAT(Infer(kLoss, {F32({kN, 10}), I64({kN, 3})}),
              IsInvalidWith("input 1 ('labels') has shape [N,3] but scores [N,10] require [N]"));
  EXPECT_THAT(Infer(kLoss, {F32({kN, 5, 4}), I64({kN, 5})}),
              IsInvalidWith("input 1 ('labels') has shape [N,5] but scores [N,5,4] require [N,4]"));
  EXPECT_THAT(Infer(kLoss, {F32({kN, 10}), I64({4})}), IsInvalidWith("require [N]"));
  EXPECT_THAT(Infer(kLoss, {F32({10}), I64({})}),
              IsInvalidWith("input 0 ('scores') has shape [10] but [N,C] or [N,C,D1,...] is required"));
  EXPECT_THAT(Infer(kLoss, {F32({kN, 10}), I64({kN}), F32({5})}),
              IsInvalidWith("input 2 ('weights') has shape [5] but [10] (one weight per class) is required"));
  EXPECT_THAT(Infer(kLoss, {F32({4, kN}), I64({4})}),
              IsInvalidWith("input 0 ('scores') has shape [4,N] with a symbolic class dimension"));
}

TEST(SoftmaxCrossEntropyLossTest, DtypeErrors) {
  // Integer labels passed as scores, float labels, mismatched weights.
  EXPECT_THAT(Infer(kLoss, {I64({4, 10}), I64({4})}), IsInvalidWith("input 0 ('scores') has dtype i64"));
  EXPECT_THAT(Infer(kLoss, {F32({4, 10}), F32({4})}), IsInvalidWith("input 1 ('labels') has dtype f32"));
  EXPECT_THAT(Infer(kLoss, {F32({4, 10}), TensorType(DType::kU8, Shape{4})}),
              IsInvalidWith("input 1 ('labels') has dtype u8"));
  EXPECT_THAT(Infer(kLoss, {F32({4, 10}), I64({4}), TensorType(DType::kF64, Shape{10})}),
              IsInvalidWith("input 2 ('weights') has dtype f64 but input 0 has f32"));
}

TEST(SoftmaxCrossEntropyLossTest, AttributeErrors) {
  EXPECT_THAT(Infer(kLoss, {F32({4, 10}), I64({4})}, Reduction("avg")),
              IsInvalidWith("reduction is 'avg' but one of mean, sum, none is required"));
  EXPECT_THAT(Infer(kLoss, {F32({4, 10}), I64({4})}, Reduction("MEAN")), IsInvalidWith("reduction is 'MEAN'"));
  EXPECT_THAT(Infer(kLoss, {F32({4, 10}), I64({4})}, {{"ignore_index", AttrValue::Float(1)}}),
              IsInvalidWith("attribute 'ignore_index' has type"));
}

TEST(SoftmaxCrossEntropyLossTest, FlopsCoverTheLogSoftmaxAndTheLabels) {
  EXPECT_EQ(Flops(kLoss, {F32({kN, 10}), I64({kN})}), 5 * 10 + 3);
}

}  // namespace
}  // namespace tsr

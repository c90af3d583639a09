// Shape/dtype inference and FLOP estimates of BatchNormalization,
// LayerNormalization, Softmax and LogSoftmax.
#include <optional>
#include <vector>

#include "gmock/gmock.h"
#include "graph/op_def.h"
#include "gtest/gtest.h"
#include "tests/graph/ops/op_test_util.h"

namespace tsr {
namespace {

using ::tsr::testing::F32;
using ::tsr::testing::Flops;
using ::tsr::testing::Infer;
using ::tsr::testing::Infer1;
using ::tsr::testing::IsInvalidWith;
using ::tsr::testing::T;
using ::tsr::testing::Yields;
using ::tsr::testing::YieldsAll;

constexpr int64_t kN = kBatchDim;

// X plus four per-channel parameters of `channels` values.
std::vector<std::optional<TensorType>> BatchNormInputs(TensorType x, int64_t channels,
                                                       DType param_dtype = DType::kF32) {
  return {x, T(param_dtype, {channels}), T(param_dtype, {channels}), T(param_dtype, {channels}),
          T(param_dtype, {channels})};
}

TEST(BatchNormalizationTest, InferenceHasOneOutput) {
  EXPECT_THAT(Infer("BatchNormalization", BatchNormInputs(F32({kN, 16, 8, 8}), 16)),
              YieldsAll(std::vector<TensorType>{F32({kN, 16, 8, 8})}));
  EXPECT_THAT(Infer("BatchNormalization", BatchNormInputs(F32({kN, 16}), 16)),
              YieldsAll(std::vector<TensorType>{F32({kN, 16})}));
  // A 1-D X is [N] with one channel.
  EXPECT_THAT(Infer("BatchNormalization", BatchNormInputs(F32({kN}), 1)),
              YieldsAll(std::vector<TensorType>{F32({kN})}));
}

TEST(BatchNormalizationTest, TrainingAlsoOutputsRunningStatistics) {
  EXPECT_THAT(
      Infer("BatchNormalization", BatchNormInputs(F32({kN, 16, 8, 8}), 16), {{"training_mode", AttrValue::Int(1)}}),
      YieldsAll(std::vector<TensorType>{F32({kN, 16, 8, 8}), F32({16}), F32({16})}));
}

TEST(BatchNormalizationTest, ParametersMayHaveTheirOwnPrecision) {
  // X in f16, scale/B in f32, statistics in f64: outputs follow their inputs.
  std::vector<std::optional<TensorType>> inputs = {T(DType::kF16, {2, 4, 3}), F32({4}), F32({4}), T(DType::kF64, {4}),
                                                   T(DType::kF64, {4})};
  EXPECT_THAT(Infer("BatchNormalization", inputs, {{"training_mode", AttrValue::Int(1)}}),
              YieldsAll(std::vector<TensorType>{T(DType::kF16, {2, 4, 3}), T(DType::kF64, {4}), T(DType::kF64, {4})}));
  inputs[2] = T(DType::kF16, {4});
  EXPECT_THAT(Infer("BatchNormalization", inputs), IsInvalidWith("input 2 ('B') has dtype f16 but input 1 has f32"));
}

TEST(BatchNormalizationTest, Errors) {
  std::vector<std::optional<TensorType>> inputs = BatchNormInputs(F32({kN, 16, 8, 8}), 16);
  inputs[1] = F32({8});
  EXPECT_THAT(Infer("BatchNormalization", inputs),
              IsInvalidWith("input 1 ('scale') has shape [8] but [16] (one value per channel of X [N,16,8,8])"));
  inputs = BatchNormInputs(F32({kN, 16, 8, 8}), 16);
  inputs[4] = F32({16, 1});
  EXPECT_THAT(Infer("BatchNormalization", inputs), IsInvalidWith("input 4 ('input_var') has shape [16,1]"));
  EXPECT_THAT(Infer("BatchNormalization", BatchNormInputs(F32({2, kN, 4}), 4)),
              IsInvalidWith("input 0 ('X') has shape [2,N,4] with a symbolic channel dimension"));
  EXPECT_THAT(Infer("BatchNormalization", BatchNormInputs(F32({}), 1)), IsInvalidWith("input 0 ('X') is a scalar"));
  EXPECT_THAT(Infer("BatchNormalization", BatchNormInputs(F32({2, 4}), 4), {{"training_mode", AttrValue::Int(2)}}),
              IsInvalidWith("training_mode is 2 but must be 0 or 1"));
  EXPECT_THAT(Infer("BatchNormalization", BatchNormInputs(F32({2, 4}), 4), {{"momentum", AttrValue::Float(1.5)}}),
              IsInvalidWith("momentum is 1.5 but must be in [0, 1]"));
  EXPECT_THAT(Infer("BatchNormalization", BatchNormInputs(F32({2, 4}), 4), {{"epsilon", AttrValue::Float(-1)}}),
              IsInvalidWith("epsilon is -1 but must be >= 0"));
  EXPECT_THAT(Infer("BatchNormalization", BatchNormInputs(T(DType::kI32, {2, 4}), 4)),
              IsInvalidWith("input 0 ('X') has dtype i32"));
  EXPECT_THAT(Infer("BatchNormalization", {F32({2, 4}), F32({4}), F32({4}), F32({4})}), IsInvalidWith("has 4 inputs"));
}

TEST(BatchNormalizationTest, FlopsArePerElement) {
  EXPECT_EQ(Flops("BatchNormalization", BatchNormInputs(F32({kN, 4, 2}), 4)), 4 * 8);
  EXPECT_EQ(Flops("BatchNormalization", BatchNormInputs(F32({kN, 4, 2}), 4), {{"training_mode", AttrValue::Int(1)}}),
            7 * 8);
}

TEST(LayerNormalizationTest, AlwaysProducesYMeanAndInvStdDev) {
  const std::vector<TensorType> expected = {F32({kN, 128, 768}), F32({kN, 128, 1}), F32({kN, 128, 1})};
  EXPECT_THAT(Infer("LayerNormalization", {F32({kN, 128, 768}), F32({768}), F32({768})}), YieldsAll(expected));
  EXPECT_THAT(Infer("LayerNormalization", {F32({kN, 128, 768}), F32({768})}), YieldsAll(expected));
  EXPECT_THAT(Infer("LayerNormalization", {F32({kN, 128, 768}), F32({768}), std::nullopt}), YieldsAll(expected));
}

TEST(LayerNormalizationTest, AxisSelectsTheNormalizedDims) {
  EXPECT_THAT(Infer("LayerNormalization", {F32({kN, 4, 8}), F32({4, 8}), F32({8})}, {{"axis", AttrValue::Int(1)}}),
              YieldsAll(std::vector<TensorType>{F32({kN, 4, 8}), F32({kN, 1, 1}), F32({kN, 1, 1})}));
  EXPECT_THAT(Infer("LayerNormalization", {F32({kN, 4, 8}), F32({1, 8})}, {{"axis", AttrValue::Int(-2)}}),
              YieldsAll(std::vector<TensorType>{F32({kN, 4, 8}), F32({kN, 1, 1}), F32({kN, 1, 1})}));
  // Normalizing over the batch too: the parameters must then span it (or be 1).
  EXPECT_THAT(Infer("LayerNormalization", {F32({kN, 4}), F32({1, 4})}, {{"axis", AttrValue::Int(0)}}),
              YieldsAll(std::vector<TensorType>{F32({kN, 4}), F32({1, 1}), F32({1, 1})}));
  EXPECT_THAT(Infer("LayerNormalization", {F32({kN, 4}), F32({3, 4})}, {{"axis", AttrValue::Int(0)}}),
              IsInvalidWith("input 1 ('Scale') has shape [3,4] but must broadcast to the normalized dims [N,4]"));
}

TEST(LayerNormalizationTest, StashTypeSetsTheStatisticsDtype) {
  const TensorType x = T(DType::kF16, {2, 8});
  EXPECT_THAT(Infer("LayerNormalization", {x, T(DType::kF16, {8})}),
              YieldsAll(std::vector<TensorType>{x, F32({2, 1}), F32({2, 1})}));
  EXPECT_THAT(Infer("LayerNormalization", {x, T(DType::kF16, {8})}, {{"stash_type", AttrValue::Int(16)}}),
              YieldsAll(std::vector<TensorType>{x, T(DType::kBF16, {2, 1}), T(DType::kBF16, {2, 1})}));
  EXPECT_THAT(Infer("LayerNormalization", {x, T(DType::kF16, {8})}, {{"stash_type", AttrValue::Int(11)}}),
              IsInvalidWith("stash_type is 11 but must be 1 (float) or 16 (bfloat16)"));
}

TEST(LayerNormalizationTest, Errors) {
  EXPECT_THAT(Infer("LayerNormalization", {F32({2, 4, 8}), F32({4})}),
              IsInvalidWith("input 1 ('Scale') has shape [4] but must broadcast to the normalized dims [8] of X "
                            "[2,4,8] (axis 2)"));
  EXPECT_THAT(Infer("LayerNormalization", {F32({2, 4, 8}), F32({8}), F32({2, 4, 8})}),
              IsInvalidWith("input 2 ('B') has shape [2,4,8]"));
  EXPECT_THAT(Infer("LayerNormalization", {F32({2, 4, 8}), F32({8})}, {{"axis", AttrValue::Int(3)}}),
              IsInvalidWith("axis 3 is out of range for rank 3"));
  EXPECT_THAT(Infer("LayerNormalization", {F32({2, 8}), T(DType::kF16, {8})}),
              IsInvalidWith("input 1 ('Scale') has dtype f16 but input 0 has f32"));
  EXPECT_THAT(Infer("LayerNormalization", {F32({2, 8}), F32({8})}, {{"epsilon", AttrValue::Float(-0.5)}}),
              IsInvalidWith("epsilon is -0.5"));
  EXPECT_THAT(Infer("LayerNormalization", {T(DType::kI64, {2, 8}), T(DType::kI64, {8})}), IsInvalidWith("dtype i64"));
}

TEST(LayerNormalizationTest, FlopsArePerElement) {
  EXPECT_EQ(Flops("LayerNormalization", {F32({kN, 3, 8}), F32({8}), F32({8})}), 7 * 24);
}

TEST(SoftmaxTest, KeepsTheInputType) {
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    EXPECT_THAT(Infer1(op, {F32({kN, 10})}), Yields(F32({kN, 10}))) << op;
    EXPECT_THAT(Infer1(op, {T(DType::kBF16, {2, 3, 4})}, {{"axis", AttrValue::Int(1)}}),
                Yields(T(DType::kBF16, {2, 3, 4})))
        << op;
    EXPECT_THAT(Infer1(op, {F32({2, 3, 4})}, {{"axis", AttrValue::Int(-3)}}), Yields(F32({2, 3, 4}))) << op;
    EXPECT_THAT(Infer1(op, {F32({2, 3})}, {{"axis", AttrValue::Int(2)}}),
                IsInvalidWith("axis 2 is out of range for rank 2"))
        << op;
    EXPECT_THAT(Infer1(op, {F32({})}), IsInvalidWith("axis -1 is out of range for rank 0")) << op;
    EXPECT_THAT(Infer1(op, {T(DType::kI32, {2, 3})}), IsInvalidWith("has dtype i32")) << op;
    EXPECT_EQ(Flops(op, {F32({kN, 10})}), 5 * 10) << op;
  }
}

}  // namespace
}  // namespace tsr

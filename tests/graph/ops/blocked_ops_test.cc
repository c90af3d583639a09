// Shape inference of the channel-blocked layout's ops (graph/ops/blocked_ops.cc):
// BlockChannels / UnblockChannels round the channels up to blocks of 16 and back,
// BlockedConv agrees with FusedConv's geometry on the plain shapes (blocked or plain X,
// depthwise, strides, 1-D), and every mismatch is an error naming the input.
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
using ::tsr::testing::Infer1;
using ::tsr::testing::Ints;
using ::tsr::testing::IsInvalidWith;
using ::tsr::testing::Yields;

constexpr int64_t kN = kBatchDim;

TEST(BlockChannelsTest, RoundsChannelsUpToBlocks) {
  EXPECT_THAT(Infer1("BlockChannels", {F32({kN, 24, 56, 56})}), Yields(F32({kN, 2, 56, 56, 16})));
  EXPECT_THAT(Infer1("BlockChannels", {F32({2, 16, 7})}), Yields(F32({2, 1, 7, 16})));
  EXPECT_THAT(Infer1("BlockChannels", {F32({1, 3, 2, 2, 2})}), Yields(F32({1, 1, 2, 2, 2, 16})));
  EXPECT_THAT(Infer1("BlockChannels", {F32({1, 24})}), IsInvalidWith("at least one spatial dimension"));
}

TEST(UnblockChannelsTest, TakesTheChannelCountFromItsAttribute) {
  EXPECT_THAT(Infer1("UnblockChannels", {F32({kN, 2, 56, 56, 16})}, {{"channels", AttrValue::Int(24)}}),
              Yields(F32({kN, 24, 56, 56})));
  EXPECT_THAT(Infer1("UnblockChannels", {F32({1, 2, 5, 5, 16})}, {{"channels", AttrValue::Int(40)}}),
              IsInvalidWith("a blocked activation of 40 channels, [N, 3, spatial..., 16], is required"));
  EXPECT_THAT(Infer1("UnblockChannels", {F32({1, 2, 5, 5, 8})}, {{"channels", AttrValue::Int(24)}}),
              IsInvalidWith("input 0 ('X') has shape [1,2,5,5,8]"));
  EXPECT_THAT(Infer1("UnblockChannels", {F32({1, 2, 5, 5, 16})}, {{"channels", AttrValue::Int(0)}}),
              IsInvalidWith("attribute 'channels' is 0"));
}

TEST(BlockedConvTest, AgreesWithFusedConvOnThePlainShapes) {
  // 3x3/2 64 -> 128 on a blocked input.
  EXPECT_THAT(Infer1("BlockedConv", {F32({kN, 4, 56, 56, 16}), F32({128, 64, 3, 3})},
                     {{"strides", Ints({2, 2})}, {"pads", Ints({1, 1, 1, 1})}}),
              Yields(F32({kN, 8, 28, 28, 16})));
  // A 3-channel plain input (a network's first layer), 24 outputs in two blocks.
  EXPECT_THAT(Infer1("BlockedConv", {F32({1, 3, 224, 224}), F32({24, 3, 3, 3}), F32({24})},
                     {{"strides", Ints({2, 2})}, {"pads", Ints({1, 1, 1, 1})}, {"input_blocked", AttrValue::Int(0)}}),
              Yields(F32({1, 2, 112, 112, 16})));
  // Depthwise with a residual of the output's blocked shape; 1-D.
  EXPECT_THAT(
      Infer1("BlockedConv", {F32({1, 9, 14, 14, 16}), F32({144, 1, 3, 3}), std::nullopt, F32({1, 9, 14, 14, 16})},
             {{"group", AttrValue::Int(144)}, {"pads", Ints({1, 1, 1, 1})}}),
      Yields(F32({1, 9, 14, 14, 16})));
  EXPECT_THAT(Infer1("BlockedConv", {F32({2, 1, 10, 16}), F32({16, 16, 3})}), Yields(F32({2, 1, 8, 16})));
}

TEST(BlockedInvertedResidualTest, ChainsTheThreeStagesShapes) {
  // MobileNetV2's 24 -> 144 -> (3x3/2) -> 32 at 56 x 56, with biases.
  const AttrMap window = {{"strides", Ints({2, 2})}, {"pads", Ints({1, 1, 1, 1})}};
  EXPECT_THAT(Infer1("BlockedInvertedResidual",
                     {F32({kN, 2, 56, 56, 16}), F32({144, 24, 1, 1}), F32({144}), F32({144, 1, 3, 3}), F32({144}),
                      F32({32, 144, 1, 1}), F32({32})},
                     window),
              Yields(F32({kN, 2, 28, 28, 16})));
  // Without the expansion (X holds the depthwise channels), with the residual.
  EXPECT_THAT(Infer1("BlockedInvertedResidual",
                     {F32({1, 2, 112, 112, 16}), std::nullopt, std::nullopt, F32({32, 1, 3, 3}), std::nullopt,
                      F32({16, 32, 1, 1}), std::nullopt, F32({1, 1, 112, 112, 16})},
                     {{"pads", Ints({1, 1, 1, 1})}}),
              Yields(F32({1, 1, 112, 112, 16})));
}

TEST(BlockedInvertedResidualTest, MismatchesAreErrors) {
  const AttrMap pads = {{"pads", Ints({1, 1, 1, 1})}};
  // A 3x3 projection.
  EXPECT_THAT(Infer1("BlockedInvertedResidual",
                     {F32({1, 1, 8, 8, 16}), F32({32, 16, 1, 1}), std::nullopt, F32({32, 1, 3, 3}), std::nullopt,
                      F32({16, 32, 3, 3})},
                     pads),
              IsInvalidWith("the project_weights [16,32,3,3] are not 1x1"));
  // The residual does not have the output's shape.
  EXPECT_THAT(Infer1("BlockedInvertedResidual",
                     {F32({1, 1, 8, 8, 16}), F32({32, 16, 1, 1}), std::nullopt, F32({32, 1, 3, 3}), std::nullopt,
                      F32({16, 32, 1, 1}), std::nullopt, F32({1, 1, 4, 4, 16})},
                     pads),
              IsInvalidWith("input 7 ('Z', the residual) has shape [1,1,4,4,16]"));
  // X does not hold the expansion's input channels; an expansion bias without weights.
  EXPECT_THAT(Infer1("BlockedInvertedResidual",
                     {F32({1, 2, 8, 8, 16}), F32({32, 16, 1, 1}), std::nullopt, F32({32, 1, 3, 3}), std::nullopt,
                      F32({16, 32, 1, 1})},
                     pads),
              IsInvalidWith("a blocked activation of 16 channels"));
  EXPECT_THAT(
      Infer1("BlockedInvertedResidual",
             {F32({1, 2, 8, 8, 16}), std::nullopt, F32({32}), F32({32, 1, 3, 3}), std::nullopt, F32({16, 32, 1, 1})},
             pads),
      IsInvalidWith("input 2 ('Be') is given without input 1 ('We')"));
}

TEST(BlockedConvTest, MismatchesNameTheInput) {
  EXPECT_THAT(Infer1("BlockedConv", {F32({1, 2, 8, 8, 16}), F32({16, 40, 1, 1})}),
              IsInvalidWith("input 0 ('X') has shape [1,2,8,8,16] but a blocked activation of 40 channels"));
  EXPECT_THAT(Infer1("BlockedConv", {F32({1, 1, 8, 8, 16}), F32({16, 16, 1, 1}), std::nullopt, F32({1, 1, 7, 7, 16})}),
              IsInvalidWith("input 3 ('Z', the residual) has shape [1,1,7,7,16]"));
  EXPECT_THAT(Infer1("BlockedConv", {F32({1, 1, 8, 8, 16}), F32({16, 16})}),
              IsInvalidWith("input 1 ('W') has shape [16,16]"));
  EXPECT_THAT(
      Infer1("BlockedConv", {F32({1, 1, 8, 8, 16}), F32({16, 16, 1, 1})}, {{"input_blocked", AttrValue::Int(2)}}),
      IsInvalidWith("input_blocked"));
  EXPECT_THAT(
      Infer1("BlockedConv", {F32({1, 1, 8, 8, 16}), F32({16, 16, 1, 1})}, {{"activation", AttrValue::String("Swish")}}),
      IsInvalidWith("attribute 'activation' is \"Swish\""));
}

TEST(BlockedConvTest, CountsThePlainConvolutionsFlops) {
  // 2 * (16 * 6 * 6 outputs) * 8 weights each, plus the bias add and the residual add per output.
  EXPECT_EQ(Flops("BlockedConv", {F32({1, 1, 6, 6, 16}), F32({16, 8, 1, 1}), F32({16}), F32({1, 1, 6, 6, 16})},
                  {{"input_blocked", AttrValue::Int(1)}}),
            2 * 16 * 36 * 8 + 16 * 36 + 16 * 36);
}

}  // namespace
}  // namespace tsr

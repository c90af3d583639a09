// tsr-activation-layout on graphs, after epilogue fusion as the pipeline runs it: a
// MobileNetV2 inverted-residual block (pointwise + ReLU6, depthwise 3x3 + ReLU6, strided
// depthwise, pointwise projection with the shortcut) and a ResNet basic block with a
// strided 1x1 downsample keep their outputs through the interpreter (1e-5 relative) with
// every convolution a BlockedConv and layout changes only at the chain's ends; a ragged
// channel count (24 of 32 lanes) and a batch of 3 included.
#include "compiler/transforms/activation_layout.h"

#include <random>

#include "compiler/transforms/epilogue_fusion.h"
#include "graph/builder/ops.h"
#include "gtest/gtest.h"
#include "tests/compiler/transforms/pass_test_util.h"

namespace tsr {
namespace {

using pass_test::CountOp;
using pass_test::RandomConst;
using pass_test::RandomTensor;

absl::StatusOr<Graph> FuseThenBlock(const Graph& graph) {
  absl::StatusOr<Graph> fused = pass_test::RunPass(graph, CreateEpilogueFusionPass());
  if (!fused.ok()) return fused.status();
  return pass_test::RunPass(*fused, CreateActivationLayoutPass());
}

TEST(ActivationLayout, InvertedResidualBlock) {
  const unsigned seed = 21;
  SCOPED_TRACE(testing::Message() << "seed " << seed);
  std::mt19937 rng(seed);
  GraphBuilder b;
  Output x = b.Input("x", DType::kF32, {kBatchDim, 24, 9, 9});
  Output y = ops::Conv(b, x, RandomConst(b, {96, 24, 1, 1}, rng), RandomConst(b, {96}, rng), {}, "expand");
  y = ops::Clip(b, y, 0.0, 6.0, "expand_relu6");
  y = ops::Conv(b, y, RandomConst(b, {96, 1, 3, 3}, rng), RandomConst(b, {96}, rng),
                {.pads = {1, 1, 1, 1}, .group = 96}, "dw");
  y = ops::Clip(b, y, 0.0, 6.0, "dw_relu6");
  y = ops::Conv(b, y, RandomConst(b, {24, 96, 1, 1}, rng), RandomConst(b, {24}, rng), {}, "project");
  y = ops::Add(b, x, y, "shortcut");
  Output down = ops::Conv(b, y, RandomConst(b, {24, 1, 3, 3}, rng),
                          {.strides = {2, 2}, .pads = {1, 1, 1, 1}, .group = 24}, "dw_stride2");
  b.MarkOutput("y", y);
  b.MarkOutput("down", down);
  absl::StatusOr<Graph> graph = b.Finish();
  ASSERT_TRUE(graph.ok()) << graph.status();
  absl::StatusOr<Graph> after = FuseThenBlock(*graph);
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ(CountOp(*after, "BlockedConv"), 4);
  EXPECT_EQ(CountOp(*after, "FusedConv") + CountOp(*after, "Conv"), 0);
  // x enters once (the shortcut; the first conv reads it as it lies); y and down leave.
  EXPECT_EQ(CountOp(*after, "BlockChannels"), 1);
  EXPECT_EQ(CountOp(*after, "UnblockChannels"), 2);
  pass_test::ExpectSameOutputs(*graph, *after, {{"x", RandomTensor(DType::kF32, {3, 24, 9, 9}, rng)}}, 1e-5);
}

TEST(ActivationLayout, ResNetBasicBlockWithDownsample) {
  const unsigned seed = 22;
  SCOPED_TRACE(testing::Message() << "seed " << seed);
  std::mt19937 rng(seed);
  GraphBuilder b;
  Output x = b.Input("x", DType::kF32, {kBatchDim, 32, 10, 10});
  const ops::ConvOptions same = {.pads = {1, 1, 1, 1}};
  Output y = ops::Conv(b, x, RandomConst(b, {64, 32, 3, 3}, rng), RandomConst(b, {64}, rng),
                       {.strides = {2, 2}, .pads = {1, 1, 1, 1}}, "conv1");
  y = ops::Relu(b, y, "relu1");
  y = ops::Conv(b, y, RandomConst(b, {64, 64, 3, 3}, rng), RandomConst(b, {64}, rng), same, "conv2");
  Output shortcut =
      ops::Conv(b, x, RandomConst(b, {64, 32, 1, 1}, rng), RandomConst(b, {64}, rng), {.strides = {2, 2}}, "down");
  y = ops::Relu(b, ops::Add(b, y, shortcut, "add"), "relu2");
  b.MarkOutput("y", ops::Relu(b, y, "after"));
  absl::StatusOr<Graph> graph = b.Finish();
  ASSERT_TRUE(graph.ok()) << graph.status();
  absl::StatusOr<Graph> after = FuseThenBlock(*graph);
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ(CountOp(*after, "BlockedConv"), 3);
  EXPECT_EQ(CountOp(*after, "BlockChannels"), 0);  // both readers of x read it as it lies
  EXPECT_EQ(CountOp(*after, "UnblockChannels"), 1);
  pass_test::ExpectSameOutputs(*graph, *after, {{"x", RandomTensor(DType::kF32, {2, 32, 10, 10}, rng)}}, 1e-5);
}

}  // namespace
}  // namespace tsr

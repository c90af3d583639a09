// Numeric check of tsr-fuse-epilogues: graphs built with the graph builder are imported, fused
// and exported again; the fused graph must hold the expected FusedConv / FusedMatMul nodes and
// compute what the unfused graph computes (interpreter, reference kernels, 1e-5 relative).
#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/conversion/graph_tsr.h"
#include "compiler/conversion/mlir_diagnostics.h"
#include "compiler/transforms/epilogue_fusion.h"
#include "graph/builder/graph_builder.h"
#include "graph/builder/ops.h"
#include "gtest/gtest.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "runtime/session.h"
#include "tests/compiler/transforms/pass_test_util.h"

namespace tsr {
namespace {

using pass_test::CountOp;
using pass_test::RandomTensor;

absl::StatusOr<Graph> FuseEpilogues(const Graph& graph) {
  return pass_test::RunPass(graph, CreateEpilogueFusionPass());
}

// Every output agrees to 1e-5 relative to the tensor's largest magnitude.
void ExpectSameOutputs(const Graph& before, const Graph& after,
                       const std::vector<std::pair<std::string, Tensor>>& feeds) {
  pass_test::ExpectSameOutputs(before, after, feeds, 1e-5);
}

// A ResNet basic block after BatchNorm folding: conv + bias + relu, conv + bias + shortcut + relu.
TEST(EpilogueFusion, ResNetBasicBlock) {
  const unsigned seed = 7;
  SCOPED_TRACE(testing::Message() << "seed " << seed);
  std::mt19937 rng(seed);
  GraphBuilder b;
  Output x = b.Input("x", DType::kF32, {kBatchDim, 4, 6, 6});
  const ops::ConvOptions same = {.pads = {1, 1, 1, 1}, .kernel_shape = {3, 3}};
  Output y = ops::Conv(b, x, ops::Const(b, RandomTensor(DType::kF32, {4, 4, 3, 3}, rng)), same, "conv1");
  y = ops::Add(b, y, ops::Const(b, RandomTensor(DType::kF32, {4, 1, 1}, rng)), "bn1");
  y = ops::Relu(b, y, "relu1");
  y = ops::Conv(b, y, ops::Const(b, RandomTensor(DType::kF32, {4, 4, 3, 3}, rng)),
                ops::Const(b, RandomTensor(DType::kF32, {4}, rng)), same, "conv2");
  y = ops::Add(b, ops::Const(b, RandomTensor(DType::kF32, {1, 4, 1, 1}, rng)), y, "bn2");
  y = ops::Add(b, x, y, "shortcut");
  y = ops::Relu(b, y, "relu2");
  b.MarkOutput("y", y);
  absl::StatusOr<Graph> graph = b.Finish();
  ASSERT_TRUE(graph.ok()) << graph.status();

  absl::StatusOr<Graph> fused = FuseEpilogues(*graph);
  ASSERT_TRUE(fused.ok()) << fused.status();
  EXPECT_EQ(CountOp(*fused, "FusedConv"), 2);
  EXPECT_EQ(CountOp(*fused, "Conv"), 0);
  EXPECT_EQ(CountOp(*fused, "Add"), 0);
  EXPECT_EQ(CountOp(*fused, "Relu"), 0);
  EXPECT_NE(fused->FindNode("conv1+bn1+relu1"), nullptr);
  EXPECT_NE(fused->FindNode("conv2+bn2+shortcut+relu2"), nullptr);
  ExpectSameOutputs(*graph, *fused, {{"x", RandomTensor(DType::kF32, {2, 4, 6, 6}, rng)}});
}

// The GPT-2 block's MLP: MatMul + bias + Gelu, MatMul + bias + residual. Gelu stays an op
// (see epilogue_fusion.h).
TEST(EpilogueFusion, Gpt2Mlp) {
  const unsigned seed = 11;
  SCOPED_TRACE(testing::Message() << "seed " << seed);
  std::mt19937 rng(seed);
  GraphBuilder b;
  Output x = b.Input("x", DType::kF32, {kBatchDim, 8, 16});
  Output h = ops::MatMul(b, x, ops::Const(b, RandomTensor(DType::kF32, {16, 64}, rng)), "fc");
  h = ops::Add(b, h, ops::Const(b, RandomTensor(DType::kF32, {64}, rng)), "fc_bias");
  h = ops::Gelu(b, h, "none", "gelu");
  h = ops::MatMul(b, h, ops::Const(b, RandomTensor(DType::kF32, {64, 16}, rng)), "proj");
  h = ops::Add(b, h, ops::Const(b, RandomTensor(DType::kF32, {16}, rng)), "proj_bias");
  h = ops::Add(b, h, x, "residual");
  b.MarkOutput("y", h);
  absl::StatusOr<Graph> graph = b.Finish();
  ASSERT_TRUE(graph.ok()) << graph.status();

  absl::StatusOr<Graph> fused = FuseEpilogues(*graph);
  ASSERT_TRUE(fused.ok()) << fused.status();
  EXPECT_EQ(CountOp(*fused, "FusedMatMul"), 2);
  EXPECT_EQ(CountOp(*fused, "MatMul") + CountOp(*fused, "Add"), 0);
  EXPECT_EQ(CountOp(*fused, "Gelu"), 1);
  EXPECT_NE(fused->FindNode("fc+fc_bias"), nullptr);
  ExpectSameOutputs(*graph, *fused, {{"x", RandomTensor(DType::kF32, {3, 8, 16}, rng)}});
}

// Gemm (transB, C bias) + Clip, MatMul + a fed [N] bias + LeakyRelu, MatMul + Sigmoid / Tanh,
// and a Relu whose input is also an output (not fused).
TEST(EpilogueFusion, GemmMatMulActivations) {
  const unsigned seed = 13;
  SCOPED_TRACE(testing::Message() << "seed " << seed);
  std::mt19937 rng(seed);
  GraphBuilder b;
  Output a = b.Input("a", DType::kF32, {kBatchDim, 8});
  Output v = b.Input("v", DType::kF32, {16});
  Output g = ops::Gemm(b, a, ops::Const(b, RandomTensor(DType::kF32, {16, 8}, rng)),
                       ops::Const(b, RandomTensor(DType::kF32, {16}, rng)), {.trans_b = true}, "gemm");
  g = ops::Clip(b, g, -0.5, 0.5, "clip");
  Output m = ops::MatMul(b, a, ops::Const(b, RandomTensor(DType::kF32, {8, 16}, rng)), "mm");
  m = ops::Add(b, v, m, "mm_bias");
  m = ops::LeakyRelu(b, m, 0.2, "leaky");
  Output s = ops::Sigmoid(b, ops::MatMul(b, a, ops::Const(b, RandomTensor(DType::kF32, {8, 16}, rng))), "sigmoid");
  Output t = ops::Tanh(b, ops::MatMul(b, a, ops::Const(b, RandomTensor(DType::kF32, {8, 16}, rng))), "tanh");
  Output shared = ops::MatMul(b, a, ops::Const(b, RandomTensor(DType::kF32, {8, 16}, rng)), "shared");
  Output r = ops::Relu(b, shared, "relu");
  b.MarkOutput("g", g);
  b.MarkOutput("m", m);
  b.MarkOutput("s", s);
  b.MarkOutput("t", t);
  b.MarkOutput("shared", shared);
  b.MarkOutput("r", r);
  absl::StatusOr<Graph> graph = b.Finish();
  ASSERT_TRUE(graph.ok()) << graph.status();

  absl::StatusOr<Graph> fused = FuseEpilogues(*graph);
  ASSERT_TRUE(fused.ok()) << fused.status();
  EXPECT_EQ(CountOp(*fused, "FusedMatMul"), 4);
  EXPECT_EQ(CountOp(*fused, "Gemm"), 0);
  EXPECT_EQ(CountOp(*fused, "MatMul"), 1);
  EXPECT_EQ(CountOp(*fused, "Relu"), 1);
  ExpectSameOutputs(*graph, *fused,
                    {{"a", RandomTensor(DType::kF32, {5, 8}, rng)}, {"v", RandomTensor(DType::kF32, {16}, rng)}});
}

}  // namespace
}  // namespace tsr

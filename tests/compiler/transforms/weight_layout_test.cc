// tsr-weight-layout on graphs: Gemm (transB = 1, with and without transA and a bias) and a
// fused Dense layer keep their outputs (interpreter, 1e-5 relative) with the weights stored
// row-major, and B operands that are not constants stay transposed.
#include "compiler/transforms/weight_layout.h"

#include <random>

#include "compiler/transforms/epilogue_fusion.h"
#include "gtest/gtest.h"
#include "tests/compiler/transforms/pass_test_util.h"

namespace tsr {
namespace {

using pass_test::RandomConst;
using pass_test::RandomTensor;

TEST(WeightLayout, GemmsKeepTheirOutputs) {
  const unsigned seed = 11;
  SCOPED_TRACE(testing::Message() << "seed " << seed);
  std::mt19937 rng(seed);
  GraphBuilder b;
  Output x = b.Input("x", DType::kF32, {kBatchDim, 7});
  Output xt = b.Input("xt", DType::kF32, {7, 5});
  Output w = b.Input("w", DType::kF32, {3, 7});
  b.MarkOutput("plain", ops::Gemm(b, x, RandomConst(b, {9, 7}, rng), {.trans_b = true}, "plain"));
  b.MarkOutput("biased", ops::Gemm(b, x, RandomConst(b, {4, 7}, rng), RandomConst(b, {4}, rng),
                                   {.alpha = 0.5, .beta = 2.0, .trans_b = true}, "biased"));
  b.MarkOutput("both", ops::Gemm(b, xt, RandomConst(b, {6, 7}, rng), {.trans_a = true, .trans_b = true}, "both"));
  b.MarkOutput("variable_b", ops::Gemm(b, x, w, {.trans_b = true}, "variable_b"));
  absl::StatusOr<Graph> graph = b.Finish();
  ASSERT_TRUE(graph.ok()) << graph.status();
  absl::StatusOr<Graph> after = pass_test::RunPass(*graph, CreateWeightLayoutPass());
  ASSERT_TRUE(after.ok()) << after.status();
  int transposed = 0;
  for (const Node* node : after->nodes()) {
    if (node->op() != "Gemm") continue;
    const AttrValue* t = node->FindAttr("transB");
    transposed += t != nullptr && t->i() == 1;
  }
  EXPECT_EQ(transposed, 1);  // only the Gemm whose B is fed
  pass_test::ExpectSameOutputs(*graph, *after,
                               {{"x", RandomTensor(DType::kF32, {5, 7}, rng)},
                                {"xt", RandomTensor(DType::kF32, {7, 5}, rng)},
                                {"w", RandomTensor(DType::kF32, {3, 7}, rng)}},
                               1e-5);
}

TEST(WeightLayout, FusedDenseLayerKeepsItsOutput) {
  std::mt19937 rng(12);
  GraphBuilder b;
  Output x = b.Input("x", DType::kF32, {kBatchDim, 16});
  Output y = ops::Gemm(b, x, RandomConst(b, {8, 16}, rng), RandomConst(b, {8}, rng), {.trans_b = true}, "fc");
  b.MarkOutput("y", ops::Relu(b, y, "relu"));
  absl::StatusOr<Graph> graph = b.Finish();
  ASSERT_TRUE(graph.ok()) << graph.status();
  absl::StatusOr<Graph> fused = pass_test::RunPass(*graph, CreateEpilogueFusionPass());
  ASSERT_TRUE(fused.ok()) << fused.status();
  absl::StatusOr<Graph> after = pass_test::RunPass(*fused, CreateWeightLayoutPass());
  ASSERT_TRUE(after.ok()) << after.status();
  ASSERT_EQ(pass_test::CountOp(*after, "FusedMatMul"), 1);
  for (const Node* node : after->nodes()) {
    if (node->op() == "FusedMatMul") {
      EXPECT_EQ(node->FindAttr("transpose_b")->i(), 0);
    }
  }
  pass_test::ExpectSameOutputs(*graph, *after, {{"x", RandomTensor(DType::kF32, {3, 16}, rng)}}, 1e-5);
}

}  // namespace
}  // namespace tsr

// tsr-fold-batchnorm on graphs: a small CNN + MLP head with BatchNormalization after a Conv
// (with and without bias, grouped), a Gemm (transB, alpha, beta, C), a MatMul and on its own;
// the folded graph agrees with the original to 1e-4 and has no BatchNormalization left.
#include <random>

#include "compiler/transforms/fold_batchnorm.h"
#include "graph/builder/graph_builder.h"
#include "graph/builder/ops.h"
#include "gtest/gtest.h"
#include "tests/compiler/transforms/pass_test_util.h"

namespace tsr {
namespace {

using pass_test::CountOp;
using pass_test::ExpectSameOutputs;
using pass_test::RandomConst;
using pass_test::RandomTensor;
using pass_test::RunPass;

constexpr unsigned kSeed = 42;

// Inference BatchNormalization over `channels` with random statistics (var in [0.5, 2)).
Output BatchNorm(GraphBuilder& b, Output x, int64_t channels, std::mt19937& rng) {
  return ops::BatchNormalization(b, x, RandomConst(b, {channels}, rng, 0.5, 1.5), RandomConst(b, {channels}, rng),
                                 RandomConst(b, {channels}, rng), RandomConst(b, {channels}, rng, 0.5, 2.0),
                                 {.epsilon = 1e-3});
}

Graph BuildGraph(std::mt19937& rng) {
  GraphBuilder b;
  Output x = b.Input("image", DType::kF32, {kBatchDim, 3, 8, 8});
  x = BatchNorm(b, x, 3, rng);  // standalone: on the input
  x = ops::Conv(b, x, RandomConst(b, {4, 3, 3, 3}, rng), RandomConst(b, {4}, rng), {.pads = {1, 1, 1, 1}});
  x = ops::Relu(b, BatchNorm(b, x, 4, rng));
  x = ops::Conv(b, x, RandomConst(b, {4, 2, 1, 1}, rng), {.strides = {2, 2}, .group = 2});  // no bias
  x = ops::Relu(b, BatchNorm(b, x, 4, rng));
  x = ops::Flatten(b, ops::GlobalAveragePool(b, x), 1);  // [N, 4]
  x = ops::Gemm(b, x, RandomConst(b, {6, 4}, rng), RandomConst(b, {6}, rng),
                {.alpha = 0.7, .beta = 1.3, .trans_b = true});
  x = ops::Relu(b, BatchNorm(b, x, 6, rng));
  x = ops::MatMul(b, x, RandomConst(b, {6, 5}, rng));
  b.MarkOutput("logits", BatchNorm(b, x, 5, rng));
  absl::StatusOr<Graph> g = b.Finish();
  EXPECT_TRUE(g.ok()) << g.status();
  return *std::move(g);
}

TEST(SimplifyFoldBatchNorm, FoldsIntoConvGemmMatMulAndStandalone) {
  SCOPED_TRACE(testing::Message() << "seed " << kSeed);
  std::mt19937 rng(kSeed);
  Graph graph = BuildGraph(rng);
  ASSERT_EQ(CountOp(graph, "BatchNormalization"), 5);
  absl::StatusOr<Graph> folded = RunPass(graph, CreateFoldBatchNormPass());
  ASSERT_TRUE(folded.ok()) << folded.status();
  EXPECT_EQ(CountOp(*folded, "BatchNormalization"), 0);
  EXPECT_EQ(CountOp(*folded, "Conv"), 2);
  EXPECT_EQ(CountOp(*folded, "MatMul"), 0);
  EXPECT_EQ(CountOp(*folded, "Gemm"), 2);
  EXPECT_EQ(CountOp(*folded, "Mul"), 1);  // the standalone one on the input
  EXPECT_EQ(CountOp(*folded, "Add"), 1);
  ExpectSameOutputs(graph, *folded, {{"image", RandomTensor(DType::kF32, {2, 3, 8, 8}, rng, -2.0, 2.0)}}, 1e-4);
}

TEST(SimplifyFoldBatchNorm, StandaloneOffKeepsTheRest) {
  SCOPED_TRACE(testing::Message() << "seed " << kSeed);
  std::mt19937 rng(kSeed);
  Graph graph = BuildGraph(rng);
  absl::StatusOr<Graph> folded = RunPass(graph, CreateFoldBatchNormPass({.standalone = false}));
  ASSERT_TRUE(folded.ok()) << folded.status();
  EXPECT_EQ(CountOp(*folded, "BatchNormalization"), 1);
  EXPECT_EQ(CountOp(*folded, "Mul"), 0);
  ExpectSameOutputs(graph, *folded, {{"image", RandomTensor(DType::kF32, {3, 3, 8, 8}, rng, -2.0, 2.0)}}, 1e-4);
}

}  // namespace
}  // namespace tsr

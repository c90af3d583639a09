// Numeric check of tsr-fuse-layernorm: layer normalizations written out with the graph builder
// (with and without gamma and beta, the square as Pow or as Mul) are imported, fused and
// exported again; the fused graph must hold one LayerNormalization and no ReduceMean, and
// compute what the written-out chain computes (interpreter, reference kernels, 1e-5
// relative).
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/transforms/layernorm_fusion.h"
#include "graph/builder/graph_builder.h"
#include "graph/builder/ops.h"
#include "gtest/gtest.h"
#include "tests/compiler/transforms/pass_test_util.h"

namespace tsr {
namespace {

using pass_test::CountOp;
using pass_test::RandomTensor;

constexpr int64_t kRows = 6, kWidth = 24;

// (x - mean) / sqrt(mean((x - mean)^2) + eps) [* gamma] [+ beta] over the last axis.
Output WrittenOutLayerNorm(GraphBuilder& b, Output x, bool square_by_pow, Output gamma, Output beta) {
  Output mean = ops::ReduceMean(b, x, std::vector<int64_t>{-1});
  Output d = ops::Sub(b, x, mean);
  Output sq = square_by_pow ? ops::Pow(b, d, ops::Scalar(b, 2.0f)) : ops::Mul(b, d, d);
  Output var = ops::ReduceMean(b, sq, std::vector<int64_t>{-1});
  Output y = ops::Div(b, d, ops::Sqrt(b, ops::Add(b, var, ops::Scalar(b, 1e-5f))));
  if (gamma.valid()) y = ops::Mul(b, y, gamma);
  if (beta.valid()) y = ops::Add(b, beta, y);
  return y;
}

void ExpectFusedAndSame(bool square_by_pow, bool affine) {
  SCOPED_TRACE(testing::Message() << (square_by_pow ? "Pow" : "Mul") << (affine ? " affine" : ""));
  const unsigned seed = 17;
  std::mt19937 rng(seed);
  GraphBuilder b;
  Output x = b.Input("x", DType::kF32, {2, kRows, kWidth});
  Output gamma, beta;
  if (affine) {
    gamma = ops::Const(b, RandomTensor(DType::kF32, {kWidth}, rng));
    beta = ops::Const(b, RandomTensor(DType::kF32, {kWidth}, rng));
  }
  b.MarkOutput("y", WrittenOutLayerNorm(b, x, square_by_pow, gamma, beta));
  absl::StatusOr<Graph> graph = b.Finish();
  ASSERT_TRUE(graph.ok()) << graph.status();
  absl::StatusOr<Graph> fused = pass_test::RunPass(*graph, CreateLayerNormFusionPass());
  ASSERT_TRUE(fused.ok()) << fused.status();
  EXPECT_EQ(CountOp(*fused, "LayerNormalization"), 1);
  EXPECT_EQ(CountOp(*fused, "ReduceMean"), 0);
  EXPECT_EQ(CountOp(*fused, "Div"), 0);
  pass_test::ExpectSameOutputs(*graph, *fused, {{"x", RandomTensor(DType::kF32, {2, kRows, kWidth}, rng, -3, 5)}},
                               1e-5);
}

TEST(LayerNormFusion, WithGammaAndBeta) { ExpectFusedAndSame(true, true); }
TEST(LayerNormFusion, WithoutGammaAndBeta) { ExpectFusedAndSame(true, false); }
TEST(LayerNormFusion, SquareAsMul) { ExpectFusedAndSame(false, true); }

}  // namespace
}  // namespace tsr

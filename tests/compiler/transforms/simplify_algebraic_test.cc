// tsr-algebraic-simplify on graphs: every rewrite is exact, so the simplified graph's outputs
// are bitwise equal to the original's, including for NaN, +-Inf and -0.0 inputs; the rewritten
// ops are gone and the inexact forms (x + 0.0) stay.
#include <cmath>
#include <limits>
#include <random>

#include "compiler/transforms/algebraic_simplify.h"
#include "graph/builder/graph_builder.h"
#include "graph/builder/ops.h"
#include "gtest/gtest.h"
#include "tests/compiler/transforms/pass_test_util.h"

namespace tsr {
namespace {

using pass_test::CountOp;
using pass_test::RandomTensor;
using pass_test::RunGraph;
using pass_test::RunPass;

constexpr unsigned kSeed = 7;

Graph BuildGraph() {
  GraphBuilder b;
  Output x = b.Input("x", DType::kF32, {kBatchDim, 1, 6});
  Output one = ops::Fill(b, DType::kF32, {1, 6}, 1.0);
  Output y = ops::Mul(b, x, one);
  y = ops::Div(b, y, ops::Scalar(b, 1.0f));
  y = ops::Sub(b, y, ops::Scalar(b, 0.0f));
  y = ops::Add(b, ops::Scalar(b, -0.0f), y);
  y = ops::Neg(b, ops::Neg(b, y));
  y = ops::Cast(b, ops::Cast(b, y, DType::kF64), DType::kF32);
  y = ops::Dropout(b, y, {.ratio = 0.3});
  y = ops::Identity(b, y);
  y = ops::Expand(b, y, std::vector<int64_t>{1, 1, 6});
  y = ops::Transpose(b, y, {0, 2, 1});                                    // [N, 6, 1]: only moves a unit dim
  y = ops::Flatten(b, ops::Unsqueeze(b, y, std::vector<int64_t>{1}), 1);  // [N, 6]
  b.MarkOutput("exact", y);
  // Not exact: -0.0 + 0.0 is +0.0. Must stay.
  b.MarkOutput("plus_zero", ops::Add(b, y, ops::Scalar(b, 0.0f)));
  // A neutral operand that broadcasts: [6] * ones [2, 6] -> Expand.
  Output v = b.Input("v", DType::kF32, {6});
  b.MarkOutput("broadcast", ops::Mul(b, v, ops::Fill(b, DType::kF32, {2, 6}, 1.0)));
  absl::StatusOr<Graph> g = b.Finish();
  EXPECT_TRUE(g.ok()) << g.status();
  return *std::move(g);
}

// Random values with NaN, +-Inf, -0.0 and +0.0 mixed in.
Tensor SpecialValues(const Shape& shape, std::mt19937& rng) {
  Tensor t = RandomTensor(DType::kF32, shape, rng, -3.0, 3.0);
  const float specials[] = {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(), -0.0f, 0.0f};
  for (int64_t i = 0; i < t.num_elements(); i += 2) t.data<float>()[i] = specials[(i / 2) % 5];
  return t;
}

TEST(SimplifyAlgebraic, RewritesAreBitwiseExact) {
  SCOPED_TRACE(testing::Message() << "seed " << kSeed);
  std::mt19937 rng(kSeed);
  Graph graph = BuildGraph();
  absl::StatusOr<Graph> simplified = RunPass(graph, CreateAlgebraicSimplifyPass());
  ASSERT_TRUE(simplified.ok()) << simplified.status();
  for (const char* op :
       {"Mul", "Div", "Sub", "Neg", "Cast", "Dropout", "Identity", "Transpose", "Flatten", "Unsqueeze"}) {
    EXPECT_EQ(CountOp(*simplified, op), 0) << op;
  }
  EXPECT_EQ(CountOp(*simplified, "Add"), 1);  // the x + 0.0
  EXPECT_EQ(CountOp(*simplified, "Expand"), 1);
  EXPECT_EQ(CountOp(*simplified, "Reshape"), 1);

  const std::vector<std::pair<std::string, Tensor>> feeds = {{"x", SpecialValues({4, 1, 6}, rng)},
                                                             {"v", SpecialValues({6}, rng)}};
  const std::vector<std::string> fetches = {"exact", "plus_zero", "broadcast"};
  std::vector<Tensor> expected = RunGraph(graph.Clone(), feeds, fetches);
  std::vector<Tensor> actual = RunGraph(simplified->Clone(), feeds, fetches);
  ASSERT_EQ(expected.size(), 3u);
  ASSERT_EQ(actual.size(), 3u);
  for (size_t i = 0; i < fetches.size(); ++i) {
    SCOPED_TRACE(fetches[i]);
    EXPECT_TRUE(expected[i].BitwiseEquals(actual[i])) << expected[i].DebugString(24) << "\nvs\n"
                                                      << actual[i].DebugString(24);
  }
}

}  // namespace
}  // namespace tsr

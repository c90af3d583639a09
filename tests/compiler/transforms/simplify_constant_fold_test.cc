// tsr-constant-fold on graphs: the folded graph computes what the original computes (the same
// reference kernels ran at compile time), the folded ops are gone, and max_elements is obeyed.
#include <random>

#include "compiler/transforms/constant_fold.h"
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
using pass_test::RunGraph;
using pass_test::RunPass;

constexpr unsigned kSeed = 20261130;

// x [N, 3, 4] -> y = (x_flat @ Transpose(W) + Cast(b_i64)) * scale / Sqrt(var + eps), with a
// shape computation Shape(x)[1:] -> Gather -> Mul -> Concat([-1], .) as a second output.
Graph BuildGraph(std::mt19937& rng) {
  GraphBuilder b;
  Output x = b.Input("x", DType::kF32, {kBatchDim, 3, 4});
  Output flat = ops::Reshape(b, x, std::vector<int64_t>{-1, 12});
  Output w = RandomConst(b, {5, 12}, rng);
  Output y = ops::MatMul(b, flat, ops::Transpose(b, w));
  Output bias = ops::Cast(b, ops::Const(b, std::vector<int64_t>{1, -2, 3, -4, 5}), DType::kF32);
  y = ops::Add(b, y, bias);
  Output scale = RandomConst(b, {5}, rng);
  Output var = RandomConst(b, {5}, rng, 0.1, 2.0);
  Output inv_std = ops::Div(b, scale, ops::Sqrt(b, ops::Add(b, var, ops::Scalar(b, 1e-3f))));
  b.MarkOutput("y", ops::Mul(b, y, inv_std));

  Output dims = ops::Shape(b, x, 1);
  Output rows = ops::Gather(b, dims, ops::Const(b, std::vector<int64_t>{0}));
  Output cols = ops::Gather(b, dims, ops::Const(b, std::vector<int64_t>{1}));
  b.MarkOutput("shape", ops::Concat(b, {ops::Const(b, std::vector<int64_t>{-1}), ops::Mul(b, rows, cols)}, 0));
  absl::StatusOr<Graph> g = b.Finish();
  EXPECT_TRUE(g.ok()) << g.status();
  return *std::move(g);
}

TEST(SimplifyConstantFold, FoldsWeightsAndShapeArithmetic) {
  SCOPED_TRACE(testing::Message() << "seed " << kSeed);
  std::mt19937 rng(kSeed);
  Graph graph = BuildGraph(rng);
  absl::StatusOr<Graph> folded = RunPass(graph, CreateConstantFoldPass());
  ASSERT_TRUE(folded.ok()) << folded.status();
  for (const char* op : {"Transpose", "Cast", "Sqrt", "Div", "Shape", "Gather", "Concat"}) {
    EXPECT_EQ(CountOp(*folded, op), 0) << op;
  }
  EXPECT_EQ(CountOp(*folded, "MatMul"), 1);
  EXPECT_EQ(CountOp(*folded, "Reshape"), 1);

  const Tensor x = RandomTensor(DType::kF32, {2, 3, 4}, rng);
  ExpectSameOutputs(graph, *folded, {{"x", x}}, 1e-5);
  std::vector<Tensor> shape = RunGraph(folded->Clone(), {{"x", x}}, {"shape"});
  ASSERT_EQ(shape.size(), 1u);
  EXPECT_EQ(shape[0].ToInt64Vector(), (std::vector<int64_t>{-1, 12}));
}

TEST(SimplifyConstantFold, RespectsMaxElements) {
  SCOPED_TRACE(testing::Message() << "seed " << kSeed);
  std::mt19937 rng(kSeed);
  Graph graph = BuildGraph(rng);
  // The transposed weight has 60 elements; the other folds hold at most 5.
  absl::StatusOr<Graph> folded = RunPass(graph, CreateConstantFoldPass({.max_elements = 8}));
  ASSERT_TRUE(folded.ok()) << folded.status();
  EXPECT_EQ(CountOp(*folded, "Transpose"), 1);
  EXPECT_EQ(CountOp(*folded, "Cast"), 0);
  EXPECT_EQ(CountOp(*folded, "Sqrt"), 0);
  ExpectSameOutputs(graph, *folded, {{"x", RandomTensor(DType::kF32, {3, 3, 4}, rng)}}, 1e-5);
}

}  // namespace
}  // namespace tsr

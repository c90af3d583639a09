// tsr-fold-transposes on graphs: a backward-pass-like graph (X^T dY, dY W^T with few rows and a
// deep product, a Gemm with C, alpha, beta and its own transB reading a transposed input, both
// operands transposed) loses every Transpose to the Gemms' flags and computes the same values,
// with the reference kernels and with the optimized CPU kernels (which read the operands
// transposed while packing them, or as dot products), at two batch sizes. Batched and f64
// products keep theirs.
#include "compiler/transforms/transpose_folding.h"

#include <memory>
#include <random>

#include "graph/builder/graph_builder.h"
#include "graph/builder/ops.h"
#include "gtest/gtest.h"
#include "runtime/session.h"
#include "tests/compiler/transforms/pass_test_util.h"

namespace tsr {
namespace {

using pass_test::CountOp;
using pass_test::ExpectClose;
using pass_test::ExpectSameOutputs;
using pass_test::RandomConst;
using pass_test::RandomTensor;
using pass_test::RunPass;

constexpr unsigned kSeed = 20261205;

Graph BuildGraph(std::mt19937& rng) {
  GraphBuilder b;
  Output x = b.Input("x", DType::kF32, {kBatchDim, 80});
  Output dy = b.Input("dy", DType::kF32, {kBatchDim, 40});
  Output w = RandomConst(b, {80, 40}, rng);
  b.MarkOutput("dw", ops::MatMul(b, ops::Transpose(b, x, {1, 0}), dy));  // [80, 40]: K = batch
  b.MarkOutput("dx", ops::MatMul(b, dy, ops::Transpose(b, w)));          // [N, 80]: dots when N is small
  Output a = RandomConst(b, {40, 24}, rng);
  Output c = RandomConst(b, {24}, rng);
  // A transpose of a transpose: transA flips 0 -> 1 -> 0, C, alpha and beta stay.
  b.MarkOutput("gemm", ops::Gemm(b, ops::Transpose(b, ops::Transpose(b, dy, {1, 0}), {1, 0}), a, c,
                                 {.alpha = 0.5, .beta = 2.0}));
  Output xt = ops::Transpose(b, x, {1, 0});                        // [80, N], read twice
  b.MarkOutput("both", ops::MatMul(b, ops::Transpose(b, w), xt));  // [40, N]: W^T X^T
  b.MarkOutput("gram", ops::MatMul(b, xt, x));                     // [80, 80]
  absl::StatusOr<Graph> g = b.Finish();
  EXPECT_TRUE(g.ok()) << g.status();
  return *std::move(g);
}

// The outputs of `graph` on the optimized CPU kernels.
std::vector<Tensor> RunOnCpu(const Graph& graph, const std::vector<std::pair<std::string, Tensor>>& feeds) {
  absl::StatusOr<std::unique_ptr<Session>> session = Session::Create(graph.Clone(), {.num_threads = 1});
  EXPECT_TRUE(session.ok()) << session.status();
  if (!session.ok()) return {};
  std::vector<std::string> fetches;
  for (const SignatureEntry& out : graph.outputs()) fetches.push_back(out.name);
  absl::StatusOr<std::vector<Tensor>> out = (*session)->Run(feeds, fetches);
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? *std::move(out) : std::vector<Tensor>{};
}

TEST(TransposeFolding, TransposesBecomeGemmFlags) {
  SCOPED_TRACE(testing::Message() << "seed " << kSeed);
  std::mt19937 rng(kSeed);
  Graph graph = BuildGraph(rng);
  ASSERT_EQ(CountOp(graph, "Transpose"), 6);
  absl::StatusOr<Graph> folded = RunPass(graph, CreateTransposeFoldingPass());
  ASSERT_TRUE(folded.ok()) << folded.status();
  EXPECT_EQ(CountOp(*folded, "Transpose"), 0);
  EXPECT_EQ(CountOp(*folded, "MatMul"), 0);
  EXPECT_EQ(CountOp(*folded, "Gemm"), 5);
  for (int64_t batch : {3, 17}) {
    SCOPED_TRACE(testing::Message() << "batch " << batch);
    const std::vector<std::pair<std::string, Tensor>> feeds = {{"x", RandomTensor(DType::kF32, {batch, 80}, rng)},
                                                               {"dy", RandomTensor(DType::kF32, {batch, 40}, rng)}};
    ExpectSameOutputs(graph, *folded, feeds, 1e-6);
    const std::vector<Tensor> want = RunOnCpu(graph, feeds), got = RunOnCpu(*folded, feeds);
    ASSERT_EQ(want.size(), 5u);
    ASSERT_EQ(got.size(), 5u);
    for (size_t i = 0; i < want.size(); ++i) {
      SCOPED_TRACE(graph.outputs()[i].name);
      ExpectClose(want[i], got[i], 1e-5);
    }
  }
}

TEST(TransposeFolding, BatchedAndF64ProductsKeepTheirTransposes) {
  GraphBuilder b;
  Output q = b.Input("q", DType::kF32, {2, 4, 3});
  Output d = b.Input("d", DType::kF64, {3, 2});
  b.MarkOutput("scores", ops::MatMul(b, q, ops::Transpose(b, q, {0, 2, 1})));
  b.MarkOutput("f64", ops::MatMul(b, ops::Transpose(b, d, {1, 0}), d));
  absl::StatusOr<Graph> graph = b.Finish();
  ASSERT_TRUE(graph.ok()) << graph.status();
  absl::StatusOr<Graph> folded = RunPass(*graph, CreateTransposeFoldingPass());
  ASSERT_TRUE(folded.ok()) << folded.status();
  EXPECT_EQ(CountOp(*folded, "Transpose"), 2);
  EXPECT_EQ(CountOp(*folded, "Gemm"), 0);
}

}  // namespace
}  // namespace tsr

// Numeric check of tsr-fuse-attention: attention chains built with the graph builder (GPT-2's
// packed projection with a causal replace-mask, separate projections with a keep-mask in
// HuggingFace's Where(keep, scores, fill) form, with a computed mask, without a mask) are
// imported, fused and exported again; the fused graph must hold one MultiHeadAttention and
// no Softmax, and compute what the unfused chain computes (interpreter, reference kernels,
// 1e-5 relative).
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/transforms/attention_fusion.h"
#include "graph/builder/graph_builder.h"
#include "graph/builder/ops.h"
#include "gtest/gtest.h"
#include "tests/compiler/transforms/pass_test_util.h"

namespace tsr {
namespace {

using pass_test::CountOp;
using pass_test::RandomTensor;

constexpr int64_t kBatch = 2, kSeq = 5, kHeads = 3, kHeadSize = 4, kWidth = kHeads * kHeadSize;

// x [B, S, H*D] -> [B, H, S, D] (or [B, H, D, S] for the keys).
Output SplitHeads(GraphBuilder& b, Output x, bool keys) {
  Output h = ops::Reshape(b, x, std::vector<int64_t>{kBatch, kSeq, kHeads, kHeadSize});
  return ops::Transpose(b, h, keys ? std::vector<int64_t>{0, 2, 3, 1} : std::vector<int64_t>{0, 2, 1, 3});
}

// The chain from q, k, v to the merged heads; `mask(scores)` applies the mask, if any.
template <typename MaskFn>
Output Attention(GraphBuilder& b, Output q, Output k, Output v, MaskFn mask) {
  Output s = ops::MatMul(b, SplitHeads(b, q, false), SplitHeads(b, k, true));
  s = ops::Mul(b, s, ops::Scalar(b, 0.5f));
  Output p = ops::Softmax(b, mask(s));
  Output c = ops::Transpose(b, ops::MatMul(b, p, SplitHeads(b, v, false)), {0, 2, 1, 3});
  return ops::Reshape(b, c, std::vector<int64_t>{kBatch, kSeq, kWidth}, false, "attention");
}

// A causal mask: true above the diagonal (the keys after each query).
Output CausalMask(GraphBuilder& b, bool keep) {
  std::vector<double> values;
  for (int64_t i = 0; i < kSeq; ++i) {
    for (int64_t j = 0; j < kSeq; ++j) values.push_back((j > i) != keep ? 1.0 : 0.0);
  }
  return ops::Const(b, DType::kBool, {1, 1, kSeq, kSeq}, values);
}

void ExpectFusedAndSame(GraphBuilder& b, const std::vector<std::pair<std::string, Tensor>>& feeds) {
  absl::StatusOr<Graph> graph = b.Finish();
  ASSERT_TRUE(graph.ok()) << graph.status();
  absl::StatusOr<Graph> fused = pass_test::RunPass(*graph, CreateAttentionFusionPass());
  ASSERT_TRUE(fused.ok()) << fused.status();
  EXPECT_EQ(CountOp(*fused, "MultiHeadAttention"), 1);
  EXPECT_EQ(CountOp(*fused, "Softmax"), 0);
  EXPECT_EQ(CountOp(*fused, "MatMul"), 0);
  EXPECT_EQ(CountOp(*fused, "Split"), 0);
  pass_test::ExpectSameOutputs(*graph, *fused, feeds, 1e-5);
}

TEST(AttentionFusion, PackedProjectionCausalReplaceMask) {
  const unsigned seed = 3;
  SCOPED_TRACE(testing::Message() << "seed " << seed);
  std::mt19937 rng(seed);
  GraphBuilder b;
  Output qkv = b.Input("qkv", DType::kF32, {kBatch, kSeq, 3 * kWidth});
  std::vector<Output> parts = ops::Split(b, qkv, std::vector<int64_t>{kWidth, kWidth, kWidth}, 2);
  Output ninf = ops::Scalar(b, -std::numeric_limits<float>::infinity());
  b.MarkOutput("y", Attention(b, parts[0], parts[1], parts[2],
                              [&](Output s) { return ops::Where(b, CausalMask(b, false), ninf, s); }));
  ExpectFusedAndSame(b, {{"qkv", RandomTensor(DType::kF32, {kBatch, kSeq, 3 * kWidth}, rng, -2, 2)}});
}

TEST(AttentionFusion, SeparateProjectionsKeepMask) {
  const unsigned seed = 5;
  SCOPED_TRACE(testing::Message() << "seed " << seed);
  std::mt19937 rng(seed);
  GraphBuilder b;
  Output q = b.Input("q", DType::kF32, {kBatch, kSeq, kWidth});
  Output k = b.Input("k", DType::kF32, {kBatch, kSeq, kWidth});
  Output v = b.Input("v", DType::kF32, {kBatch, kSeq, kWidth});
  Output lowest = ops::Scalar(b, std::numeric_limits<float>::lowest());
  b.MarkOutput("y", Attention(b, q, k, v, [&](Output s) { return ops::Where(b, CausalMask(b, true), s, lowest); }));
  const Shape shape = {kBatch, kSeq, kWidth};
  ExpectFusedAndSame(b, {{"q", RandomTensor(DType::kF32, shape, rng, -2, 2)},
                         {"k", RandomTensor(DType::kF32, shape, rng, -2, 2)},
                         {"v", RandomTensor(DType::kF32, shape, rng, -2, 2)}});
}

// A mask computed from an input (padding: keys whose flag is > 0 are kept), through a Not.
TEST(AttentionFusion, ComputedKeepMask) {
  const unsigned seed = 9;
  SCOPED_TRACE(testing::Message() << "seed " << seed);
  std::mt19937 rng(seed);
  GraphBuilder b;
  Output x = b.Input("x", DType::kF32, {kBatch, kSeq, kWidth});
  Output flags = b.Input("flags", DType::kF32, {kBatch, 1, 1, kSeq});
  Output keep = ops::Greater(b, flags, ops::Scalar(b, 0.0f));
  b.MarkOutput("y", Attention(b, x, x, x, [&](Output s) { return ops::Where(b, keep, s, ops::Scalar(b, -1e4f)); }));
  Tensor f(DType::kF32, {kBatch, 1, 1, kSeq});
  for (int64_t i = 0; i < f.num_elements(); ++i) f.data<float>()[i] = i % kSeq == 3 ? -1.0f : 1.0f;
  ExpectFusedAndSame(b, {{"x", RandomTensor(DType::kF32, {kBatch, kSeq, kWidth}, rng, -2, 2)}, {"flags", f}});
}

TEST(AttentionFusion, NoMask) {
  const unsigned seed = 13;
  SCOPED_TRACE(testing::Message() << "seed " << seed);
  std::mt19937 rng(seed);
  GraphBuilder b;
  Output x = b.Input("x", DType::kF32, {kBatch, kSeq, kWidth});
  Output y = b.Input("y", DType::kF32, {kBatch, kSeq, kWidth});
  b.MarkOutput("out", Attention(b, x, y, y, [](Output s) { return s; }));
  const Shape shape = {kBatch, kSeq, kWidth};
  ExpectFusedAndSame(
      b, {{"x", RandomTensor(DType::kF32, shape, rng, -2, 2)}, {"y", RandomTensor(DType::kF32, shape, rng, -2, 2)}});
}

}  // namespace
}  // namespace tsr

// Shape/dtype inference and the FLOP estimate of MultiHeadAttention
// (graph/ops/attention_ops.cc): separate and packed Q/K/V, the symbolic batch, and
// errors that name the node, the op and the offending input.
#include <cstdint>
#include <optional>
#include <utility>

#include "gmock/gmock.h"
#include "graph/attribute.h"
#include "graph/op_def.h"
#include "gtest/gtest.h"
#include "tests/graph/ops/op_test_util.h"

namespace tsr {
namespace {

using ::tsr::testing::F32;
using ::tsr::testing::FailsWith;
using ::tsr::testing::Flops;
using ::tsr::testing::Infer1;
using ::tsr::testing::T;
using ::tsr::testing::Yields;

constexpr int64_t kN = kBatchDim;
constexpr auto kAbsent = std::nullopt;

AttrMap Heads(int64_t heads) { return {{"num_heads", AttrValue::Int(heads)}}; }
TensorType Bool(Shape s) { return T(DType::kBool, std::move(s)); }

TEST(MultiHeadAttentionTest, SeparateQkvGiveQueriesTimesValueWidth) {
  // 3 heads: D = 4, Dv = 2; 5 queries over 7 keys.
  EXPECT_THAT(Infer1("MultiHeadAttention", {F32({kN, 5, 12}), F32({kN, 7, 12}), F32({kN, 7, 6})}, Heads(3)),
              Yields(F32({kN, 5, 6})));
  EXPECT_THAT(
      Infer1("MultiHeadAttention",
             {T(DType::kF64, {2, 5, 12}), T(DType::kF64, {2, 7, 12}), T(DType::kF64, {2, 7, 6}), Bool({2, 1, 5, 7})},
             Heads(3)),
      Yields(T(DType::kF64, {2, 5, 6})));
}

TEST(MultiHeadAttentionTest, PackedQkvGiveAThirdOfTheWidth) {
  // GPT-2's block: c_attn's [N, 128, 3 * 768] output, 12 heads, a causal mask.
  EXPECT_THAT(Infer1("MultiHeadAttention", {F32({kN, 128, 2304}), kAbsent, kAbsent, Bool({1, 1, 128, 128})}, Heads(12)),
              Yields(F32({kN, 128, 768})));
  EXPECT_THAT(Infer1("MultiHeadAttention", {F32({1, 3, 6})}, Heads(2)), Yields(F32({1, 3, 2})));
}

TEST(MultiHeadAttentionTest, ErrorsNameTheInput) {
  constexpr const char* kOp = "MultiHeadAttention";
  EXPECT_TRUE(FailsWith(Infer1(kOp, {F32({1, 5, 12}), F32({1, 7, 12})}, Heads(3)), kOp,
                        "inputs 'K' and 'V' must be given together"));
  EXPECT_TRUE(FailsWith(Infer1(kOp, {F32({1, 5, 12}), F32({1, 7, 12}), F32({1, 7, 6})}, Heads(5)), kOp,
                        "input 'Q' [1,5,12]: its last dim 12 is not a positive multiple of num_heads = 5"));
  EXPECT_TRUE(FailsWith(Infer1(kOp, {F32({1, 5, 12})}, Heads(3)), kOp,
                        "input 'Q' [1,5,12] is packed (no K and V): its last dim 12 must be 3 * num_heads * "
                        "head_size, a multiple of 9"));
  EXPECT_TRUE(FailsWith(Infer1(kOp, {F32({1, 5, 12}), F32({1, 7, 12}), F32({1, 6, 6})}, Heads(3)), kOp,
                        "inputs 'K' [1,7,12] and 'V' [1,6,6] must have the same sequence length"));
  EXPECT_TRUE(FailsWith(Infer1(kOp, {F32({2, 5, 12}), F32({2, 7, 12}), F32({2, 7, 6}), Bool({4, 5, 7})}, Heads(3)), kOp,
                        "input 'mask' has shape [4,5,7] but must broadcast to [batch, num_heads, q_len, kv_len] = "
                        "[2,3,5,7]"));
  EXPECT_TRUE(FailsWith(Infer1(kOp, {F32({1, 5, 12}), F32({1, 7, 12}), F32({1, 7, 6}), F32({5, 7})}, Heads(3)), kOp,
                        "has dtype f32"));
  EXPECT_TRUE(FailsWith(Infer1(kOp, {F32({1, 5, 12})}, {}), kOp, "num_heads"));
}

TEST(MultiHeadAttentionTest, FlopsCountEveryScore) {
  // B 1, H 2, Sq 3, Sk 4, D 5, Dv 6: per score 2*5 + 2*6 products, the scale, the
  // mask, softmax's 4.
  EXPECT_EQ(Flops("MultiHeadAttention", {F32({1, 3, 10}), F32({1, 4, 10}), F32({1, 4, 12}), Bool({3, 4})}, Heads(2)),
            1 * 2 * 3 * 4 * (10 + 12 + 1 + 1 + 4));
}

}  // namespace
}  // namespace tsr

// Reference MultiHeadAttention kernel (kernels/reference/attention_kernels.cc): one
// head worked by hand (default and explicit scale, a mask with -inf and with a finite
// value) in f32 and f64; the packed layout equal to separate Q, K, V; every broadcast
// mask shape equal to the mask written out in full; the kernel against the chain of
// ops the compiler's attention fusion replaces (Reshape, Transpose, MatMul, Mul, Where,
// Softmax, MatMul, Transpose, Reshape); and invalid inputs reaching the kernel.
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "graph/attribute.h"
#include "graph/dtype.h"
#include "graph/op_registry.h"
#include "graph/tensor.h"
#include "gtest/gtest.h"
#include "kernels/kernel.h"
#include "kernels/run_op.h"
#include "tests/kernels/kernel_test_util.h"

namespace tsr {
namespace {

using ::tsr::testing::ExpectNear;
using ::tsr::testing::ExpectValues;
using ::tsr::testing::kInf;
using ::tsr::testing::Make;
using ::tsr::testing::Random;
using ::tsr::testing::RunOne;
using ::tsr::testing::Values;

AttrMap Heads(int64_t heads) { return {{"num_heads", AttrValue::Int(heads)}}; }

// One head, D = 2, two queries and two keys:
//   Q = [[1,0],[0,1]], K = [[1,0],[1,1]], V = [[1,2],[3,4]].
TEST(MultiHeadAttentionKernelTest, OneHeadByHand) {
  for (DType dtype : {DType::kF32, DType::kF64}) {
    SCOPED_TRACE(DTypeName(dtype));
    const double tol = dtype == DType::kF64 ? 1e-15 : 1e-6;
    const Tensor q = Make(dtype, {1, 2, 2}, {1, 0, 0, 1});
    const Tensor k = Make(dtype, {1, 2, 2}, {1, 0, 1, 1});
    const Tensor v = Make(dtype, {1, 2, 2}, {1, 2, 3, 4});
    // scale 1/sqrt(2): query 0 scores both keys 1/sqrt(2) and averages them; query 1
    // scores [0, 1/sqrt(2)]: weights [1 - p, p] with p = sigmoid(1/sqrt(2)).
    Tensor y = RunOne("MultiHeadAttention", {q, k, v}, Heads(1));
    EXPECT_EQ(y.dtype(), dtype);
    EXPECT_EQ(y.shape(), (Shape{1, 2, 2}));
    ExpectNear(y, {2, 3, 2.3395230986533138, 3.3395230986533138}, tol);

    // Query 0 may not see key 1 (-inf): it takes key 0's value; query 1 scores
    // [0, 2] at scale 2: p = sigmoid(2).
    const Tensor mask = Make(DType::kBool, {2, 2}, {0, 1, 0, 0});
    AttrMap attrs = Heads(1);
    attrs["scale"] = AttrValue::Float(2.0);
    attrs["mask_value"] = AttrValue::Float(-kInf);
    y = RunOne("MultiHeadAttention", {q, k, v, mask}, attrs);
    ExpectNear(y, {1, 2, 2.7615941559557644, 3.7615941559557644}, tol);

    // The mask replaces the score after the scale: query 0's masked score 2 equals its
    // scaled score 2 * 1 for key 0, so it averages the keys again.
    attrs["mask_value"] = AttrValue::Float(2.0);
    y = RunOne("MultiHeadAttention", {q, k, v, mask}, attrs);
    ExpectNear(y, {2, 3, 2.7615941559557644, 3.7615941559557644}, tol);

    // Scores of 1000 (exp overflows even in double unless shifted by the maximum):
    // query 0 averages the keys, query 1 takes key 1's value.
    y = RunOne("MultiHeadAttention", {q, k, v}, {{"num_heads", AttrValue::Int(1)}, {"scale", AttrValue::Float(1000)}});
    ExpectNear(y, {2, 3, 3, 4}, tol);
  }
}

// Q packed [B, S, 3E] gives what Q, K, V cut from it give.
TEST(MultiHeadAttentionKernelTest, PackedEqualsSeparate) {
  constexpr uint32_t kSeed = 71;
  SCOPED_TRACE(absl::StrCat("seed=", kSeed));
  constexpr int64_t kB = 2, kS = 5, kE = 12;  // 3 heads of 4
  const Tensor packed = Random({kB, kS, 3 * kE}, kSeed, 2.0);
  const std::vector<double> pv = Values(packed);
  std::vector<double> parts[3];
  for (int64_t r = 0; r < kB * kS; ++r) {
    for (int p = 0; p < 3; ++p) {
      for (int64_t c = 0; c < kE; ++c) parts[p].push_back(pv[r * 3 * kE + p * kE + c]);
    }
  }
  const Tensor q = Tensor::FromVector<double>({kB, kS, kE}, parts[0]);
  const Tensor k = Tensor::FromVector<double>({kB, kS, kE}, parts[1]);
  const Tensor v = Tensor::FromVector<double>({kB, kS, kE}, parts[2]);
  const Tensor mask =
      Make(DType::kBool, {kS, kS}, {0, 1, 1, 1, 1, 0, 0, 1, 1, 1, 0, 0, 0, 1, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0});
  for (bool masked : {false, true}) {
    SCOPED_TRACE(masked ? "causal mask" : "no mask");
    std::vector<std::optional<Tensor>> packed_inputs = {packed, std::nullopt, std::nullopt};
    std::vector<std::optional<Tensor>> separate_inputs = {q, k, v};
    if (masked) {
      packed_inputs.push_back(mask);
      separate_inputs.push_back(mask);
    }
    const Tensor want = RunOne("MultiHeadAttention", separate_inputs, Heads(3));
    const Tensor got = RunOne("MultiHeadAttention", packed_inputs, Heads(3));
    ASSERT_EQ(got.shape(), (Shape{kB, kS, kE}));
    ExpectValues(got, Values(want));
  }
}

// Masks of shape [Sq, Sk], [1, Sq, Sk], [B, 1, Sq, Sk], [1, H, Sq, Sk], [B, 1, 1, Sk]
// (padded keys), [Sq, 1] and [] broadcast as the same mask written out to [B, H, Sq, Sk].
TEST(MultiHeadAttentionKernelTest, BroadcastMasksEqualTheFullMask) {
  constexpr uint32_t kSeed = 72;
  SCOPED_TRACE(absl::StrCat("seed=", kSeed));
  constexpr int64_t kB = 2, kH = 3, kSq = 3, kSk = 4;
  std::mt19937 rng(kSeed);
  const Tensor q = Random({kB, kSq, kH * 2}, rng);
  const Tensor k = Random({kB, kSk, kH * 2}, rng);
  const Tensor v = Random({kB, kSk, kH * 3}, rng);
  std::bernoulli_distribution coin(0.4);
  for (const Shape& shape : {Shape{kSq, kSk}, Shape{1, kSq, kSk}, Shape{kB, 1, kSq, kSk}, Shape{1, kH, kSq, kSk},
                             Shape{kB, 1, 1, kSk}, Shape{kSq, 1}, Shape{}}) {
    SCOPED_TRACE(shape.ToString());
    std::vector<double> small(static_cast<size_t>(shape.num_elements()));
    for (double& m : small) m = coin(rng);
    // The mask's element for (b, h, i, j), its broadcast dims read at 0.
    auto at = [&](int64_t b, int64_t h, int64_t i, int64_t j) {
      const int64_t full[4] = {b, h, i, j};
      int64_t index = 0;
      for (int d = 0; d < shape.rank(); ++d) {
        const int64_t size = shape.dim(d);
        index = index * size + (size == 1 ? 0 : full[4 - shape.rank() + d]);
      }
      return small[static_cast<size_t>(index)];
    };
    std::vector<double> full;
    for (int64_t b = 0; b < kB; ++b) {
      for (int64_t h = 0; h < kH; ++h) {
        for (int64_t i = 0; i < kSq; ++i) {
          for (int64_t j = 0; j < kSk; ++j) full.push_back(at(b, h, i, j));
        }
      }
    }
    AttrMap attrs = Heads(kH);
    attrs["mask_value"] = AttrValue::Float(-0.5);
    const Tensor want = RunOne("MultiHeadAttention", {q, k, v, Make(DType::kBool, {kB, kH, kSq, kSk}, full)}, attrs);
    const Tensor got = RunOne("MultiHeadAttention", {q, k, v, Make(DType::kBool, shape, small)}, attrs);
    ExpectValues(got, Values(want));
  }
}

Tensor Shape64(std::vector<int64_t> dims) {
  const int64_t n = static_cast<int64_t>(dims.size());
  return Tensor::FromVector<int64_t>({n}, dims);
}

// [B, S, H*D] -> [B, H, S, D] (or [B, H, D, S] with `keys_transposed`): a model's split into heads.
Tensor SplitHeads(const Tensor& x, int64_t heads, bool keys_transposed = false) {
  const Shape& s = x.shape();
  const Tensor split = RunOne("Reshape", {x, Shape64({s.dim(0), s.dim(1), heads, s.dim(2) / heads})});
  const std::vector<int64_t> perm =
      keys_transposed ? std::vector<int64_t>{0, 2, 3, 1} : std::vector<int64_t>{0, 2, 1, 3};
  return RunOne("Transpose", {split}, {{"perm", AttrValue::Ints(perm)}});
}

// The kernel against the unfused chain in f64, with a [B, 1, Sq, Sk] mask.
TEST(MultiHeadAttentionKernelTest, MatchesTheChainItFuses) {
  constexpr uint32_t kSeed = 73;
  SCOPED_TRACE(absl::StrCat("seed=", kSeed));
  constexpr int64_t kB = 2, kH = 3, kSq = 4, kSk = 5, kD = 3, kDv = 2;
  constexpr double kScale = 0.8, kMaskValue = -1.25;
  std::mt19937 rng(kSeed);
  const Tensor q = Random({kB, kSq, kH * kD}, rng, 2.0);
  const Tensor k = Random({kB, kSk, kH * kD}, rng, 2.0);
  const Tensor v = Random({kB, kSk, kH * kDv}, rng);
  std::bernoulli_distribution coin(0.4);
  std::vector<double> mask_values(kB * kSq * kSk);
  for (double& m : mask_values) m = coin(rng);
  const Tensor mask = Make(DType::kBool, {kB, 1, kSq, kSk}, mask_values);

  Tensor s = RunOne("MatMul", {SplitHeads(q, kH), SplitHeads(k, kH, /*keys_transposed=*/true)});
  s = RunOne("Mul", {s, Tensor::Scalar<double>(kScale)});
  s = RunOne("Where", {mask, Tensor::Scalar<double>(kMaskValue), s});
  const Tensor p = RunOne("Softmax", {s}, {{"axis", AttrValue::Int(-1)}});
  const Tensor o = RunOne("MatMul", {p, SplitHeads(v, kH)});  // [B, H, Sq, Dv]
  const Tensor merged = RunOne("Transpose", {o}, {{"perm", AttrValue::Ints({0, 2, 1, 3})}});
  const Tensor want = RunOne("Reshape", {merged, Shape64({kB, kSq, kH * kDv})});

  AttrMap attrs = Heads(kH);
  attrs["scale"] = AttrValue::Float(kScale);
  attrs["mask_value"] = AttrValue::Float(kMaskValue);
  const Tensor got = RunOne("MultiHeadAttention", {q, k, v, mask}, attrs);
  ASSERT_EQ(got.shape(), want.shape());
  ExpectValues(got, Values(want), 1e-13);
}

// Inputs that inference would have refused reach the kernel directly (as from a
// hand-built executor): an InvalidArgument naming the node, the op and the problem.
TEST(MultiHeadAttentionKernelTest, InvalidInputsAreErrors) {
  const OpDef* def = *OpRegistry::Global().Lookup("MultiHeadAttention");
  const KernelFn* fn = KernelRegistry::Global().Find("MultiHeadAttention", kReferenceDevice, DType::kF32);
  ASSERT_NE(fn, nullptr);
  Tensor q(DType::kF32, Shape{1, 4, 6});
  Tensor k(DType::kF32, Shape{1, 5, 6});
  Tensor k64(DType::kF64, Shape{1, 5, 6});
  Tensor v(DType::kF32, Shape{1, 5, 4});
  Tensor bad_mask(DType::kBool, Shape{3, 4, 5});
  Tensor y(DType::kF32, Shape{1, 4, 4});
  struct Bad {
    std::vector<const Tensor*> inputs;
    int64_t heads;
    const char* says;
  };
  const Bad cases[] = {
      {{&q, &k}, 2, "inputs 'K' and 'V' must be given together"},
      {{&q, nullptr, &v}, 2, "inputs 'K' and 'V' must be given together"},
      {{&q, &k, &v}, 4, "input 'Q' [1,4,6]: its last dim 6 is not a positive multiple of num_heads = 4"},
      {{&q}, 4, "input 'Q' [1,4,6] is packed (no K and V): its last dim 6 must be 3 * num_heads * head_size"},
      {{&q, &k, &v, &bad_mask},
       2,
       "input 'mask' has shape [3,4,5] but must broadcast to [batch, num_heads, q_len, kv_len] = [1,2,4,5]"},
      {{&q, &k64, &v}, 2, "input 'K' has dtype f64 but 'Q' has f32"},
      {{&q, &k, &v}, 0, "attribute 'num_heads' is 0 but must be >= 1"},
  };
  for (const Bad& bad : cases) {
    SCOPED_TRACE(bad.says);
    KernelContext ctx(*def, "attn", Heads(bad.heads), bad.inputs, {&y});
    const absl::Status s = (*fn)(ctx);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_TRUE(absl::StartsWith(s.message(), "node 'attn' (MultiHeadAttention): ")) << s;
    EXPECT_TRUE(absl::StrContains(s.message(), bad.says)) << s;
  }
}

}  // namespace
}  // namespace tsr

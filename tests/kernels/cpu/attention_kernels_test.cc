// Tests of the cpu MultiHeadAttention kernel (kernels/cpu/attention_kernels.cc) against
// the reference at every ISA level, single-threaded and over 3 threads: packed and
// separate Q/K/V, value heads narrower or wider than the query heads, key sequences
// shorter and longer than the query's, odd sizes, batches of 1 and 2, every mask shape
// the op broadcasts (and none), causal masks with -inf and random ones with a finite
// value, the default and explicit scales, query rows split into several blocks, the
// GPT-2 block's shape, rows masked entirely, empty sizes, and errors.
#include <cmath>
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
#include "graph/op_registry.h"
#include "graph/tensor.h"
#include "gtest/gtest.h"
#include "kernels/kernel.h"
#include "kernels/run_op.h"
#include "tests/kernels/cpu/cpu_test_util.h"

namespace tsr {
namespace {

using testing::CpuIsaTest;
using testing::ExpectCpuMatchesReference;
using testing::RandomF32;

constexpr double kTolerance = 1e-5;
constexpr double kInf = std::numeric_limits<double>::infinity();

// The shapes of mask the op broadcasts to [B, H, Sq, Sk].
// -, [Sq,Sk], [1,1,Sq,Sk], [B,1,Sq,Sk], [B,H,Sq,Sk], [B,1,1,Sk] (padded keys) and
// [Sq,1] (whole query rows).
enum class MaskShape { kNone, kRows, kShared, kPerBatch, kPerHead, kKeys, kQueries };
constexpr int kMaskShapes = 7;

struct AttentionCase {
  int64_t batch, heads, q_len, kv_len, head_dim, v_head_dim;
  bool packed = false;  // Q [B, S, 3*H*D] alone (needs q_len == kv_len, v_head_dim == head_dim)
  MaskShape mask = MaskShape::kNone;
  bool causal = true;  // true where key j > query i, value -inf; else random with a finite value
  double scale = 0.0;  // 0: 1 / sqrt(head_dim)

  std::string ToString() const {
    return absl::StrCat("B=", batch, " H=", heads, " Sq=", q_len, " Sk=", kv_len, " D=", head_dim, " Dv=", v_head_dim,
                        packed ? " packed" : "", " mask=", static_cast<int>(mask), causal ? " causal" : " random",
                        " scale=", scale);
  }
};

// A bool mask of `shape` ([..., Sq or 1, Sk or 1]): causal (true above the diagonal, so
// every row keeps key 0; a padding mask keeps key 0 alone, a row mask everything) or
// true with probability 0.3.
Tensor MakeMask(std::mt19937& rng, const Shape& shape, bool causal) {
  Tensor mask(DType::kBool, shape);
  const int64_t sq = shape.dim(shape.rank() - 2), sk = shape.dim(shape.rank() - 1);
  std::bernoulli_distribution coin(0.3);
  bool* p = mask.data<bool>();
  for (int64_t e = 0; e < mask.num_elements(); ++e) p[e] = causal ? e % sk > e / sk % sq : coin(rng);
  return mask;
}

std::vector<std::optional<Tensor>> MakeInputs(std::mt19937& rng, const AttentionCase& c) {
  std::vector<std::optional<Tensor>> inputs;
  if (c.packed) {
    inputs = {RandomF32(rng, Shape{c.batch, c.q_len, 3 * c.heads * c.head_dim}, -2.0f, 2.0f), std::nullopt,
              std::nullopt};
  } else {
    inputs = {RandomF32(rng, Shape{c.batch, c.q_len, c.heads * c.head_dim}, -2.0f, 2.0f),
              RandomF32(rng, Shape{c.batch, c.kv_len, c.heads * c.head_dim}, -2.0f, 2.0f),
              RandomF32(rng, Shape{c.batch, c.kv_len, c.heads * c.v_head_dim})};
  }
  const int64_t sq = c.q_len, sk = c.kv_len;
  switch (c.mask) {
    case MaskShape::kNone:
      break;
    case MaskShape::kRows:
      inputs.push_back(MakeMask(rng, Shape{sq, sk}, c.causal));
      break;
    case MaskShape::kShared:
      inputs.push_back(MakeMask(rng, Shape{1, 1, sq, sk}, c.causal));
      break;
    case MaskShape::kPerBatch:
      inputs.push_back(MakeMask(rng, Shape{c.batch, 1, sq, sk}, c.causal));
      break;
    case MaskShape::kPerHead:
      inputs.push_back(MakeMask(rng, Shape{c.batch, c.heads, sq, sk}, c.causal));
      break;
    case MaskShape::kKeys:
      inputs.push_back(MakeMask(rng, Shape{c.batch, 1, 1, sk}, c.causal));
      break;
    case MaskShape::kQueries:
      inputs.push_back(MakeMask(rng, Shape{sq, 1}, c.causal));
      break;
  }
  return inputs;
}

AttrMap MakeAttrs(const AttentionCase& c) {
  AttrMap attrs = {{"num_heads", AttrValue::Int(c.heads)}, {"scale", AttrValue::Float(c.scale)}};
  if (c.mask != MaskShape::kNone) attrs["mask_value"] = AttrValue::Float(c.causal ? -kInf : -1.5);
  return attrs;
}

void ExpectCaseMatchesReference(uint32_t seed, const AttentionCase& c) {
  SCOPED_TRACE(absl::StrCat("seed=", seed, " ", c.ToString()));
  std::mt19937 rng(seed);
  ExpectCpuMatchesReference("MultiHeadAttention", MakeInputs(rng, c), MakeAttrs(c), kTolerance);
}

class AttentionTest : public CpuIsaTest {};

// Every combination of heads, head sizes and sequence lengths, the batch, mask shape,
// mask kind and scale cycling along.
TEST_P(AttentionTest, SeparateQkvOddSizes) {
  const std::pair<int64_t, int64_t> lengths[] = {{1, 1}, {3, 17}, {17, 3}, {17, 130}, {130, 130}};
  uint32_t seed = 100;
  for (int64_t heads : {1, 3}) {
    for (int64_t d : {1, 5, 17, 64}) {
      for (const auto& [q_len, kv_len] : lengths) {
        ++seed;
        AttentionCase c{.batch = 1 + seed % 2, .heads = heads, .q_len = q_len, .kv_len = kv_len, .head_dim = d};
        c.v_head_dim = seed % 3 == 0 ? d : (seed % 3 == 1 ? 7 : 1);
        c.mask = static_cast<MaskShape>(seed % kMaskShapes);
        c.causal = seed % 2 == 0;
        c.scale = seed % 4 == 0 ? 0.7 : 0.0;
        ExpectCaseMatchesReference(seed, c);
      }
    }
  }
}

TEST_P(AttentionTest, PackedQkv) {
  uint32_t seed = 200;
  for (int64_t heads : {1, 3}) {
    for (int64_t d : {1, 5, 17, 64}) {
      for (int64_t len : {1, 3, 17, 130}) {
        ++seed;
        AttentionCase c{.batch = 1 + seed % 2, .heads = heads, .q_len = len, .kv_len = len, .head_dim = d};
        c.v_head_dim = d;
        c.packed = true;
        c.mask = static_cast<MaskShape>(seed % kMaskShapes);
        c.causal = seed % 3 != 0;
        c.scale = seed % 4 == 1 ? 1.3 : 0.0;
        ExpectCaseMatchesReference(seed, c);
      }
    }
  }
}

// Every mask shape with both kinds of mask on one geometry.
TEST_P(AttentionTest, EveryMaskShape) {
  uint32_t seed = 300;
  for (MaskShape mask : {MaskShape::kNone, MaskShape::kRows, MaskShape::kShared, MaskShape::kPerBatch,
                         MaskShape::kPerHead, MaskShape::kKeys, MaskShape::kQueries}) {
    for (bool causal : {true, false}) {
      for (bool packed : {false, true}) {
        ++seed;
        AttentionCase c{.batch = 2, .heads = 3, .q_len = 17, .kv_len = 17, .head_dim = 5, .v_head_dim = 5};
        c.packed = packed;
        c.mask = mask;
        c.causal = causal;
        ExpectCaseMatchesReference(seed, c);
      }
    }
  }
}

// 2048 keys: 200 query rows' scores exceed one block's, so the rows are split (into
// 56, 56, 56, 32 at AVX-512's 14-row tiles).
TEST_P(AttentionTest, QueryRowsSplitIntoBlocks) {
  AttentionCase c{.batch = 1, .heads = 1, .q_len = 200, .kv_len = 2048, .head_dim = 8, .v_head_dim = 8};
  ExpectCaseMatchesReference(400, c);
  c.mask = MaskShape::kRows;
  ExpectCaseMatchesReference(401, c);
  c.causal = false;
  c.batch = 2;
  c.mask = MaskShape::kPerBatch;
  c.scale = 0.5;
  ExpectCaseMatchesReference(402, c);
}

// The shape the kernel is tuned for: GPT-2's attention (packed c_attn output, causal).
TEST_P(AttentionTest, Gpt2Block) {
  AttentionCase c{.batch = 1, .heads = 12, .q_len = 128, .kv_len = 128, .head_dim = 64, .v_head_dim = 64};
  c.packed = true;
  c.mask = MaskShape::kShared;
  ExpectCaseMatchesReference(500, c);
}

// Masks that leave runs of keys masked for many rows together, which the kernel skips
// (two register tiles of query rows at a time, only their unmasked keys' span): causal and
// banded (keys more than 20 before the query masked too) over 100 queries, with -inf,
// with a finite value far below the scores (exp gives exactly 0: skipped) and with one
// near them (exp does not: the kernel takes every key, as the reference does).
TEST_P(AttentionTest, MaskedKeySpans) {
  uint32_t seed = 450;
  for (bool banded : {false, true}) {
    for (double mask_value : {-kInf, -1e4, -1.5}) {
      for (MaskShape shape : {MaskShape::kRows, MaskShape::kPerHead}) {
        ++seed;
        SCOPED_TRACE(absl::StrCat("seed=", seed, banded ? " banded" : " causal", " mask_value=", mask_value,
                                  " mask=", static_cast<int>(shape)));
        std::mt19937 rng(seed);
        AttentionCase c{.batch = 2, .heads = 2, .q_len = 100, .kv_len = 100, .head_dim = 8, .v_head_dim = 8};
        c.mask = shape;
        std::vector<std::optional<Tensor>> inputs = MakeInputs(rng, c);
        Tensor& mask = *inputs[3];
        bool* m = mask.data<bool>();
        for (int64_t e = 0; e < mask.num_elements(); ++e) {
          const int64_t i = e / c.kv_len % c.q_len, j = e % c.kv_len;
          m[e] = j > i || (banded && j < i - 20);
        }
        AttrMap attrs = MakeAttrs(c);
        attrs["mask_value"] = AttrValue::Float(mask_value);
        ExpectCpuMatchesReference("MultiHeadAttention", inputs, attrs, kTolerance);
      }
    }
  }
}

// A row masked entirely with -inf is NaN in both kernels (softmax of all -inf); the
// other rows are not affected. With a finite mask value such a row is uniform.
TEST_P(AttentionTest, FullyMaskedRow) {
  std::mt19937 rng(600);
  SCOPED_TRACE("seed=600");
  const Tensor q = RandomF32(rng, Shape{1, 4, 6});
  const Tensor k = RandomF32(rng, Shape{1, 5, 6});
  const Tensor v = RandomF32(rng, Shape{1, 5, 4});
  Tensor mask(DType::kBool, Shape{4, 5});
  for (int64_t j = 0; j < 5; ++j) mask.data<bool>()[2 * 5 + j] = true;  // row 2
  mask.data<bool>()[0 * 5 + 3] = true;
  for (double value : {-kInf, -3.4028234663852886e38}) {
    SCOPED_TRACE(absl::StrCat("mask_value=", value));
    const AttrMap attrs = {{"num_heads", AttrValue::Int(2)}, {"mask_value", AttrValue::Float(value)}};
    ExpectCpuMatchesReference("MultiHeadAttention", {q, k, v, mask}, attrs, kTolerance);
    RunOpOptions cpu;
    cpu.device = kCpuDevice;
    cpu.fall_back_to_reference = false;
    absl::StatusOr<std::vector<Tensor>> y = RunOp("MultiHeadAttention", {q, k, v, mask}, attrs, cpu);
    ASSERT_TRUE(y.ok()) << y.status();
    for (int64_t i = 0; i < 4; ++i) {
      for (int64_t e = 0; e < 4; ++e) {
        EXPECT_EQ(std::isnan((*y)[0].data<float>()[i * 4 + e]), i == 2 && value == -kInf) << "row " << i << " " << e;
      }
    }
  }
}

// Empty batches, query sequences and key sequences (the last: every output 0).
TEST_P(AttentionTest, EmptySizes) {
  std::mt19937 rng(700);
  SCOPED_TRACE("seed=700");
  const AttrMap attrs = {{"num_heads", AttrValue::Int(2)}};
  ExpectCpuMatchesReference(
      "MultiHeadAttention",
      {RandomF32(rng, Shape{0, 3, 4}), RandomF32(rng, Shape{0, 5, 4}), RandomF32(rng, Shape{0, 5, 2})}, attrs,
      kTolerance);
  ExpectCpuMatchesReference(
      "MultiHeadAttention",
      {RandomF32(rng, Shape{2, 0, 4}), RandomF32(rng, Shape{2, 5, 4}), RandomF32(rng, Shape{2, 5, 2})}, attrs,
      kTolerance);
  ExpectCpuMatchesReference(
      "MultiHeadAttention",
      {RandomF32(rng, Shape{2, 3, 4}), RandomF32(rng, Shape{2, 0, 4}), RandomF32(rng, Shape{2, 0, 2})}, attrs,
      kTolerance);
}

// Inputs that inference would have refused reach the kernel directly: it returns the
// reference kernel's error, naming the node and op, instead of reading out of bounds.
TEST_P(AttentionTest, InvalidInputsGiveTheReferenceError) {
  const OpDef* def = *OpRegistry::Global().Lookup("MultiHeadAttention");
  const KernelFn* fn = KernelRegistry::Global().Find("MultiHeadAttention", kCpuDevice, DType::kF32);
  ASSERT_NE(fn, nullptr);
  Tensor q(DType::kF32, Shape{1, 4, 6});
  Tensor k(DType::kF32, Shape{1, 5, 6});
  Tensor v(DType::kF32, Shape{1, 5, 4});
  Tensor bad_mask(DType::kBool, Shape{3, 5});
  Tensor float_mask(DType::kF32, Shape{4, 5});
  Tensor y(DType::kF32, Shape{1, 4, 4});
  const AttrMap attrs = {{"num_heads", AttrValue::Int(2)}};
  struct Bad {
    std::vector<const Tensor*> inputs;
    AttrMap attrs;
    const char* says;
  };
  const Bad cases[] = {
      {{&q, &k}, attrs, "'K' and 'V' must be given together"},
      {{&q, &k, &v}, {{"num_heads", AttrValue::Int(4)}}, "is not a positive multiple of num_heads = 4"},
      {{&q}, {{"num_heads", AttrValue::Int(4)}}, "must be 3 * num_heads * head_size, a multiple of 12"},
      {{&q, &k, &v, &bad_mask}, attrs, "input 'mask' has shape [3,5] but must broadcast"},
      {{&q, &k, &v, &float_mask}, attrs, "input 'mask' has dtype f32 but bool is required"},
      {{&q, &k, &k}, attrs, "the output is f32[1,4,4] but f32[1,4,6] is required"},
  };
  for (const Bad& bad : cases) {
    SCOPED_TRACE(bad.says);
    KernelContext ctx(*def, "attn", bad.attrs, bad.inputs, {&y});
    const absl::Status s = (*fn)(ctx);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_TRUE(absl::StartsWith(s.message(), "node 'attn' (MultiHeadAttention): ")) << s;
    EXPECT_TRUE(absl::StrContains(s.message(), bad.says)) << s;
  }
}

TSR_INSTANTIATE_FOR_ALL_ISAS(AttentionTest);

}  // namespace
}  // namespace tsr

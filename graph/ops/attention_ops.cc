// MultiHeadAttention: scaled dot-product attention over several heads in one node, made
// by the compiler's attention fusion (compiler/transforms/attention_fusion.cc) from the
// chain a model exports -- Reshape/Transpose into heads, MatMul(Q, K^T), a scale, a
// masking Where, Softmax, MatMul with V, Transpose/Reshape back -- so the kernel reads
// the heads where the projections wrote them and keeps each head's scores in cache.
// The inputs and the output are in the layout before the split into heads (see
// attention_geometry.h), which is what makes the transposes and the Split disappear:
//
//   Q [B, Sq, H*D], K [B, Sk, H*D], V [B, Sk, H*Dv]  (or Q packed [B, S, 3*H*D], no K, V)
//   S[b,h,i,j] = scale * sum_d Q[b,i,h*D+d] K[b,j,h*D+d]
//   S[b,h,i,j] = mask_value where mask[b,h,i,j] (bool, broadcast to [B, H, Sq, Sk])
//   Y[b,i,h*Dv+e] = sum_j softmax_j(S[b,h,i,:])[j] V[b,j,h*Dv+e]
//
// The mask replaces scores after the scale, as Where(mask, value, scores) does. ONNX
// Runtime's contrib op of the same name is the precedent (scale 0 means 1 / sqrt(D)).
// No gradient: the fusion only rewrites chains of single-use intermediates, which a
// training graph's backward pass never leaves.
#include <cstdint>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "graph/op_registry.h"
#include "graph/ops/attention_geometry.h"
#include "graph/ops/op_helpers.h"
#include "graph/ops/register_ops.h"
#include "graph/status_macros.h"

namespace tsr {

namespace {

constexpr DType kAttentionDTypes[] = {DType::kF32, DType::kF64};
constexpr DType kMaskDTypes[] = {DType::kBool};

std::optional<Shape> InputShape(const InferenceContext& ctx, int i) {
  return ctx.has_input(i) ? std::optional<Shape>(ctx.input_shape(i)) : std::nullopt;
}

absl::StatusOr<AttentionGeometry> GeometryOf(const InferenceContext& ctx) {
  absl::StatusOr<AttentionGeometry> g =
      ComputeAttentionGeometry(ctx.input_shape(0), InputShape(ctx, 1), InputShape(ctx, 2), InputShape(ctx, 3),
                               ctx.GetInt("num_heads"), ctx.GetFloat("scale"));
  if (!g.ok()) return ctx.Error(g.status().message());
  return g;
}

absl::Status InferMultiHeadAttention(InferenceContext& ctx) {
  TSR_ASSIGN_OR_RETURN(const AttentionGeometry g, GeometryOf(ctx));
  ctx.set_output(0, ctx.input_dtype(0), g.output_shape());
  return absl::OkStatus();
}

// Per score: the two products' multiply-adds, the scale, the mask's select and
// softmax's max, exp, sum and divide.
int64_t MultiHeadAttentionFlops(const InferenceContext& ctx) {
  absl::StatusOr<AttentionGeometry> g = GeometryOf(ctx);
  if (!g.ok()) return 0;
  const int64_t per_score = 2 * g->head_dim + 2 * g->v_head_dim + 1 + (ctx.has_input(3) ? 1 : 0) + 4;
  return SaturatingProduct({g->batch == kBatchDim ? 1 : g->batch, g->heads, g->q_len, g->kv_len, per_score});
}

}  // namespace

absl::Status RegisterAttentionOps(OpRegistry& registry) {
  return registry.Register(
      OpDefBuilder("MultiHeadAttention")
          .Summary(
              "Scaled dot-product attention over num_heads heads: Y[b,i,h*Dv+e] = sum_j softmax_j(S)[j] V[b,j,h*Dv+e], "
              "S[b,h,i,j] = scale * Q[b,i,h,:] . K[b,j,h,:], replaced by mask_value where the bool mask (broadcast "
              "to [B, heads, Sq, Sk]) is true. Q [B, Sq, heads*D], K [B, Sk, heads*D], V [B, Sk, heads*Dv]; or Q "
              "alone, packed [B, S, 3*heads*D] (query, key and value side by side). scale 0 means 1/sqrt(D). Made "
              "by the compiler's attention fusion; not an ONNX op.")
          .Input("Q", "T")
          .OptionalInput("K", "T")
          .OptionalInput("V", "T")
          .OptionalInput("mask", "M")
          .Output("Y", "T")
          .TypeConstraint("T", kAttentionDTypes)
          .TypeConstraint("M", kMaskDTypes)
          .RequiredAttr("num_heads", AttrType::kInt)
          .Attr("scale", AttrType::kFloat, AttrValue::Float(0.0))
          .Attr("mask_value", AttrType::kFloat, AttrValue::Float(-3.4028234663852886e38))
          .Infer(InferMultiHeadAttention)
          .Flops(MultiHeadAttentionFlops)
          .Build());
}

}  // namespace tsr

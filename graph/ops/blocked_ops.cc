// The channel-blocked activation layout's ops, made by the compiler's layout pass
// (compiler/transforms/activation_layout.cc) for chains of convolutions; not ONNX ops.
// A blocked activation [N, C, spatial...] is stored as [N, ceil(C / 16), spatial..., 16]
// (oneDNN's nChw16c, ONNX Runtime's NCHWc): channel c in block c / 16, lane c % 16, and
// the lanes past C hold zeros.
//
//   BlockChannels:   X [N, C, spatial...] -> Y [N, ceil(C/16), spatial..., 16]
//   UnblockChannels: X [N, ceil(C/16), spatial..., 16] -> Y [N, C, spatial...] (attr channels)
//   BlockedConv:     FusedConv with blocked X (or plain, input_blocked = 0), Z and Y:
//                    Y = block(activation(Conv(unblock(X), W, B) + unblock(Z)))
//
// BlockedConv takes FusedConv's attributes and shape function, applied to the plain
// shapes, so both ops always agree on the geometry. No gradients: inference graphs only.
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/op_registry.h"
#include "graph/ops/blocked_layout.h"
#include "graph/ops/op_helpers.h"
#include "graph/ops/register_ops.h"
#include "graph/status_macros.h"

namespace tsr {

namespace {

constexpr DType kBlockedDTypes[] = {DType::kF32, DType::kF64};

// [N, channels, spatial...] of a blocked [N, ceil(channels/16), spatial..., 16], or an
// error naming input `i` when `blocked` is not such a shape.
absl::StatusOr<Shape> PlainShape(const InferenceContext& ctx, int i, const Shape& blocked, int64_t channels) {
  std::optional<Shape> plain = PlainShapeOf(blocked, channels);
  if (!plain.has_value()) {
    return ctx.Error(absl::StrCat("input ", i, " ('", ctx.op_def().inputs[i].name, "') has shape ", blocked.ToString(),
                                  " but a blocked activation of ", channels, " channels, [N, ", ChannelBlocks(channels),
                                  ", spatial..., ", kChannelBlock, "], is required"));
  }
  return *std::move(plain);
}

absl::Status InferBlockChannels(InferenceContext& ctx) {
  const Shape& x = ctx.input_shape(0);
  if (x.rank() < 3) {
    return ctx.Error(absl::StrCat("input 0 ('X') has shape ", x.ToString(),
                                  " but [N, C, spatial...] with at least one spatial dimension is required"));
  }
  if (x.dim(1) == kBatchDim) {
    return ctx.Error(absl::StrCat("input 0 ('X') has shape ", x.ToString(), " with a symbolic channel dimension"));
  }
  ctx.set_output(0, ctx.input_dtype(0), BlockedShape(x));
  return absl::OkStatus();
}

absl::Status InferUnblockChannels(InferenceContext& ctx) {
  const int64_t channels = ctx.GetInt("channels");
  if (channels < 1) return ctx.Error(absl::StrCat("attribute 'channels' is ", channels, " but must be >= 1"));
  TSR_ASSIGN_OR_RETURN(Shape plain, PlainShape(ctx, 0, ctx.input_shape(0), channels));
  ctx.set_output(0, ctx.input_dtype(0), std::move(plain));
  return absl::OkStatus();
}

// Input channels of a BlockedConv: W [M, C / group, k...] and the group.
int64_t ConvInputChannels(const InferenceContext& ctx) {
  const Shape& w = ctx.input_shape(1);
  return w.rank() >= 2 ? w.dim(1) * ctx.GetInt("group") : 0;
}

}  // namespace

absl::Status RegisterBlockedOps(OpRegistry& registry) {
  TSR_RETURN_IF_ERROR(registry.Register(
      OpDefBuilder("BlockChannels")
          .Summary("X [N, C, spatial...] in the channel-blocked layout [N, ceil(C/16), spatial..., 16] (channel c at "
                   "block c/16, lane c%16; zeros in the lanes past C). Made by the compiler's layout pass.")
          .Input("X", "T")
          .Output("Y", "T")
          .TypeConstraint("T", kBlockedDTypes)
          .Infer(InferBlockChannels)
          .Build()));
  TSR_RETURN_IF_ERROR(registry.Register(
      OpDefBuilder("UnblockChannels")
          .Summary("The inverse of BlockChannels: X [N, ceil(C/16), spatial..., 16] into [N, C, spatial...], C the "
                   "attribute 'channels'. Made by the compiler's layout pass.")
          .Input("X", "T")
          .Output("Y", "T")
          .TypeConstraint("T", kBlockedDTypes)
          .RequiredAttr("channels", AttrType::kInt)
          .Infer(InferUnblockChannels)
          .Build()));

  // BlockedConv is FusedConv on blocked activations: FusedConv's attributes and shape
  // function, applied to the plain shapes.
  const OpDef* fused_conv = registry.Find("FusedConv");
  if (fused_conv == nullptr || !fused_conv->infer || !fused_conv->flops) {
    return absl::FailedPreconditionError(
        "BlockedConv needs FusedConv (with its shape and FLOP functions) registered "
        "first");
  }
  const ShapeFn infer_fused = fused_conv->infer;
  const FlopsFn fused_flops = fused_conv->flops;
  OpDefBuilder blocked("BlockedConv");
  blocked
      .Summary(
          "FusedConv in the channel-blocked layout: Y = block(activation(Conv(unblock(X), W, B) + unblock(Z))), X "
          "blocked [N, ceil(C/16), spatial..., 16] (or plain [N, C, spatial...] with input_blocked = 0), Z and Y "
          "blocked; W [M, C/group, k...] and B [M] as Conv's. Made by the compiler's layout pass; not an ONNX op.")
      .Input("X", "T")
      .Input("W", "T")
      .OptionalInput("B", "T")
      .OptionalInput("Z", "T")
      .Output("Y", "T")
      .TypeConstraint("T", kBlockedDTypes);
  for (const AttrDef& attr : fused_conv->attrs) {
    if (attr.required) {
      blocked.RequiredAttr(attr.name, attr.type);
    } else if (attr.default_value.has_value()) {
      blocked.Attr(attr.name, attr.type, *attr.default_value);
    } else {
      blocked.OptionalAttr(attr.name, attr.type);
    }
  }
  // Shared by the shape and FLOP functions: the context of the same node on plain shapes
  // (X unblocked, Z left out), or the error naming what does not fit.
  const auto plain_context = [](const InferenceContext& ctx) -> absl::StatusOr<InferenceContext> {
    const int64_t group = ctx.GetInt("group");
    if (ctx.input_rank(1) < 3 || group < 1) {
      return ctx.Error(absl::StrCat("input 1 ('W') has shape ", ctx.input_shape(1).ToString(), " and group is ", group,
                                    ": [M, C/group, kernel...] and group >= 1 are required"));
    }
    Shape x = ctx.input_shape(0);
    if (ctx.GetInt("input_blocked") != 0) {
      TSR_ASSIGN_OR_RETURN(x, PlainShape(ctx, 0, x, ConvInputChannels(ctx)));
    }
    std::vector<std::optional<TensorType>> types = {TensorType(ctx.input_dtype(0), std::move(x)), ctx.input(1)};
    types.push_back(ctx.has_input(2) ? std::optional<TensorType>(ctx.input(2)) : std::nullopt);
    types.push_back(std::nullopt);
    return InferenceContext(ctx.op_def(), ctx.node_name(), ctx.attrs(), std::move(types), {});
  };
  blocked.Attr("input_blocked", AttrType::kInt, AttrValue::Int(1))
      .Infer([infer_fused, plain_context](InferenceContext& ctx) -> absl::Status {
        TSR_RETURN_IF_ERROR(CheckFlagAttr(ctx, "input_blocked"));
        TSR_ASSIGN_OR_RETURN(InferenceContext plain, plain_context(ctx));
        TSR_RETURN_IF_ERROR(infer_fused(plain));
        const Shape y = BlockedShape(plain.output(0).shape);
        if (ctx.has_input(3) && ctx.input_shape(3) != y) {
          return ctx.Error(absl::StrCat("input 3 ('Z', the residual) has shape ", ctx.input_shape(3).ToString(),
                                        " but must have exactly the output's shape ", y.ToString()));
        }
        ctx.set_output(0, ctx.input_dtype(0), y);
        return absl::OkStatus();
      })
      .Flops([infer_fused, fused_flops, plain_context](const InferenceContext& ctx) -> int64_t {
        absl::StatusOr<InferenceContext> plain = plain_context(ctx);
        if (!plain.ok() || !infer_fused(*plain).ok()) return 0;
        // FusedConv's count with the residual's adds, when there is one.
        const int64_t residual_adds = ctx.has_input(3) ? OutputElements(*plain) : 0;
        return fused_flops(*plain) + residual_adds;
      });
  return registry.Register(blocked.Build());
}

}  // namespace tsr

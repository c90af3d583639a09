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
//   BlockedInvertedResidual: MobileNetV2's block, three BlockedConvs in one node --
//                    E = BlockedConv(X, We, Be)  (pointwise; optional: E = X without We)
//                    D = BlockedConv(E, Wd, Bd)  (depthwise, group = channels; strides, pads)
//                    Y = BlockedConv(D, Wp, Bp, Z) (pointwise)
//                    each with its own activation (expand_activation, ... with
//                    expand_alpha / _min / _max like FusedConv's), made by the
//                    compiler's inverted-residual fusion so the kernel can keep E and D
//                    in cache (kernels/cpu/conv_blocked_inverted_residual.h).
//
// BlockedConv takes FusedConv's attributes and shape function, applied to the plain
// shapes, so both ops always agree on the geometry. No gradients: inference graphs only.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
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

constexpr const char* kStagePrefixes[] = {"expand_", "depthwise_", "project_"};

// The activation attributes of one stage, FusedConv's under the stage's prefix.
void AddStageActivationAttrs(OpDefBuilder& b, const OpDef& fused_conv, const std::string& prefix) {
  for (const char* name : {"activation", "alpha", "min", "max"}) {
    for (const AttrDef& attr : fused_conv.attrs) {
      if (attr.name == name) b.Attr(prefix + name, attr.type, *attr.default_value);
    }
  }
}

// Stage `stage` of a BlockedInvertedResidual node as a FusedConv context on plain shapes:
// X plain, the stage's W and B and attributes.
InferenceContext StageContext(const InferenceContext& ctx, const OpDef& fused_conv, int stage, Shape plain_x) {
  const auto s = static_cast<InvertedResidualStage>(stage);
  const int w = InvertedResidualWeightInput(s), b = InvertedResidualBiasInput(s);
  const Shape& wd = ctx.input_shape(InvertedResidualWeightInput(InvertedResidualStage::kDepthwise));
  std::vector<std::optional<TensorType>> types = {TensorType(ctx.input_dtype(0), std::move(plain_x)), ctx.input(w)};
  types.push_back(ctx.has_input(b) ? std::optional<TensorType>(ctx.input(b)) : std::nullopt);
  types.push_back(std::nullopt);
  return InferenceContext(fused_conv, ctx.node_name(), InvertedResidualStageAttrs(ctx, s, wd.dim(0)), std::move(types),
                          {});
}

// The three stages' plain contexts, each inferred (outputs set), or the first error. The
// expand stage is absent (nullopt) without We.
absl::StatusOr<std::vector<std::optional<InferenceContext>>> InferStages(const InferenceContext& ctx,
                                                                         const OpDef& fused_conv) {
  const int we = InvertedResidualWeightInput(InvertedResidualStage::kExpand);
  const int wd = InvertedResidualWeightInput(InvertedResidualStage::kDepthwise);
  for (int i : {we, wd, InvertedResidualWeightInput(InvertedResidualStage::kProject)}) {
    if (i == we && !ctx.has_input(i)) continue;  // the expansion is optional
    if (!ctx.has_input(i) || ctx.input_rank(i) != 4) {
      return ctx.Error(absl::StrCat("input ", i, " ('", ctx.op_def().inputs[i].name, "') must be a 4-D weight, got ",
                                    ctx.has_input(i) ? ctx.input_shape(i).ToString() : "none"));
    }
  }
  if (!ctx.has_input(we) && ctx.has_input(InvertedResidualBiasInput(InvertedResidualStage::kExpand))) {
    return ctx.Error("input 2 ('Be') is given without input 1 ('We')");
  }
  const int64_t in_channels = ctx.has_input(we) ? ctx.input_shape(we).dim(1) : ctx.input_shape(wd).dim(0);
  TSR_ASSIGN_OR_RETURN(Shape x, PlainShape(ctx, 0, ctx.input_shape(0), in_channels));
  std::vector<std::optional<InferenceContext>> stages(3);
  for (int stage = ctx.has_input(we) ? 0 : 1; stage < 3; ++stage) {
    stages[stage].emplace(StageContext(ctx, fused_conv, stage, std::move(x)));
    TSR_RETURN_IF_ERROR(fused_conv.infer(*stages[stage]));
    x = stages[stage]->output(0).shape;
  }
  // The pointwise stages are 1x1; the depthwise one is depthwise.
  for (InvertedResidualStage stage : {InvertedResidualStage::kExpand, InvertedResidualStage::kProject}) {
    const int w = InvertedResidualWeightInput(stage);
    if (ctx.has_input(w) && (ctx.input_shape(w).dim(2) != 1 || ctx.input_shape(w).dim(3) != 1)) {
      return ctx.Error(absl::StrCat("the ", kStagePrefixes[static_cast<int>(stage)], "weights ",
                                    ctx.input_shape(w).ToString(), " are not 1x1"));
    }
  }
  if (ctx.input_shape(wd).dim(1) != 1) {
    return ctx.Error(
        absl::StrCat("the depthwise weights ", ctx.input_shape(wd).ToString(), " are not [channels, 1, kh, kw]"));
  }
  return stages;
}

absl::Status RegisterBlockedInvertedResidual(OpRegistry& registry, const OpDef& fused_conv) {
  OpDefBuilder b("BlockedInvertedResidual");
  b.Summary(
       "MobileNetV2's inverted-residual block on blocked activations, three BlockedConvs in one node: E = "
       "BlockedConv(X, We, Be) (pointwise; E = X without We), D = BlockedConv(E, Wd, Bd) (depthwise: group = "
       "channels, strides, pads), Y = BlockedConv(D, Wp, Bp, Z) (pointwise), each with its own activation "
       "(expand_/depthwise_/project_ activation, alpha, min, max as FusedConv's). Made by the compiler's "
       "inverted-residual fusion; not an ONNX op.")
      .Input("X", "T")
      .OptionalInput("We", "T")
      .OptionalInput("Be", "T")
      .Input("Wd", "T")
      .OptionalInput("Bd", "T")
      .Input("Wp", "T")
      .OptionalInput("Bp", "T")
      .OptionalInput("Z", "T")
      .Output("Y", "T")
      .TypeConstraint("T", kBlockedDTypes)
      .Attr("strides", AttrType::kInts, AttrValue::Ints({}))
      .Attr("pads", AttrType::kInts, AttrValue::Ints({}));
  for (const char* prefix : kStagePrefixes) AddStageActivationAttrs(b, fused_conv, prefix);
  // The stage contexts refer to FusedConv's definition: the functions keep a copy alive.
  const auto conv = std::make_shared<const OpDef>(fused_conv);
  b.Infer([conv](InferenceContext& ctx) -> absl::Status {
     TSR_ASSIGN_OR_RETURN(std::vector<std::optional<InferenceContext>> stages, InferStages(ctx, *conv));
     const Shape y = BlockedShape(stages[2]->output(0).shape);
     const int z = kInvertedResidualResidualInput;
     if (ctx.has_input(z) && ctx.input_shape(z) != y) {
       return ctx.Error(absl::StrCat("input 7 ('Z', the residual) has shape ", ctx.input_shape(z).ToString(),
                                     " but must have exactly the output's shape ", y.ToString()));
     }
     ctx.set_output(0, ctx.input_dtype(0), y);
     return absl::OkStatus();
   }).Flops([conv](const InferenceContext& ctx) -> int64_t {
    absl::StatusOr<std::vector<std::optional<InferenceContext>>> stages = InferStages(ctx, *conv);
    if (!stages.ok()) return 0;
    int64_t flops = ctx.has_input(kInvertedResidualResidualInput) ? OutputElements(*(*stages)[2]) : 0;
    for (const std::optional<InferenceContext>& stage : *stages) {
      if (stage.has_value()) flops += conv->flops(*stage);
    }
    return flops;
  });
  return registry.Register(b.Build());
}

}  // namespace

AttrMap InvertedResidualStageAttrs(const AttrReader& node, InvertedResidualStage stage, int64_t depthwise_channels) {
  AttrMap attrs;
  const std::string prefix = kStagePrefixes[static_cast<int>(stage)];
  attrs["activation"] = AttrValue::String(node.GetString(prefix + "activation"));
  for (const char* name : {"alpha", "min", "max"}) attrs[name] = AttrValue::Float(node.GetFloat(prefix + name));
  if (stage == InvertedResidualStage::kDepthwise) {
    attrs["group"] = AttrValue::Int(depthwise_channels);
    attrs["strides"] = AttrValue::Ints(node.GetInts("strides"));
    attrs["pads"] = AttrValue::Ints(node.GetInts("pads"));
  }
  return attrs;
}

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
  TSR_RETURN_IF_ERROR(registry.Register(blocked.Build()));
  return RegisterBlockedInvertedResidual(registry, *fused_conv);
}

}  // namespace tsr

// The f32 cpu kernels of the channel-blocked layout's ops (graph/ops/blocked_ops.cc):
// BlockChannels and UnblockChannels through conv_blocked.h's conversions, BlockedConv
// through its kernels on weights prepared per call (the compiled runtime prepares
// constant weights once, at load: runtime/compiled/compiled_program.cc), and
// BlockedInvertedResidual through the fused kernel (conv_blocked_inverted_residual.h).
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/op_registry.h"
#include "graph/ops/blocked_layout.h"
#include "graph/status_macros.h"
#include "kernels/cpu/conv_blocked.h"
#include "kernels/cpu/conv_blocked_inverted_residual.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/fused_activation.h"
#include "kernels/cpu/node_window.h"
#include "kernels/cpu/reference_fallback.h"
#include "kernels/kernel.h"

namespace tsr {

namespace {

// The product of dims [begin, end) of `s`.
int64_t Product(const Shape& s, int begin, int end) {
  int64_t p = 1;
  for (int i = begin; i < end; ++i) p *= s.dim(i);
  return p;
}

// The output's shape was inferred from the node: a mismatch is a corrupted program.
absl::Status CheckElements(KernelContext& ctx, int64_t expected) {
  if (ctx.output(0).num_elements() != expected) {
    return ctx.Error(absl::StrCat("the output ", ctx.output(0).shape().ToString(), " does not hold the ", expected,
                                  " elements the input gives"));
  }
  return absl::OkStatus();
}

absl::Status BlockChannelsKernel(KernelContext& ctx) {
  const Shape& x = ctx.input(0).shape();
  if (x.rank() < 3) return RunReferenceKernel(ctx);  // the reference kernel names the problem
  const int64_t pixels = Product(x, 2, x.rank());
  TSR_RETURN_IF_ERROR(CheckElements(ctx, x.dim(0) * ChannelBlocks(x.dim(1)) * kChannelBlock * pixels));
  BlockChannels(x.dim(0), x.dim(1), pixels, ctx.input(0).data<float>(), ctx.output(0).data<float>(),
                ctx.parallel_for());
  return absl::OkStatus();
}

absl::Status UnblockChannelsKernel(KernelContext& ctx) {
  const Shape& x = ctx.input(0).shape();
  const int64_t channels = ctx.GetInt("channels");
  if (x.rank() < 4 || channels < 1 || x.dim(1) != ChannelBlocks(channels) || x.dim(x.rank() - 1) != kChannelBlock) {
    return RunReferenceKernel(ctx);
  }
  const int64_t pixels = Product(x, 2, x.rank() - 1);
  TSR_RETURN_IF_ERROR(CheckElements(ctx, x.dim(0) * channels * pixels));
  UnblockChannels(x.dim(0), channels, pixels, ctx.input(0).data<float>(), ctx.output(0).data<float>(),
                  ctx.parallel_for());
  return absl::OkStatus();
}

absl::Status BlockedConvKernel(KernelContext& ctx) {
  absl::StatusOr<FusedActivation> activation = ParseFusedActivation(ctx);
  if (!activation.ok()) return ctx.Error(activation.status().message());
  absl::StatusOr<std::optional<ConvGeometry>> geometry = NodeBlockedConvGeometry(ctx);
  if (!geometry.ok()) return geometry.status();
  if (!geometry->has_value()) return RunReferenceKernel(ctx);
  const ConvGeometry& g = **geometry;
  absl::StatusOr<PreparedBlockedConv> prepared = PrepareBlockedConv(g, ctx.input(1).data<float>());
  if (!prepared.ok()) return ctx.Error(prepared.status().message());
  BlockedConvForward(*prepared, ctx.input(0).shape().dim(0), ctx.input(0).data<float>(),
                     ctx.GetInt("input_blocked") != 0, ctx.has_input(2) ? ctx.input(2).data<float>() : nullptr,
                     ctx.has_input(3) ? ctx.input(3).data<float>() : nullptr, *activation, ctx.output(0).data<float>(),
                     ctx.parallel_for());
  return absl::OkStatus();
}

absl::Status BlockedInvertedResidualKernel(KernelContext& ctx) {
  absl::StatusOr<std::optional<PreparedInvertedResidual>> prepared = PrepareNodeInvertedResidual(ctx);
  if (!prepared.ok()) return prepared.status();
  if (!prepared->has_value()) return RunReferenceKernel(ctx);
  RunNodeInvertedResidual(**prepared, ctx);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::optional<ConvGeometry>> BlockedConvGeometryOf(const AttrMap& attrs, const Shape& x, bool x_blocked,
                                                                  const Shape& w) {
  const int spatial_end = x.rank() - (x_blocked ? 1 : 0);
  if (w.rank() < 3 || spatial_end < 3) {
    return absl::InvalidArgumentError(absl::StrCat("input 0 ('X') ", x.ToString(), " and input 1 ('W') ", w.ToString(),
                                                   " are not a convolution's operands"));
  }
  const absl::Span<const int64_t> in_spatial = absl::MakeConstSpan(x.dims()).subspan(2, spatial_end - 2);
  TSR_ASSIGN_OR_RETURN(std::optional<Window3d> window,
                       AttrsWindow3d(attrs, in_spatial, absl::MakeConstSpan(w.dims()).subspan(2)));
  if (!window.has_value()) return std::nullopt;
  ConvGeometry g;
  g.window = *window;
  const auto group = attrs.find("group");
  g.group = group != attrs.end() ? group->second.i() : 1;
  g.channels = w.dim(1) * g.group;
  g.out_channels = w.dim(0);
  if (x_blocked ? x.dim(1) != ChannelBlocks(g.channels) : x.dim(1) != g.channels) {
    return absl::InvalidArgumentError(absl::StrCat("input 0 ('X') ", x.ToString(), " does not hold the ", g.channels,
                                                   " channels the weights ", w.ToString(), " and group ", g.group,
                                                   " take"));
  }
  if (!BlockedConvApplies(g) || (!x_blocked && g.group != 1)) return std::nullopt;
  return g;
}

absl::StatusOr<std::optional<ConvGeometry>> NodeBlockedConvGeometry(KernelContext& ctx) {
  AttrMap attrs = ctx.attrs();
  attrs["group"] = AttrValue::Int(ctx.GetInt("group"));  // with its default
  absl::StatusOr<std::optional<ConvGeometry>> g =
      BlockedConvGeometryOf(attrs, ctx.input(0).shape(), ctx.GetInt("input_blocked") != 0, ctx.input(1).shape());
  if (!g.ok()) return ctx.Error(g.status().message());
  if (!g->has_value()) return std::nullopt;
  const Shape& y = ctx.output(0).shape();
  if (y.num_elements() !=
          ctx.input(0).shape().dim(0) * ChannelBlocks((*g)->out_channels) * kChannelBlock * (*g)->window.out_size() ||
      (ctx.has_input(3) && ctx.input(3).shape() != y)) {
    return ctx.Error(absl::StrCat("the output ", y.ToString(), " or the residual does not fit the convolution"));
  }
  return g;
}

absl::StatusOr<std::optional<PreparedInvertedResidual>> PrepareNodeInvertedResidual(KernelContext& ctx) {
  absl::StatusOr<const OpDef*> conv_def = OpRegistry::Global().Lookup("BlockedConv");
  if (!conv_def.ok()) return ctx.Error(conv_def.status().message());
  const Shape& x = ctx.input(0).shape();
  const Tensor& wd = ctx.input(InvertedResidualWeightInput(InvertedResidualStage::kDepthwise));
  const bool expand = ctx.has_input(InvertedResidualWeightInput(InvertedResidualStage::kExpand));
  if (x.rank() != 5 || wd.shape().rank() != 4) return std::nullopt;
  const int64_t channels = wd.shape().dim(0), blocks = ChannelBlocks(channels);
  PreparedInvertedResidual p;
  std::optional<ConvGeometry> geometries[3];
  // Each stage's input: X, then the expansion's output (X's pixels), then the depthwise
  // output (its window's).
  Shape stage_x = x;
  for (int s = expand ? 0 : 1; s < 3; ++s) {
    const auto stage = static_cast<InvertedResidualStage>(s);
    const AttrMap attrs = InvertedResidualStageAttrs(ctx, stage, channels);
    absl::StatusOr<FusedActivation> activation = ParseFusedActivation(AttrReader(**conv_def, attrs));
    if (!activation.ok()) return ctx.Error(activation.status().message());
    p.activations[s] = *activation;
    absl::StatusOr<std::optional<ConvGeometry>> g =
        BlockedConvGeometryOf(attrs, stage_x, true, ctx.input(InvertedResidualWeightInput(stage)).shape());
    if (!g.ok()) return ctx.Error(absl::StrCat("stage ", s, ": ", g.status().message()));
    if (!g->has_value()) return std::nullopt;
    geometries[s] = **g;
    stage_x = Shape{x.dim(0), stage == InvertedResidualStage::kProject ? ChannelBlocks((*g)->out_channels) : blocks,
                    (*g)->window.out[1], (*g)->window.out[2], kChannelBlock};
  }
  const ConvGeometry* ge = expand ? &*geometries[0] : nullptr;
  if (!BlockedInvertedResidualApplies(ge, *geometries[1], *geometries[2])) return std::nullopt;
  // stage_x is now the output's shape.
  if (ctx.output(0).shape() != stage_x ||
      (ctx.has_input(kInvertedResidualResidualInput) && ctx.input(kInvertedResidualResidualInput).shape() != stage_x)) {
    return ctx.Error(absl::StrCat("the output ", ctx.output(0).shape().ToString(),
                                  " or the residual does not fit the block's ", stage_x.ToString()));
  }
  for (int s = expand ? 0 : 1; s < 3; ++s) {
    const auto stage = static_cast<InvertedResidualStage>(s);
    absl::StatusOr<PreparedBlockedConv> prepared =
        PrepareBlockedConv(*geometries[s], ctx.input(InvertedResidualWeightInput(stage)).data<float>());
    if (!prepared.ok()) return ctx.Error(prepared.status().message());
    p.stages[s] = *std::move(prepared);
  }
  return p;
}

void RunNodeInvertedResidual(const PreparedInvertedResidual& p, KernelContext& ctx) {
  BlockedConvStage stages[3];
  for (int s = 0; s < 3; ++s) {
    const int b = InvertedResidualBiasInput(static_cast<InvertedResidualStage>(s));
    stages[s].conv = p.stages[s].has_value() ? &*p.stages[s] : nullptr;
    stages[s].bias = ctx.has_input(b) ? ctx.input(b).data<float>() : nullptr;
    stages[s].activation = p.activations[s];
  }
  const int z = kInvertedResidualResidualInput;
  BlockedInvertedResidualForward(stages[0], stages[1], stages[2], ctx.input(0).shape().dim(0),
                                 ctx.input(0).data<float>(), ctx.has_input(z) ? ctx.input(z).data<float>() : nullptr,
                                 ctx.output(0).data<float>(), ctx.parallel_for());
}

absl::Status RegisterCpuBlockedKernels(KernelRegistry& registry) {
  TSR_RETURN_IF_ERROR(registry.Register("BlockChannels", kCpuDevice, DType::kF32, BlockChannelsKernel));
  TSR_RETURN_IF_ERROR(registry.Register("UnblockChannels", kCpuDevice, DType::kF32, UnblockChannelsKernel));
  TSR_RETURN_IF_ERROR(registry.Register("BlockedConv", kCpuDevice, DType::kF32, BlockedConvKernel));
  return registry.Register("BlockedInvertedResidual", kCpuDevice, DType::kF32, BlockedInvertedResidualKernel);
}

}  // namespace tsr

// Gradients of Conv and ConvTranspose (below). Conv (any number of spatial dims; strides, pads incl. auto_pad,
// dilations, groups, optional bias). With the window geometry resolved here (auto_pad
// becomes explicit pads):
//   dX = ConvTranspose(dY, W) with the same strides, dilations, pads and group, and the
//        output_padding that gives back X's exact spatial size (the trailing positions
//        a strided window never reached get zeros);
//   dW = ConvGradFilter(X, dY) (graph/ops/gradient_ops.cc);
//   dB = dY summed over every dim but the channels.
// Conv's W [M, C/group, k...] is already ConvTranspose's [C_in, M_out/group, k...]
// layout for an input of M channels, so no transpose of W is needed.
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "absl/types/span.h"
#include "graph/autodiff/gradient_context.h"
#include "graph/autodiff/gradient_registry.h"
#include "graph/builder/ops.h"
#include "graph/ops/conv_geometry.h"
#include "graph/status_macros.h"

namespace tsr {

namespace {

// The window geometry of a Conv (transposed: ConvTranspose) node over X with W's
// kernel; nullopt after reporting an invalid one on the node.
std::optional<WindowGeometry> ResolveGeometry(GradientContext& ctx, bool transposed) {
  const Output x = ctx.input(0), w = ctx.input(1);
  const std::vector<int64_t> kernel(w.shape().dims().begin() + 2, w.shape().dims().end());
  const absl::Span<const int64_t> in_spatial = absl::MakeConstSpan(x.shape().dims()).subspan(2);
  absl::StatusOr<WindowGeometry> g = absl::InternalError("unresolved");
  if (transposed) {
    absl::StatusOr<TransposedWindowSpec> spec = TransposedWindowSpecFromAttrs(ctx.attrs());
    if (spec.ok()) spec->window.kernel = kernel;
    g = spec.ok() ? ComputeTransposedWindowGeometry(in_spatial, *spec) : spec.status();
  } else {
    absl::StatusOr<WindowSpec> spec = WindowSpecFromAttrs(ctx.attrs());
    if (spec.ok()) spec->kernel = kernel;
    g = spec.ok() ? ComputeWindowGeometry(in_spatial, *spec) : spec.status();
  }
  if (!g.ok()) {
    ctx.Error(g.status().message());
    return std::nullopt;
  }
  return *std::move(g);
}

// strides, dilations, explicit pads [begin..., end...] and group of a resolved window.
AttrMap ExplicitWindowAttrs(const WindowGeometry& g, int64_t group) {
  std::vector<int64_t> pads = g.pads_begin;
  pads.insert(pads.end(), g.pads_end.begin(), g.pads_end.end());
  return {{"strides", AttrValue::Ints(g.strides)},
          {"dilations", AttrValue::Ints(g.dilations)},
          {"pads", AttrValue::Ints(pads)},
          {"group", AttrValue::Int(group)}};
}

// dB: dY summed over every dim but the channels.
Output BiasGrad(GraphBuilder& b, Output dy) {
  std::vector<int64_t> axes = {0};
  for (int i = 2; i < dy.rank(); ++i) axes.push_back(i);
  return ops::ReduceSum(b, dy, axes, /*keepdims=*/false);
}

absl::Status ConvGrad(GradientContext& ctx) {
  GraphBuilder& b = ctx.b();
  const Output x = ctx.input(0), w = ctx.input(1), dy = ctx.output_grad(0);
  const std::optional<WindowGeometry> g = ResolveGeometry(ctx, /*transposed=*/false);
  if (!g.has_value()) return absl::OkStatus();
  const AttrMap window = ExplicitWindowAttrs(*g, ctx.GetInt("group"));
  if (ctx.wants_input_grad(0)) {
    std::vector<int64_t> output_padding;
    for (int i = 0; i < g->num_spatial(); ++i) {
      // The transposed size without padding is s * (O - 1) + span - pads; X may be up
      // to s - 1 larger (the positions past the last window).
      const int64_t reached =
          g->strides[i] * (g->output[i] - 1) + g->effective_kernel(i) - g->pads_begin[i] - g->pads_end[i];
      output_padding.push_back(x.shape().dim(i + 2) - reached);
    }
    AttrMap attrs = window;
    attrs["output_padding"] = AttrValue::Ints(output_padding);
    ctx.set_input_grad(0, b.Op1("ConvTranspose", {dy, w}, std::move(attrs)));
  }
  if (ctx.wants_input_grad(1)) {
    AttrMap attrs = window;
    attrs["kernel_shape"] = AttrValue::Ints(g->kernel);
    ctx.set_input_grad(1, b.Op1("ConvGradFilter", {x, dy}, std::move(attrs)));
  }
  if (ctx.num_inputs() > 2 && ctx.wants_input_grad(2)) ctx.set_input_grad(2, BiasGrad(b, dy));
  return absl::OkStatus();
}

// Y = ConvTranspose(X, W) is the adjoint of Conv in X, so with the geometry resolved
// (output_shape / auto_pad become explicit pads):
//   dX = Conv(dY, W) with the same strides, dilations, pads and group (W [C, M/group,
//        k...] is Conv's [M_out, C_in/group, k...] layout for C outputs from M inputs);
//   dW = ConvGradFilter(dY, X): the Conv from dY (M channels) to X (C channels);
//   dB = dY summed over every dim but the channels.
// Trailing output positions no window reached (output_shape larger than the full
// transposed window) got only the bias: dY is cut to the reached span first when
// there are a stride or more of them, so the Conv gives back exactly X's size.
absl::Status ConvTransposeGrad(GradientContext& ctx) {
  GraphBuilder& b = ctx.b();
  const Output x = ctx.input(0), w = ctx.input(1), dy = ctx.output_grad(0);
  const std::optional<WindowGeometry> g = ResolveGeometry(ctx, /*transposed=*/true);
  if (!g.has_value()) return absl::OkStatus();
  std::vector<int64_t> starts, ends, axes;
  for (int i = 0; i < g->num_spatial(); ++i) {
    const int64_t reached =
        g->strides[i] * (x.shape().dim(i + 2) - 1) + g->effective_kernel(i) - g->pads_begin[i] - g->pads_end[i];
    if (g->output[i] - reached >= g->strides[i]) {  // fewer: Conv's floor already drops them
      starts.push_back(0);
      ends.push_back(reached);
      axes.push_back(i + 2);
    }
  }
  const Output reached_dy = starts.empty() ? dy : ops::Slice(b, dy, starts, ends, axes);
  const AttrMap window = ExplicitWindowAttrs(*g, ctx.GetInt("group"));
  if (ctx.wants_input_grad(0)) ctx.set_input_grad(0, b.Op1("Conv", {reached_dy, w}, window));
  if (ctx.wants_input_grad(1)) {
    AttrMap attrs = window;
    attrs["kernel_shape"] = AttrValue::Ints(g->kernel);
    ctx.set_input_grad(1, b.Op1("ConvGradFilter", {reached_dy, x}, std::move(attrs)));
  }
  if (ctx.num_inputs() > 2 && ctx.wants_input_grad(2)) ctx.set_input_grad(2, BiasGrad(b, dy));
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterConvGradients(OpRegistry& registry) {
  TSR_RETURN_IF_ERROR(SetGradient(registry, "Conv", ConvGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "ConvTranspose", ConvTransposeGrad));
  return absl::OkStatus();
}

}  // namespace tsr

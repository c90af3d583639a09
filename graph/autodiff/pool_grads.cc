// Gradients of the pools: MaxPool and AveragePool through the backward ops
// MaxPoolGrad and AveragePoolGrad (graph/ops/gradient_ops.cc), which take the
// forward node's window attributes as they are; GlobalAveragePool by spreading
// dY / (spatial size) over the spatial dims. MaxPool's Indices output is integer and
// carries no gradient.
#include <cstdint>
#include <string>
#include <vector>

#include "graph/autodiff/gradient_context.h"
#include "graph/autodiff/gradient_registry.h"
#include "graph/builder/ops.h"
#include "graph/status_macros.h"

namespace tsr {

namespace {

// The listed forward attributes, for the backward op (MaxPool's storage_order only
// concerns Indices and is left out).
AttrMap WindowAttrs(const GradientContext& ctx, const std::vector<std::string>& names) {
  AttrMap attrs;
  for (const std::string& name : names) {
    if (const AttrValue* v = ctx.attr(name); v != nullptr) attrs[name] = *v;
  }
  return attrs;
}

absl::Status MaxPoolGrad(GradientContext& ctx) {
  if (!ctx.output_grad(0).valid()) return absl::OkStatus();
  const AttrMap attrs = WindowAttrs(ctx, {"auto_pad", "ceil_mode", "dilations", "kernel_shape", "pads", "strides"});
  ctx.set_input_grad(0, ctx.b().Op1("MaxPoolGrad", {ctx.input(0), ctx.output_grad(0)}, attrs));
  return absl::OkStatus();
}

absl::Status AveragePoolGrad(GradientContext& ctx) {
  const AttrMap attrs =
      WindowAttrs(ctx, {"auto_pad", "ceil_mode", "count_include_pad", "dilations", "kernel_shape", "pads", "strides"});
  ctx.set_input_grad(0, ctx.b().Op1("AveragePoolGrad", {ctx.input(0), ctx.output_grad(0)}, attrs));
  return absl::OkStatus();
}

absl::Status GlobalAveragePoolGrad(GradientContext& ctx) {
  const Output x = ctx.input(0);
  std::vector<int64_t> spatial;
  for (int i = 2; i < x.rank(); ++i) spatial.push_back(i);
  const Output share = ops::Div(ctx.b(), ctx.output_grad(0), ctx.CountOf(x, spatial, x.dtype()));
  ctx.set_input_grad(0, ctx.BroadcastLike(share, x));
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterPoolGradients(OpRegistry& registry) {
  TSR_RETURN_IF_ERROR(SetGradient(registry, "MaxPool", MaxPoolGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "AveragePool", AveragePoolGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "GlobalAveragePool", GlobalAveragePoolGrad));
  return absl::OkStatus();
}

}  // namespace tsr

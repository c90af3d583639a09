// Convolutions over N spatial dimensions: Conv and ConvTranspose (channels-first,
// grouped, strided, dilated, padded). The window arithmetic is in conv_geometry.h.
//
// X is [N, C, D1, ..., Dn]. Conv's weight is [M, C/group, k1, ..., kn]; ConvTranspose's
// is [C, M/group, k1, ..., kn]; both produce [N, M, ...]. The batch dimension may be
// symbolic; channels, spatial sizes and the whole weight must be static.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "graph/op_registry.h"
#include "graph/ops/conv_geometry.h"
#include "graph/ops/op_helpers.h"
#include "graph/ops/register_ops.h"
#include "graph/status_macros.h"

namespace tsr {

namespace {

// The checks Conv and ConvTranspose share: ranks, a static weight, static channels,
// a valid group, and kernel_shape (when given) agreeing with the weight. Returns the
// kernel, taken from the weight.
absl::StatusOr<std::vector<int64_t>> CheckOperands(const InferenceContext& ctx,
                                                   const std::vector<int64_t>& kernel_shape) {
  const Shape& x = ctx.input_shape(0);
  const Shape& w = ctx.input_shape(1);
  if (x.rank() < 3) {
    return ctx.Error(absl::StrCat("input 0 ('X') has shape ", x.ToString(),
                                  " but [N,C,D1,...] with at least one spatial dimension is required"));
  }
  if (w.rank() != x.rank()) {
    return ctx.Error(absl::StrCat("input 1 ('W') has shape ", w.ToString(), " but a rank-", x.rank(),
                                  " weight is required (input 0 is ", x.ToString(), ")"));
  }
  if (!w.is_static()) {
    return ctx.Error(absl::StrCat("input 1 ('W') has shape ", w.ToString(), " but a weight must be static"));
  }
  if (x.dim(1) == kBatchDim) {
    return ctx.Error(absl::StrCat("input 0 ('X') has shape ", x.ToString(),
                                  " with a symbolic channel dimension; channels must be static"));
  }
  const int64_t group = ctx.GetInt("group");
  if (group < 1 || group > std::max<int64_t>(x.dim(1), 1)) {
    return ctx.Error(absl::StrCat("group is ", group, " but must be in [1, ", std::max<int64_t>(x.dim(1), 1),
                                  "] (input 0 ('X') ", x.ToString(), " has ", x.dim(1), " channels)"));
  }
  if (x.dim(1) % group != 0) {
    return ctx.Error(absl::StrCat("input 0 ('X') ", x.ToString(), " has ", x.dim(1), " channels, which group=", group,
                                  " does not divide"));
  }
  std::vector<int64_t> kernel(w.dims().begin() + 2, w.dims().end());
  if (!kernel_shape.empty() && kernel_shape != kernel) {
    return ctx.Error(absl::StrCat("kernel_shape ", Shape(kernel_shape).ToString(), " does not match the weight ",
                                  w.ToString(), " (kernel ", Shape(kernel).ToString(), ")"));
  }
  return kernel;
}

absl::Status CheckBias(const InferenceContext& ctx, int64_t m) {
  if (!ctx.has_input(2)) return absl::OkStatus();
  const Shape& b = ctx.input_shape(2);
  if (b != Shape{m}) {
    return ctx.Error(absl::StrCat("input 2 ('B') has shape ", b.ToString(), " but [", m,
                                  "] (one bias per output channel) is required"));
  }
  return absl::OkStatus();
}

Shape OutputShape(int64_t batch, int64_t channels, const WindowGeometry& g) {
  Shape out{batch, channels};
  for (int64_t d : g.output) out.AddDim(d);
  return out;
}

absl::Span<const int64_t> Spatial(const Shape& x) { return absl::MakeConstSpan(x.dims()).subspan(2); }

absl::Status InferConv(InferenceContext& ctx) {
  absl::StatusOr<WindowSpec> spec = WindowSpecFromAttrs(ctx.attrs());
  if (!spec.ok()) return ctx.Error(spec.status().message());
  TSR_ASSIGN_OR_RETURN(spec->kernel, CheckOperands(ctx, spec->kernel));
  const Shape& x = ctx.input_shape(0);
  const Shape& w = ctx.input_shape(1);
  const int64_t group = ctx.GetInt("group");
  if (x.dim(1) / group != w.dim(1)) {
    return ctx.Error(absl::StrCat("input 1 ('W') ", w.ToString(), " takes ", w.dim(1),
                                  " input channels per group but input 0 ('X') ", x.ToString(), " has ",
                                  x.dim(1) / group, " (", x.dim(1), " channels, group=", group, ")"));
  }
  const int64_t m = w.dim(0);
  if (m % group != 0) {
    return ctx.Error(absl::StrCat("input 1 ('W') ", w.ToString(), " has ", m, " output channels, which group=", group,
                                  " does not divide"));
  }
  TSR_RETURN_IF_ERROR(CheckBias(ctx, m));
  absl::StatusOr<WindowGeometry> g = ComputeWindowGeometry(Spatial(x), *spec);
  if (!g.ok()) return ctx.Error(g.status().message());
  ctx.set_output(0, ctx.input_dtype(0), OutputShape(x.dim(0), m, *g));
  return absl::OkStatus();
}

// prod(W.shape[1:]): the weights one element of Y (Conv) or of X (ConvTranspose)
// meets. Inputs are validated (at most 2^40 elements), so this cannot overflow.
int64_t WeightsPerElement(const InferenceContext& ctx) {
  const Shape& w = ctx.input_shape(1);
  int64_t n = 1;
  for (int i = 1; i < w.rank(); ++i) n *= w.dim(i);
  return n;
}

// Multiply-adds only: each output element reads C/group x prod(kernel) weights
// (W is [M, C/group, k...]); the bias add is not counted.
int64_t ConvFlops(const InferenceContext& ctx) {
  return SaturatingProduct({2, OutputElements(ctx), WeightsPerElement(ctx)});
}

absl::Status InferConvTranspose(InferenceContext& ctx) {
  absl::StatusOr<TransposedWindowSpec> spec = TransposedWindowSpecFromAttrs(ctx.attrs());
  if (!spec.ok()) return ctx.Error(spec.status().message());
  TSR_ASSIGN_OR_RETURN(spec->window.kernel, CheckOperands(ctx, spec->window.kernel));
  const Shape& x = ctx.input_shape(0);
  const Shape& w = ctx.input_shape(1);
  if (w.dim(0) != x.dim(1)) {
    return ctx.Error(absl::StrCat("input 1 ('W') ", w.ToString(), " is laid out [C, M/group, k...] with C=", w.dim(0),
                                  " but input 0 ('X') ", x.ToString(), " has ", x.dim(1), " channels"));
  }
  const int64_t m = w.dim(1) * ctx.GetInt("group");
  TSR_RETURN_IF_ERROR(CheckBias(ctx, m));
  absl::StatusOr<WindowGeometry> g = ComputeTransposedWindowGeometry(Spatial(x), *spec);
  if (!g.ok()) return ctx.Error(g.status().message());
  ctx.set_output(0, ctx.input_dtype(0), OutputShape(x.dim(0), m, *g));
  return absl::OkStatus();
}

// Multiply-adds only: each input element is scattered through M/group x
// prod(kernel) weights (W is [C, M/group, k...]).
int64_t ConvTransposeFlops(const InferenceContext& ctx) {
  return SaturatingProduct({2, ctx.input_shape(0).num_elements(), WeightsPerElement(ctx)});
}

// Attributes both convolutions take, with their ONNX defaults (the list-valued ones
// default per spatial dimension, so they have no fixed default here).
OpDefBuilder ConvBuilder(std::string name, std::string summary) {
  OpDefBuilder b(std::move(name));
  b.Summary(std::move(summary))
      .Input("X", "T")
      .Input("W", "T")
      .OptionalInput("B", "T")
      .Output("Y", "T")
      .TypeConstraint("T", kFloatDTypes)
      .Attr("auto_pad", AttrType::kString, AttrValue::String("NOTSET"))
      .OptionalAttr("dilations", AttrType::kInts)
      .Attr("group", AttrType::kInt, AttrValue::Int(1))
      .OptionalAttr("kernel_shape", AttrType::kInts)
      .OptionalAttr("pads", AttrType::kInts)
      .OptionalAttr("strides", AttrType::kInts);
  return b;
}

}  // namespace

absl::Status RegisterConvOps(OpRegistry& registry) {
  TSR_RETURN_IF_ERROR(registry.Register(
      ConvBuilder("Conv", "N-d grouped convolution (cross-correlation) of X [N,C,...] with W [M,C/group,k...].")
          .Infer(InferConv)
          .Flops(ConvFlops)
          .Build()));
  TSR_RETURN_IF_ERROR(registry.Register(
      ConvBuilder("ConvTranspose", "N-d transposed convolution of X [N,C,...] with W [C,M/group,k...].")
          .OptionalAttr("output_padding", AttrType::kInts)
          .OptionalAttr("output_shape", AttrType::kInts)
          .Infer(InferConvTranspose)
          .Flops(ConvTransposeFlops)
          .Build()));
  return absl::OkStatus();
}

}  // namespace tsr

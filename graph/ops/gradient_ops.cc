// Internal backward ops that reverse-mode autodiff (graph/autodiff/) emits for
// forward ops whose gradients are not a clean composition of other ops:
//
//   ConvGradFilter(X, dY)        -> dW [M, C/group, k...]   (Conv's attributes; kernel_shape required)
//   MaxPoolGrad(X, dY)           -> dX                       (each dY to the first maximum of its window)
//   AveragePoolGrad(X, dY)       -> dX                       (each dY spread over its window / count)
//   BatchNormalizationGrad(X, G) -> dX, Normalized           (training form: through the batch statistics)
//   LayerNormalizationGrad(X, G) -> dX, Normalized           (over X's dims [axis, rank))
//   GatherGrad(dY, indices, data)              -> d data     (scatter-add into zeros)
//   SliceGrad(dY, data, starts, ends, axes, steps) -> d data (scatter into zeros)
//   PadGrad(dY, data, pads, axes)              -> d data     (reflect/edge/wrap: each dY added
//                                                             to the element Pad copied it from)
//
// For the normalizations G is dY times the scale (broadcast by the caller), so the
// ops need no broadcasting; Normalized is (X - mean) / sqrt(var + epsilon), from
// which the caller forms the scale gradient. X and `data` are read only for their
// shapes by the scatter ops (the pools also read X's values to find the maxima).
// The window arithmetic is conv_geometry.h's, the slice arithmetic slice_geometry.h's,
// the pad arithmetic pad_geometry.h's.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "graph/op_registry.h"
#include "graph/ops/conv_geometry.h"
#include "graph/ops/op_helpers.h"
#include "graph/ops/pad_geometry.h"
#include "graph/ops/register_ops.h"
#include "graph/ops/slice_geometry.h"
#include "graph/status_macros.h"

namespace tsr {

namespace {

// dY's shape must be `expected`, what the forward op produced (a symbolic batch
// matches a symbolic batch only).
absl::Status CheckGradShape(const InferenceContext& ctx, int i, const Shape& expected) {
  if (ctx.input_shape(i) != expected) {
    return ctx.Error(absl::StrCat("input ", i, " ('dY') has shape ", ctx.input_shape(i).ToString(), " but the forward ",
                                  "output it is the gradient of has shape ", expected.ToString()));
  }
  return absl::OkStatus();
}

absl::Status CheckSpatialInput(const InferenceContext& ctx) {
  const Shape& x = ctx.input_shape(0);
  if (x.rank() < 3) {
    return ctx.Error(absl::StrCat("input 0 ('X') has shape ", x.ToString(),
                                  " but [N,C,D1,...] with at least one spatial dimension is required"));
  }
  for (int i = 2; i < x.rank(); ++i) {
    if (x.dim(i) == kBatchDim) {
      return ctx.Error(absl::StrCat("input 0 ('X') has shape ", x.ToString(), "; spatial dimensions must be static"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<WindowGeometry> Geometry(const InferenceContext& ctx) {
  absl::StatusOr<WindowSpec> spec = WindowSpecFromAttrs(ctx.attrs());
  if (!spec.ok()) return ctx.Error(spec.status().message());
  absl::StatusOr<WindowGeometry> g =
      ComputeWindowGeometry(absl::MakeConstSpan(ctx.input_shape(0).dims()).subspan(2), *spec);
  if (!g.ok()) return ctx.Error(g.status().message());
  return g;
}

absl::Status InferConvGradFilter(InferenceContext& ctx) {
  TSR_RETURN_IF_ERROR(CheckSpatialInput(ctx));
  const Shape& x = ctx.input_shape(0);
  const Shape& dy = ctx.input_shape(1);
  if (dy.rank() != x.rank()) {
    return ctx.Error(absl::StrCat("input 1 ('dY') has shape ", dy.ToString(), " but rank ", x.rank(),
                                  " like input 0 ('X') ", x.ToString(), " is required"));
  }
  const std::vector<int64_t> kernel = ctx.GetInts("kernel_shape");
  if (static_cast<int>(kernel.size()) != x.rank() - 2) {
    return ctx.Error(absl::StrCat("kernel_shape ", IntsToString(kernel), " has ", kernel.size(), " entries but X ",
                                  x.ToString(), " has ", x.rank() - 2, " spatial dimensions"));
  }
  const int64_t c = x.dim(1), m = dy.dim(1), group = ctx.GetInt("group");
  if (c == kBatchDim || m == kBatchDim) {
    return ctx.Error(absl::StrCat("X ", x.ToString(), " and dY ", dy.ToString(), " must have static channels"));
  }
  if (group < 1 || c % group != 0 || m % group != 0) {
    return ctx.Error(absl::StrCat("group=", group, " must divide the channels of X ", x.ToString(), " (", c,
                                  ") and of dY ", dy.ToString(), " (", m, ")"));
  }
  TSR_ASSIGN_OR_RETURN(WindowGeometry g, Geometry(ctx));
  Shape expected{x.dim(0), m};
  for (int64_t d : g.output) expected.AddDim(d);
  TSR_RETURN_IF_ERROR(CheckGradShape(ctx, 1, expected));
  Shape w{m, c / group};
  for (int64_t k : kernel) w.AddDim(k);
  ctx.set_output(0, ctx.input_dtype(0), std::move(w));
  return absl::OkStatus();
}

// 2 flops per (dY element, weight of its window).
int64_t ConvGradFilterFlops(const InferenceContext& ctx) {
  const Shape& w = ctx.output(0).shape;
  int64_t per = 1;
  for (int i = 1; i < w.rank(); ++i) per *= w.dim(i);
  Shape dy = ctx.input_shape(1).BindBatch(1);
  return SaturatingProduct({2, dy.num_elements(), per});
}

absl::Status InferPoolGrad(InferenceContext& ctx) {
  TSR_RETURN_IF_ERROR(CheckSpatialInput(ctx));
  if (ctx.GetInts("kernel_shape").empty()) return ctx.Error("kernel_shape must be given");
  TSR_RETURN_IF_ERROR(CheckFlagAttr(ctx, "ceil_mode"));
  TSR_ASSIGN_OR_RETURN(WindowGeometry g, Geometry(ctx));
  const Shape& x = ctx.input_shape(0);
  Shape expected{x.dim(0), x.dim(1)};
  for (int64_t d : g.output) expected.AddDim(d);
  TSR_RETURN_IF_ERROR(CheckGradShape(ctx, 1, expected));
  ctx.set_output(0, ctx.input(0));
  return absl::OkStatus();
}

absl::Status InferAveragePoolGrad(InferenceContext& ctx) {
  TSR_RETURN_IF_ERROR(CheckFlagAttr(ctx, "count_include_pad"));
  return InferPoolGrad(ctx);
}

// One scatter per (dY element, window tap).
int64_t PoolGradFlops(const InferenceContext& ctx) {
  int64_t flops = ctx.input_shape(1).BindBatch(1).num_elements();
  for (int64_t k : ctx.GetInts("kernel_shape")) flops = SaturatingProduct({flops, k});
  return flops;
}

absl::Status CheckEpsilon(const InferenceContext& ctx) {
  const double epsilon = ctx.GetFloat("epsilon");
  if (!(epsilon >= 0)) return ctx.Error(absl::StrCat("epsilon is ", epsilon, " but must be >= 0"));
  return absl::OkStatus();
}

// G has X's shape; both outputs too.
absl::Status InferNormalizationGrad(InferenceContext& ctx) {
  TSR_RETURN_IF_ERROR(CheckEpsilon(ctx));
  const Shape& x = ctx.input_shape(0);
  if (ctx.input_shape(1) != x) {
    return ctx.Error(absl::StrCat("input 1 ('G') has shape ", ctx.input_shape(1).ToString(),
                                  " but the shape of input 0 ('X') ", x.ToString(), " is required"));
  }
  ctx.set_output(0, ctx.input(0));
  ctx.set_output(1, ctx.input(0));
  return absl::OkStatus();
}

absl::Status InferBatchNormalizationGrad(InferenceContext& ctx) {
  const Shape& x = ctx.input_shape(0);
  if (x.rank() < 1) return ctx.Error("input 0 ('X') is a scalar but [N,C,...] (or [N]) is required");
  if (x.rank() > 1 && x.dim(1) == kBatchDim) {
    return ctx.Error(absl::StrCat("input 0 ('X') has shape ", x.ToString(), " with a symbolic channel dimension"));
  }
  return InferNormalizationGrad(ctx);
}

absl::Status InferLayerNormalizationGrad(InferenceContext& ctx) {
  absl::StatusOr<int> axis = NormalizeAxis(ctx.GetInt("axis"), ctx.input_rank(0));
  if (!axis.ok()) return ctx.Error(axis.status().message());
  return InferNormalizationGrad(ctx);
}

// About 8 flops per element: the two per-group sums and the combination.
int64_t NormalizationGradFlops(const InferenceContext& ctx) { return 8 * OutputElements(ctx); }

absl::Status InferGatherGrad(InferenceContext& ctx) {
  const Shape& data = ctx.input_shape(2);
  const Shape& indices = ctx.input_shape(1);
  if (data.rank() == 0) return ctx.Error("input 2 ('data') is a scalar but rank >= 1 is required");
  absl::StatusOr<int> axis = NormalizeAxis(ctx.GetInt("axis"), data.rank());
  if (!axis.ok()) return ctx.Error(axis.status().message());
  if (data.dim(*axis) == kBatchDim) {
    return ctx.Error(
        absl::StrCat("the gathered axis ", *axis, " of input 2 ('data') ", data.ToString(), " must be static"));
  }
  Shape expected;
  for (int i = 0; i < *axis; ++i) expected.AddDim(data.dim(i));
  for (int64_t d : indices.dims()) expected.AddDim(d);
  for (int i = *axis + 1; i < data.rank(); ++i) expected.AddDim(data.dim(i));
  TSR_RETURN_IF_ERROR(CheckGradShape(ctx, 0, expected));
  if (ctx.input_dtype(0) != ctx.input_dtype(2)) {
    return ctx.Error(absl::StrCat("input 0 ('dY') is ", DTypeName(ctx.input_dtype(0)), " but input 2 ('data') is ",
                                  DTypeName(ctx.input_dtype(2))));
  }
  ctx.set_output(0, ctx.input(2));
  return absl::OkStatus();
}

// The forward Slice's output shape, from the same constant inputs Slice reads.
absl::Status InferSliceGrad(InferenceContext& ctx) {
  const Shape& data = ctx.input_shape(1);
  const int rank = data.rank();
  TSR_ASSIGN_OR_RETURN(std::vector<int64_t> starts, ReadConstantInts(ctx, 2));
  TSR_ASSIGN_OR_RETURN(std::vector<int64_t> ends, ReadConstantInts(ctx, 3));
  const size_t k = starts.size();
  std::vector<int64_t> raw_axes;
  if (ctx.has_input(4)) {
    TSR_ASSIGN_OR_RETURN(raw_axes, ReadConstantInts(ctx, 4));
  } else {
    for (size_t i = 0; i < k; ++i) raw_axes.push_back(static_cast<int64_t>(i));
  }
  std::vector<int64_t> steps(k, 1);
  if (ctx.has_input(5)) {
    TSR_ASSIGN_OR_RETURN(steps, ReadConstantInts(ctx, 5));
  }
  if (ends.size() != k || raw_axes.size() != k || steps.size() != k) {
    return ctx.Error(absl::StrCat("starts, ends, axes and steps must have the same length but have ", k, ", ",
                                  ends.size(), ", ", raw_axes.size(), " and ", steps.size()));
  }
  // In the given order: axes[i] pairs with starts[i] (NormalizeAxes would sort them).
  std::vector<int> axes;
  for (int64_t a : raw_axes) {
    absl::StatusOr<int> axis = NormalizeAxis(a, rank);
    if (!axis.ok()) return ctx.Error(axis.status().message());
    if (std::find(axes.begin(), axes.end(), *axis) != axes.end()) {
      return ctx.Error(absl::StrCat("axes ", IntsToString(raw_axes), " repeats axis ", *axis));
    }
    axes.push_back(*axis);
  }
  Shape expected = data;
  for (size_t i = 0; i < k; ++i) {
    if (steps[i] == 0) return ctx.Error(absl::StrCat("steps ", IntsToString(steps), " holds 0"));
    const int64_t d = data.dim(axes[i]);
    if (d == kBatchDim) continue;  // Slice only allows the full slice there.
    expected.set_dim(axes[i], ResolveSlice(d, starts[i], ends[i], steps[i]).size);
  }
  TSR_RETURN_IF_ERROR(CheckGradShape(ctx, 0, expected));
  if (ctx.input_dtype(0) != ctx.input_dtype(1)) {
    return ctx.Error(absl::StrCat("input 0 ('dY') is ", DTypeName(ctx.input_dtype(0)), " but input 1 ('data') is ",
                                  DTypeName(ctx.input_dtype(1))));
  }
  ctx.set_output(0, ctx.input(1));
  return absl::OkStatus();
}

// dY must have the shape Pad gave `data`: each padded axis grown by its pads.
absl::Status InferPadGrad(InferenceContext& ctx) {
  if (absl::Status s = ParsePadMode(ctx.GetString("mode")).status(); !s.ok()) return ctx.Error(s.message());
  const Shape& data = ctx.input_shape(1);
  const int rank = data.rank();
  TSR_ASSIGN_OR_RETURN(std::vector<int64_t> pads, ReadConstantInts(ctx, 2));
  std::vector<int64_t> raw_axes;
  if (ctx.has_input(3)) {
    TSR_ASSIGN_OR_RETURN(raw_axes, ReadConstantInts(ctx, 3));
  } else {
    for (int i = 0; i < rank; ++i) raw_axes.push_back(i);
  }
  if (pads.size() != 2 * raw_axes.size()) {
    return ctx.Error(absl::StrCat("input 'pads' ", IntsToString(pads), " has ", pads.size(), " entries but ",
                                  raw_axes.size(), " padded axes need ", 2 * raw_axes.size()));
  }
  Shape expected = data;
  for (size_t j = 0; j < raw_axes.size(); ++j) {
    absl::StatusOr<int> axis = NormalizeAxis(raw_axes[j], rank);
    if (!axis.ok()) return ctx.Error(axis.status().message());
    const int64_t d = data.dim(*axis);
    if (d == kBatchDim) continue;  // Pad allows no padding there.
    expected.set_dim(*axis, d + pads[j] + pads[j + raw_axes.size()]);
  }
  TSR_RETURN_IF_ERROR(CheckGradShape(ctx, 0, expected));
  if (ctx.input_dtype(0) != ctx.input_dtype(1)) {
    return ctx.Error(absl::StrCat("input 0 ('dY') is ", DTypeName(ctx.input_dtype(0)), " but input 1 ('data') is ",
                                  DTypeName(ctx.input_dtype(1))));
  }
  ctx.set_output(0, ctx.input(1));
  return absl::OkStatus();
}

OpDefBuilder WindowGradBuilder(std::string name, std::string summary) {
  OpDefBuilder b(std::move(name));
  b.Summary(std::move(summary))
      .Input("X", "T")
      .Input("dY", "T")
      .TypeConstraint("T", kFloatDTypes)
      .Attr("auto_pad", AttrType::kString, AttrValue::String("NOTSET"))
      .OptionalAttr("dilations", AttrType::kInts)
      .RequiredAttr("kernel_shape", AttrType::kInts)
      .OptionalAttr("pads", AttrType::kInts)
      .OptionalAttr("strides", AttrType::kInts);
  return b;
}

OpDefBuilder NormalizationGradBuilder(std::string name, std::string summary) {
  OpDefBuilder b(std::move(name));
  b.Summary(std::move(summary))
      .Input("X", "T")
      .Input("G", "T")
      .Output("dX", "T")
      .Output("Normalized", "T")
      .TypeConstraint("T", kFloatDTypes)
      .Attr("epsilon", AttrType::kFloat, AttrValue::Float(1e-5))
      .Flops(NormalizationGradFlops);
  return b;
}

}  // namespace

absl::Status RegisterGradientOps(OpRegistry& registry) {
  TSR_RETURN_IF_ERROR(registry.Register(
      WindowGradBuilder("ConvGradFilter", "Gradient of Conv's weight: dW [M,C/group,k...] from X and dY.")
          .Output("dW", "T")
          .Attr("group", AttrType::kInt, AttrValue::Int(1))
          .Infer(InferConvGradFilter)
          .Flops(ConvGradFilterFlops)
          .Build()));
  TSR_RETURN_IF_ERROR(registry.Register(
      WindowGradBuilder("MaxPoolGrad", "Gradient of MaxPool's Y: each dY goes to the first maximum of its window.")
          .Output("dX", "T")
          .Attr("ceil_mode", AttrType::kInt, AttrValue::Int(0))
          .Infer(InferPoolGrad)
          .Flops(PoolGradFlops)
          .Build()));
  TSR_RETURN_IF_ERROR(registry.Register(
      WindowGradBuilder("AveragePoolGrad", "Gradient of AveragePool: each dY spread over its window's counted taps.")
          .Output("dX", "T")
          .Attr("ceil_mode", AttrType::kInt, AttrValue::Int(0))
          .Attr("count_include_pad", AttrType::kInt, AttrValue::Int(0))
          .Infer(InferAveragePoolGrad)
          .Flops(PoolGradFlops)
          .Build()));
  TSR_RETURN_IF_ERROR(registry.Register(
      NormalizationGradBuilder("BatchNormalizationGrad",
                               "Training-form BatchNormalization gradient per channel of [N,C,...]: with G = dY * "
                               "scale, dX = (G - mean(G) - Normalized * mean(G * Normalized)) / sqrt(var + epsilon).")
          .Infer(InferBatchNormalizationGrad)
          .Build()));
  TSR_RETURN_IF_ERROR(registry.Register(
      NormalizationGradBuilder("LayerNormalizationGrad",
                               "LayerNormalization gradient over X's dims [axis, rank): with G = dY * Scale, dX = "
                               "(G - mean(G) - Normalized * mean(G * Normalized)) / sqrt(var + epsilon).")
          .Attr("axis", AttrType::kInt, AttrValue::Int(-1))
          .Infer(InferLayerNormalizationGrad)
          .Build()));
  TSR_RETURN_IF_ERROR(registry.Register(OpDefBuilder("GatherGrad")
                                            .Summary("Gradient of Gather's data: dY scatter-added along 'axis' into "
                                                     "zeros of data's shape at 'indices'.")
                                            .Input("dY", "T")
                                            .Input("indices", "Tind")
                                            .Input("data", "T")
                                            .Output("ddata", "T")
                                            .TypeConstraint("T", kFloatDTypes)
                                            .TypeConstraint("Tind", kIndexDTypes)
                                            .Attr("axis", AttrType::kInt, AttrValue::Int(0))
                                            .Infer(InferGatherGrad)
                                            .Flops(PerOutputElement(1))
                                            .Build()));
  TSR_RETURN_IF_ERROR(registry.Register(OpDefBuilder("SliceGrad")
                                            .Summary("Gradient of Slice's data: dY written into zeros of data's shape "
                                                     "at the sliced positions.")
                                            .Input("dY", "T")
                                            .Input("data", "T")
                                            .Input("starts", "Tind")
                                            .Input("ends", "Tind")
                                            .OptionalInput("axes", "Tind")
                                            .OptionalInput("steps", "Tind")
                                            .Output("ddata", "T")
                                            .TypeConstraint("T", kFloatDTypes)
                                            .TypeConstraint("Tind", kIndexDTypes)
                                            .Infer(InferSliceGrad)
                                            .Flops(PerOutputElement(1))
                                            .Build()));
  TSR_RETURN_IF_ERROR(registry.Register(OpDefBuilder("PadGrad")
                                            .Summary("Gradient of Pad's data: each dY element added to the data "
                                                     "element Pad copied it from (none for the constant).")
                                            .Input("dY", "T")
                                            .Input("data", "T")
                                            .Input("pads", "Tind")
                                            .OptionalInput("axes", "Tind")
                                            .Output("ddata", "T")
                                            .TypeConstraint("T", kFloatDTypes)
                                            .TypeConstraint("Tind", kIndexDTypes)
                                            .Attr("mode", AttrType::kString, AttrValue::String("constant"))
                                            .Infer(InferPadGrad)
                                            .Flops(PerOutputElement(1))
                                            .Build()));
  return absl::OkStatus();
}

}  // namespace tsr

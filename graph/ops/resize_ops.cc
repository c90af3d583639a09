// Resize (ONNX opsets 11-18 semantics without the opset-18 additions antialias, axes
// and keep_aspect_ratio_policy) and its backward op ResizeGrad.
//
// Modes nearest (nearest_mode round_prefer_floor/ceil, floor, ceil), linear and cubic
// (cubic_coeff_a, exclude_outside); coordinate transformations half_pixel,
// pytorch_half_pixel, align_corners, asymmetric and tf_crop_and_resize (roi,
// extrapolation_value). The output shape comes from 'scales' or 'sizes', which must
// therefore be constants; an empty one counts as absent (the opset-11 form passes
// empty placeholders). The batch dimension N may only keep its size (scale 1).
//
// Resize is linear in X in every mode, so ResizeGrad (dX from dY) scatters dY back
// with the forward weights: every mode is differentiable with respect to X.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/op_registry.h"
#include "graph/ops/op_helpers.h"
#include "graph/ops/register_ops.h"
#include "graph/ops/resize_geometry.h"
#include "graph/status_macros.h"

namespace tsr {

namespace {

// The values of constant input `i` when it is present and non-empty; nullopt when it
// is absent or empty.
absl::StatusOr<std::optional<std::vector<double>>> OptionalConstantValues(const InferenceContext& ctx, int i) {
  if (!ctx.has_input(i)) return std::nullopt;
  const Shape& shape = ctx.input_shape(i);
  if (shape.rank() != 1) {
    return ctx.Error(
        absl::StrCat("input '", ctx.op_def().inputs[i].name, "' has shape ", shape.ToString(), " but must be 1-D"));
  }
  if (shape.dim(0) == 0) return std::nullopt;
  TSR_ASSIGN_OR_RETURN(const Tensor* t, ConstantInput(ctx, i, "it sets the output shape"));
  std::vector<double> values;
  for (int64_t e = 0; e < t->num_elements(); ++e) values.push_back(t->GetAsDouble(e));
  return values;
}

// The output shape of Resize whose X is input `x` and whose roi, scales and sizes are
// inputs x + 1, x + 2, x + 3 (ResizeGrad reads the forward inputs after dY).
absl::StatusOr<Shape> ResizedShape(const InferenceContext& ctx, int x) {
  absl::StatusOr<ResizeAttrs> attrs = ReadResizeAttrs(ctx);
  if (!attrs.ok()) return ctx.Error(attrs.status().message());
  const Shape& in = ctx.input_shape(x);
  if (in.rank() == 0) return ctx.Error("input 'X' is a scalar but rank >= 1 is required");
  if (attrs->coordinate_mode == "tf_crop_and_resize") {
    if (!ctx.has_input(x + 1) || ctx.input_shape(x + 1) != Shape{2 * static_cast<int64_t>(in.rank())}) {
      return ctx.Error(absl::StrCat("coordinate_transformation_mode tf_crop_and_resize needs input 'roi' of shape [",
                                    2 * in.rank(), "] (starts then ends per axis of ", in.ToString(), ")"));
    }
  }
  TSR_ASSIGN_OR_RETURN(std::optional<std::vector<double>> scales, OptionalConstantValues(ctx, x + 2));
  TSR_ASSIGN_OR_RETURN(std::optional<std::vector<double>> size_values, OptionalConstantValues(ctx, x + 3));
  std::vector<int64_t> sizes;
  if (size_values) {
    for (double v : *size_values) sizes.push_back(static_cast<int64_t>(v));
  }
  // N is bound later; it may only keep its size, so it is sized as 1 here.
  const Shape bound = in.BindBatch(1);
  absl::StatusOr<ResizeSizes> out = ResizeOutputSizes(bound, scales.value_or(std::vector<double>{}), sizes);
  if (!out.ok()) return ctx.Error(out.status().message());
  for (int i = 0; i < in.rank(); ++i) {
    if (in.dim(i) != kBatchDim) continue;
    if (!scales || (*scales)[i] != 1.0) {
      return ctx.Error(absl::StrCat("axis ", i, " of ", in.ToString(),
                                    " is the batch dimension N, which Resize can only keep (scale 1)"));
    }
    out->dims[i] = kBatchDim;
  }
  return Shape(out->dims);
}

absl::Status InferResize(InferenceContext& ctx) {
  TSR_ASSIGN_OR_RETURN(Shape out, ResizedShape(ctx, 0));
  ctx.set_output(0, ctx.input_dtype(0), std::move(out));
  return absl::OkStatus();
}

absl::Status InferResizeGrad(InferenceContext& ctx) {
  TSR_ASSIGN_OR_RETURN(Shape forward_out, ResizedShape(ctx, 1));
  if (ctx.input_shape(0) != forward_out) {
    return ctx.Error(absl::StrCat("input 'dY' has shape ", ctx.input_shape(0).ToString(), " but Resize of ",
                                  ctx.input_shape(1).ToString(), " gives ", forward_out.ToString()));
  }
  ctx.set_output(0, ctx.input_dtype(1), ctx.input_shape(1));
  return absl::OkStatus();
}

// Multiply-adds per element of the resized tensor `resized`: taps^k for the k axes
// whose size changes (nearest reads one element).
int64_t ResizeFlops(const InferenceContext& ctx, const Shape& small, const Shape& resized) {
  const std::string mode = ctx.GetString("mode");
  int64_t per = 1;
  if (mode != "nearest") {
    for (int i = 0; i < small.rank() && i < resized.rank(); ++i) {
      if (small.dim(i) != resized.dim(i)) per *= mode == "cubic" ? 4 : 2;
    }
    per *= 2;
  }
  return SaturatingProduct({per, resized.BindBatch(1).num_elements()});
}

OpDefBuilder ResizeAttrsBuilder(std::string name, absl::Span<const DType> types) {
  OpDefBuilder b(std::move(name));
  b.Attr("mode", AttrType::kString, AttrValue::String("nearest"))
      .Attr("coordinate_transformation_mode", AttrType::kString, AttrValue::String("half_pixel"))
      .Attr("nearest_mode", AttrType::kString, AttrValue::String("round_prefer_floor"))
      .Attr("cubic_coeff_a", AttrType::kFloat, AttrValue::Float(-0.75))
      .Attr("exclude_outside", AttrType::kInt, AttrValue::Int(0))
      .Attr("extrapolation_value", AttrType::kFloat, AttrValue::Float(0.0))
      .TypeConstraint("T", types)
      .TypeConstraint("Troi", kFloatDTypes)
      .TypeConstraint("Tscales", {DType::kF32})
      .TypeConstraint("Tsizes", {DType::kI64});
  return b;
}

}  // namespace

absl::Status RegisterResizeOps(OpRegistry& registry) {
  TSR_RETURN_IF_ERROR(registry.Register(
      ResizeAttrsBuilder("Resize", kNumericDTypes)
          .Summary("Resizes X to 'sizes' or by 'scales' (constants) with nearest, "
                   "linear or cubic interpolation, as ONNX defines it.")
          .Input("X", "T")
          .OptionalInput("roi", "Troi")
          .OptionalInput("scales", "Tscales")
          .OptionalInput("sizes", "Tsizes")
          .Output("Y", "T")
          .Infer(InferResize)
          .Flops([](const InferenceContext& ctx) { return ResizeFlops(ctx, ctx.input_shape(0), ctx.output(0).shape); })
          .Build()));
  TSR_RETURN_IF_ERROR(registry.Register(
      ResizeAttrsBuilder("ResizeGrad", kFloatDTypes)
          .Summary("dX of Resize: dY scattered back onto X's shape with the "
                   "forward interpolation weights.")
          .Input("dY", "T")
          .Input("X", "T")
          .OptionalInput("roi", "Troi")
          .OptionalInput("scales", "Tscales")
          .OptionalInput("sizes", "Tsizes")
          .Output("dX", "T")
          .Infer(InferResizeGrad)
          .Flops([](const InferenceContext& ctx) { return ResizeFlops(ctx, ctx.input_shape(1), ctx.input_shape(0)); })
          .Build()));
  return absl::OkStatus();
}

}  // namespace tsr

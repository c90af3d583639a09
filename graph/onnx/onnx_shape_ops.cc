// ONNX mappings of shape, layout, indexing and source ops (beyond the core table in onnx_op_mapping.cc):
// Size, ConstantOfShape, EyeLike, Trilu, DepthToSpace, SpaceToDepth, ReverseSequence, Resize, GatherND,
// ScatterND, Compress, NonZero, and Scatter (the deprecated name of ScatterElements, still defined as
// Scatter-11). Upsample is not mapped: it was removed in opset 10, below the importer's opsets.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/onnx/onnx_op_mapping.h"
#include "graph/onnx/onnx_tensor.h"
#include "graph/status_macros.h"

namespace tsr {

namespace {

absl::StatusOr<std::vector<TensorRef>> ConvertConstantOfShape(OnnxNodeContext& ctx) {
  AttrMap attrs;
  TSR_ASSIGN_OR_RETURN(std::optional<Tensor> value, ctx.GetTensor("value"));
  if (value.has_value()) attrs["value"] = AttrValue::FromTensor(*std::move(value));
  TSR_ASSIGN_OR_RETURN(Node * n, ctx.AddNode("ConstantOfShape", ctx.inputs(), std::move(attrs)));
  return AllOutputs(*n);
}

// 'dtype' is an ONNX element type code.
absl::StatusOr<std::vector<TensorRef>> ConvertEyeLike(OnnxNodeContext& ctx) {
  AttrMap attrs;
  TSR_RETURN_IF_ERROR(ctx.CopyAttrs({"k"}, attrs, "EyeLike"));
  TSR_ASSIGN_OR_RETURN(std::optional<int64_t> dtype, ctx.GetInt("dtype"));
  if (dtype.has_value()) {
    if (*dtype < INT32_MIN || *dtype > INT32_MAX) return ctx.Error(absl::StrCat("attribute 'dtype' is ", *dtype));
    absl::StatusOr<DType> d = DTypeFromOnnx(static_cast<int32_t>(*dtype));
    if (!d.ok()) return ctx.Unsupported(absl::StrCat("attribute 'dtype': ", d.status().message()));
    attrs["dtype"] = AttrValue::Type(*d);
  }
  TSR_ASSIGN_OR_RETURN(Node * n, ctx.AddNode("EyeLike", ctx.inputs(), std::move(attrs)));
  return AllOutputs(*n);
}

// Opsets 11-17 map 1:1; opset 18's additions are accepted at their defaults only.
absl::StatusOr<std::vector<TensorRef>> ConvertResize(OnnxNodeContext& ctx) {
  AttrMap attrs;
  TSR_RETURN_IF_ERROR(ctx.CopyAttrs({"mode", "coordinate_transformation_mode", "nearest_mode", "cubic_coeff_a",
                                     "exclude_outside", "extrapolation_value"},
                                    attrs, "Resize"));
  TSR_ASSIGN_OR_RETURN(std::optional<int64_t> antialias, ctx.GetInt("antialias"));
  if (antialias.value_or(0) != 0) return ctx.Unsupported("antialias=1 is not supported");
  TSR_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> axes, ctx.GetInts("axes"));
  if (axes.has_value()) return ctx.Unsupported("attribute 'axes' is not supported (give scales/sizes for every axis)");
  TSR_ASSIGN_OR_RETURN(std::optional<std::string> policy, ctx.GetString("keep_aspect_ratio_policy"));
  if (policy.value_or("stretch") != "stretch") {
    return ctx.Unsupported(absl::StrCat("keep_aspect_ratio_policy '", *policy, "' is not supported (only stretch)"));
  }
  TSR_ASSIGN_OR_RETURN(Node * n, ctx.AddNode("Resize", ctx.inputs(), std::move(attrs)));
  return AllOutputs(*n);
}

}  // namespace

void AddOnnxShapeMappings(OnnxOpTable& table) {
  table["Size"] = {DirectOnnxMapping("Size")};
  table["ConstantOfShape"] = {ConvertConstantOfShape, 9};
  table["EyeLike"] = {ConvertEyeLike, 9};
  table["Trilu"] = {DirectOnnxMapping("Trilu", {"upper"}), 14};
  table["DepthToSpace"] = {DirectOnnxMapping("DepthToSpace", {"blocksize", "mode"})};
  table["SpaceToDepth"] = {DirectOnnxMapping("SpaceToDepth", {"blocksize"})};
  table["ReverseSequence"] = {DirectOnnxMapping("ReverseSequence", {"time_axis", "batch_axis"}), 10};
  table["Resize"] = {ConvertResize, 11};
  table["GatherND"] = {DirectOnnxMapping("GatherND", {"batch_dims"}), 11};
  table["ScatterND"] = {DirectOnnxMapping("ScatterND", {"reduction"}), 11};
  table["Compress"] = {DirectOnnxMapping("Compress", {"axis"}), 9};
  table["NonZero"] = {DirectOnnxMapping("NonZero"), 9};
  table["Scatter"] = {DirectOnnxMapping("ScatterElements", {"axis"}), 9};
}

}  // namespace tsr

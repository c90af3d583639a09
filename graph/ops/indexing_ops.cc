// Indexing ops: Gather, GatherElements, ScatterElements, OneHot (ONNX semantics,
// latest opset). Each writes its output element by element, so its FLOP estimate is
// the number of elements written (the updates, for ScatterElements).
//
// Index values are run-time data, so only their shapes (and OneHot's depth, which
// sets an output dim and must be a constant) enter shape inference.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/op_registry.h"
#include "graph/ops/op_helpers.h"
#include "graph/ops/register_ops.h"
#include "graph/status_macros.h"

namespace tsr {

namespace {

absl::Status InferGather(InferenceContext& ctx) {
  const Shape& data = ctx.input_shape(0);
  const Shape& indices = ctx.input_shape(1);
  if (data.rank() == 0) return ctx.Error("input 'data' is a scalar but rank >= 1 is required");
  absl::StatusOr<int> axis = NormalizeAxis(ctx.GetInt("axis"), data.rank());
  if (!axis.ok()) return ctx.Error(axis.status().message());
  // data.shape[:axis] + indices.shape + data.shape[axis+1:]
  Shape out;
  for (int i = 0; i < *axis; ++i) out.AddDim(data.dim(i));
  for (int64_t d : indices.dims()) out.AddDim(d);
  for (int i = *axis + 1; i < data.rank(); ++i) out.AddDim(data.dim(i));
  if (out.rank() > kMaxRank) {
    return ctx.Error(absl::StrCat("gathering ", indices.ToString(), " from ", data.ToString(), " gives rank ",
                                  out.rank(), ", above the limit of ", kMaxRank));
  }
  ctx.set_output(0, ctx.input_dtype(0), std::move(out));
  return absl::OkStatus();
}

// GatherElements and ScatterElements pair each index with the data element at the
// same position on every axis but `axis`, so indices may not be larger than the data
// there. A batch dim against a static one is left to run time.
absl::Status CheckElementIndices(const InferenceContext& ctx, const Shape& data, const Shape& indices, int axis) {
  for (int i = 0; i < data.rank(); ++i) {
    if (i == axis || data.dim(i) == kBatchDim || indices.dim(i) == kBatchDim) continue;
    if (indices.dim(i) > data.dim(i)) {
      return ctx.Error(absl::StrCat("input 'indices' has shape ", indices.ToString(), " but 'data' has ",
                                    data.ToString(), "; off axis ", axis, " indices dims must be <= data dims"));
    }
  }
  return absl::OkStatus();
}

// The checks GatherElements and ScatterElements share (data rank, indices rank and
// dims, axis); returns the normalized axis.
absl::StatusOr<int> ElementsAxis(const InferenceContext& ctx) {
  const Shape& data = ctx.input_shape(0);
  const Shape& indices = ctx.input_shape(1);
  if (data.rank() == 0) return ctx.Error("input 'data' is a scalar but rank >= 1 is required");
  if (indices.rank() != data.rank()) {
    return ctx.Error(absl::StrCat("input 'indices' has shape ", indices.ToString(),
                                  " but must have the rank of 'data' ", data.ToString()));
  }
  absl::StatusOr<int> axis = NormalizeAxis(ctx.GetInt("axis"), data.rank());
  if (!axis.ok()) return ctx.Error(axis.status().message());
  TSR_RETURN_IF_ERROR(CheckElementIndices(ctx, data, indices, *axis));
  return *axis;
}

absl::Status InferGatherElements(InferenceContext& ctx) {
  TSR_RETURN_IF_ERROR(ElementsAxis(ctx).status());
  ctx.set_output(0, ctx.input_dtype(0), ctx.input_shape(1));
  return absl::OkStatus();
}

absl::Status InferScatterElements(InferenceContext& ctx) {
  const std::string reduction = ctx.GetString("reduction");
  if (reduction != "none" && reduction != "add" && reduction != "mul" && reduction != "max" && reduction != "min") {
    return ctx.Error(absl::StrCat("unknown reduction '", reduction, "' (known: none, add, mul, max, min)"));
  }
  TSR_RETURN_IF_ERROR(ElementsAxis(ctx).status());
  if (ctx.input_shape(2) != ctx.input_shape(1)) {
    return ctx.Error(absl::StrCat("input 'updates' has shape ", ctx.input_shape(2).ToString(),
                                  " but must have the shape of 'indices' ", ctx.input_shape(1).ToString()));
  }
  ctx.set_output(0, ctx.input(0));
  return absl::OkStatus();
}

absl::Status InferOneHot(InferenceContext& ctx) {
  const Shape& indices = ctx.input_shape(0);
  TSR_ASSIGN_OR_RETURN(const Tensor* depth, ConstantInput(ctx, 1, "it sets an output dim"));
  if (depth->num_elements() != 1 || depth->shape().rank() > 1) {
    return ctx.Error(
        absl::StrCat("input 'depth' must be a scalar (or hold one element) but has shape ", depth->shape().ToString()));
  }
  // ONNX allows a float depth and truncates it to an integer. Doubles hold every
  // integer up to 2^53, so the range check is exact (and rejects NaN) before the cast.
  const double depth_double = depth->GetAsDouble(0);
  if (!(depth_double >= 1 && depth_double < static_cast<double>(kMaxElements) + 1)) {
    return ctx.Error(absl::StrCat("depth is ", depth_double, " but must be in [1, 2^40]"));
  }
  const int64_t depth_value = static_cast<int64_t>(depth_double);
  if (ctx.input_shape(2) != Shape{2}) {
    return ctx.Error(absl::StrCat("input 'values' must have shape [2] ([off_value, on_value]) but has shape ",
                                  ctx.input_shape(2).ToString()));
  }
  absl::StatusOr<int> axis = NormalizeAxis(ctx.GetInt("axis"), indices.rank() + 1);
  if (!axis.ok()) return ctx.Error(axis.status().message());
  std::vector<int64_t> out = indices.dims();
  out.insert(out.begin() + *axis, depth_value);
  ctx.set_output(0, ctx.input_dtype(2), Shape(std::move(out)));
  return absl::OkStatus();
}

int64_t UpdateElements(const InferenceContext& ctx) { return ctx.input_shape(2).BindBatch(1).num_elements(); }

// What Gather, GatherElements and ScatterElements share: the data, the indices into
// it along 'axis', and an output of the data's dtype.
OpDefBuilder AxisIndexingBuilder(std::string name, std::string summary) {
  OpDefBuilder b(std::move(name));
  b.Summary(std::move(summary))
      .Input("data", "T")
      .Input("indices", "Tind")
      .Output("output", "T")
      .TypeConstraint("T", kAllDTypes)
      .TypeConstraint("Tind", kIndexDTypes)
      .Attr("axis", AttrType::kInt, AttrValue::Int(0));
  return b;
}

}  // namespace

absl::Status RegisterIndexingOps(OpRegistry& registry) {
  TSR_RETURN_IF_ERROR(registry.Register(AxisIndexingBuilder("Gather",
                                                            "Takes the slices data[..., indices, ...] along 'axis'; "
                                                            "the output is data.shape[:axis] + indices.shape + "
                                                            "data.shape[axis+1:].")
                                            .Infer(InferGather)
                                            .Flops(PerOutputElement(1))
                                            .Build()));
  TSR_RETURN_IF_ERROR(registry.Register(AxisIndexingBuilder("GatherElements",
                                                            "out[i][j] = data[indices[i][j]][j] (for axis 0): an "
                                                            "index per output element.")
                                            .Infer(InferGatherElements)
                                            .Flops(PerOutputElement(1))
                                            .Build()));
  TSR_RETURN_IF_ERROR(registry.Register(AxisIndexingBuilder("ScatterElements",
                                                            "A copy of data with out[indices[i][j]][j] = "
                                                            "updates[i][j] (for axis 0), combined by 'reduction'.")
                                            .Input("updates", "T")
                                            .Attr("reduction", AttrType::kString, AttrValue::String("none"))
                                            .Infer(InferScatterElements)
                                            .Flops(UpdateElements)
                                            .Build()));
  TSR_RETURN_IF_ERROR(registry.Register(OpDefBuilder("OneHot")
                                            .Summary("on_value where the index along the new 'axis' equals "
                                                     "indices, off_value elsewhere; values = [off_value, on_value].")
                                            .Input("indices", "T1")
                                            .Input("depth", "T2")
                                            .Input("values", "T3")
                                            .Output("output", "T3")
                                            .TypeConstraint("T1", kNumericDTypes)
                                            .TypeConstraint("T2", kNumericDTypes)
                                            .TypeConstraint("T3", kAllDTypes)
                                            .Attr("axis", AttrType::kInt, AttrValue::Int(-1))
                                            .Infer(InferOneHot)
                                            .Flops(PerOutputElement(1))
                                            .Build()));
  return absl::OkStatus();
}

}  // namespace tsr

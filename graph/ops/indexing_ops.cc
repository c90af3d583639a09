// Indexing ops: Gather, GatherElements, ScatterElements, OneHot, GatherND, ScatterND,
// Compress, NonZero (ONNX semantics, latest opset). Each writes its output element by
// element, so its FLOP estimate is the number of elements written (the updates, for
// the scatters).
//
// Index values are run-time data, so only their shapes enter shape inference — except
// where a value sets an output dim and must therefore be a constant: OneHot's depth,
// Compress's condition, and NonZero's whole input.
#include <algorithm>
#include <cstdint>
#include <optional>
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

// The static last dim of GatherND/ScatterND indices: the length k of each index tuple.
absl::StatusOr<int64_t> IndexTupleLength(const InferenceContext& ctx, const Shape& data, const Shape& indices,
                                         int64_t batch_dims) {
  if (indices.rank() < 1) return ctx.Error("input 'indices' is a scalar but rank >= 1 is required");
  if (batch_dims < 0 || batch_dims >= std::min(data.rank(), indices.rank())) {
    return ctx.Error(absl::StrCat("batch_dims is ", batch_dims, " but must be in [0, min(rank of 'data' ", data.rank(),
                                  ", rank of 'indices' ", indices.rank(), "))"));
  }
  for (int i = 0; i < batch_dims; ++i) {
    if (data.dim(i) != indices.dim(i)) {
      return ctx.Error(absl::StrCat("the first ", batch_dims, " dims of 'data' ", data.ToString(), " and 'indices' ",
                                    indices.ToString(), " must match (batch_dims)"));
    }
  }
  const int64_t k = indices.dim(indices.rank() - 1);
  if (k == kBatchDim || k < 1 || k > data.rank() - batch_dims) {
    return ctx.Error(absl::StrCat("the last dim of 'indices' ", indices.ToString(), " is the index length, which must ",
                                  "be static and in [1, ", data.rank() - batch_dims, "] for 'data' ", data.ToString(),
                                  " and batch_dims ", batch_dims));
  }
  return k;
}

// indices.shape[:-1] + data.shape[batch_dims + k:].
Shape GatherNDShape(const Shape& data, const Shape& indices, int64_t batch_dims, int64_t k) {
  Shape out;
  for (int i = 0; i + 1 < indices.rank(); ++i) out.AddDim(indices.dim(i));
  for (int i = static_cast<int>(batch_dims + k); i < data.rank(); ++i) out.AddDim(data.dim(i));
  return out;
}

absl::Status InferGatherND(InferenceContext& ctx) {
  const Shape& data = ctx.input_shape(0);
  const Shape& indices = ctx.input_shape(1);
  const int64_t batch_dims = ctx.GetInt("batch_dims");
  TSR_ASSIGN_OR_RETURN(const int64_t k, IndexTupleLength(ctx, data, indices, batch_dims));
  Shape out = GatherNDShape(data, indices, batch_dims, k);
  if (out.rank() > kMaxRank) {
    return ctx.Error(absl::StrCat("gathering ", indices.ToString(), " from ", data.ToString(), " gives rank ",
                                  out.rank(), ", above the limit of ", kMaxRank));
  }
  ctx.set_output(0, ctx.input_dtype(0), std::move(out));
  return absl::OkStatus();
}

absl::Status CheckReduction(const InferenceContext& ctx) {
  const std::string reduction = ctx.GetString("reduction");
  if (reduction != "none" && reduction != "add" && reduction != "mul" && reduction != "max" && reduction != "min") {
    return ctx.Error(absl::StrCat("unknown reduction '", reduction, "' (known: none, add, mul, max, min)"));
  }
  return absl::OkStatus();
}

absl::Status InferScatterND(InferenceContext& ctx) {
  TSR_RETURN_IF_ERROR(CheckReduction(ctx));
  const Shape& data = ctx.input_shape(0);
  const Shape& indices = ctx.input_shape(1);
  TSR_ASSIGN_OR_RETURN(const int64_t k, IndexTupleLength(ctx, data, indices, 0));
  const Shape expected = GatherNDShape(data, indices, 0, k);
  if (ctx.input_shape(2) != expected) {
    return ctx.Error(absl::StrCat("input 'updates' has shape ", ctx.input_shape(2).ToString(), " but must be ",
                                  expected.ToString(), " (indices.shape[:-1] + data.shape[k:])"));
  }
  ctx.set_output(0, ctx.input(0));
  return absl::OkStatus();
}

absl::Status InferCompress(InferenceContext& ctx) {
  const Shape& in = ctx.input_shape(0);
  TSR_ASSIGN_OR_RETURN(const Tensor* condition, ConstantInput(ctx, 1, "the output shape depends on it"));
  if (condition->shape().rank() != 1) {
    return ctx.Error(absl::StrCat("input 'condition' has shape ", condition->shape().ToString(), " but must be 1-D"));
  }
  std::optional<int> axis;
  int64_t length;  // of the axis, or of the flattened input
  if (ctx.has_attr("axis")) {
    absl::StatusOr<int> a = NormalizeAxis(ctx.GetInt("axis"), in.rank());
    if (!a.ok()) return ctx.Error(a.status().message());
    axis = *a;
    length = in.dim(*axis);
  } else {
    length = in.is_static() ? in.num_elements() : kBatchDim;
  }
  if (length == kBatchDim) {
    return ctx.Error(absl::StrCat("cannot compress ", in.ToString(),
                                  axis ? absl::StrCat(" along axis ", *axis) : std::string(" flattened"),
                                  ": its length depends on the batch dimension N"));
  }
  if (condition->num_elements() > length) {
    return ctx.Error(absl::StrCat("input 'condition' has ", condition->num_elements(),
                                  " values but the compressed length is only ", length));
  }
  int64_t kept = 0;
  for (int64_t i = 0; i < condition->num_elements(); ++i) kept += condition->GetAsInt64(i) != 0 ? 1 : 0;
  Shape out;
  if (axis) {
    out = in;
    out.set_dim(*axis, kept);
  } else {
    out = Shape{kept};
  }
  ctx.set_output(0, ctx.input_dtype(0), std::move(out));
  return absl::OkStatus();
}

absl::Status InferNonZero(InferenceContext& ctx) {
  TSR_ASSIGN_OR_RETURN(const Tensor* x, ConstantInput(ctx, 0, "the output shape depends on its values"));
  // ONNX's shape inference ([0, n]) and its reference (numpy, [1, n]) disagree on scalars.
  if (x->shape().rank() == 0)
    return ctx.Error("input 'X' is a scalar, whose result ONNX leaves ambiguous; use rank >= 1");
  int64_t nonzero = 0;
  for (int64_t i = 0; i < x->num_elements(); ++i) nonzero += x->GetAsDouble(i) != 0 ? 1 : 0;
  const int64_t rank = x->shape().rank();
  ctx.set_output(0, DType::kI64, Shape{rank, nonzero});
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
  TSR_RETURN_IF_ERROR(registry.Register(OpDefBuilder("GatherND")
                                            .Summary("Gathers the slices data[b..., indices[b..., i, :], ...]: each "
                                                     "index tuple (the last axis of 'indices') addresses the first k "
                                                     "dims after the 'batch_dims' leading ones.")
                                            .Input("data", "T")
                                            .Input("indices", "Tind")
                                            .Output("output", "T")
                                            .TypeConstraint("T", kAllDTypes)
                                            .TypeConstraint("Tind", {DType::kI64})
                                            .Attr("batch_dims", AttrType::kInt, AttrValue::Int(0))
                                            .Infer(InferGatherND)
                                            .Flops(PerOutputElement(1))
                                            .Build()));
  TSR_RETURN_IF_ERROR(registry.Register(OpDefBuilder("ScatterND")
                                            .Summary("A copy of data with the slices addressed by the index tuples of "
                                                     "'indices' set to (or combined by 'reduction' with) 'updates', in "
                                                     "order.")
                                            .Input("data", "T")
                                            .Input("indices", "Tind")
                                            .Input("updates", "T")
                                            .Output("output", "T")
                                            .TypeConstraint("T", kAllDTypes)
                                            .TypeConstraint("Tind", {DType::kI64})
                                            .Attr("reduction", AttrType::kString, AttrValue::String("none"))
                                            .Infer(InferScatterND)
                                            .Flops(UpdateElements)
                                            .Build()));
  TSR_RETURN_IF_ERROR(registry.Register(OpDefBuilder("Compress")
                                            .Summary("The slices along 'axis' (of the flattened input when absent) "
                                                     "whose entry of the constant 'condition' is true.")
                                            .Input("input", "T")
                                            .Input("condition", "T1")
                                            .Output("output", "T")
                                            .TypeConstraint("T", kAllDTypes)
                                            .TypeConstraint("T1", {DType::kBool})
                                            .OptionalAttr("axis", AttrType::kInt)
                                            .Infer(InferCompress)
                                            .Flops(PerOutputElement(1))
                                            .Build()));
  TSR_RETURN_IF_ERROR(registry.Register(OpDefBuilder("NonZero")
                                            .Summary("The indices of the nonzero elements of the (constant) input, "
                                                     "one column per element in row-major order: [rank, count].")
                                            .Input("X", "T")
                                            .Output("Y", "T1")
                                            .TypeConstraint("T", kAllDTypes)
                                            .TypeConstraint("T1", {DType::kI64})
                                            .Infer(InferNonZero)
                                            .Flops(PerOutputElement(1))
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

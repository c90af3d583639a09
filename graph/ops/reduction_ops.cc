// Reductions with ONNX opset 18 semantics — ReduceSum, ReduceMean, ReduceMax,
// ReduceMin, ReduceProd, ReduceL2 — and ArgMax.
//
// The Reduce* ops take their axes as an optional int64 input (opset 18), but graphs
// are static, so when `axes` is given it must be a constant: the output shape depends
// on its value. Absent or empty axes reduce every dimension, unless
// noop_with_empty_axes=1, which makes the op the identity. Reducing the symbolic
// batch dimension is allowed (it becomes 1 with keepdims=1, disappears otherwise).
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/op_registry.h"
#include "graph/ops/op_helpers.h"
#include "graph/ops/register_ops.h"
#include "graph/status_macros.h"

namespace tsr {

namespace {

// ONNX ReduceSum/Mean/Prod/L2 types (uint32/uint64 do not exist here).
constexpr DType kReduceArithmeticDTypes[] = {DType::kF32,  DType::kF64, DType::kF16,
                                             DType::kBF16, DType::kI32, DType::kI64};
// ReduceMax/Min additionally take 8-bit integers and (opset 20) bool.
constexpr DType kReduceOrderedDTypes[] = {DType::kF32, DType::kF64, DType::kF16, DType::kBF16, DType::kI8,
                                          DType::kU8,  DType::kI32, DType::kI64, DType::kBool};

// ONNX declares these int attributes as flags; anything but 0 or 1 is a typo.
// The constant axes of a Reduce* node (empty when absent).
absl::StatusOr<std::vector<int64_t>> ReduceAxes(const InferenceContext& ctx) {
  if (!ctx.has_input(1)) return std::vector<int64_t>();
  const Shape& shape = ctx.input_shape(1);
  if (shape.rank() != 1) {
    return ctx.Error(absl::StrCat("input 1 ('axes') has shape ", shape.ToString(), " but a 1-D tensor is required"));
  }
  const Tensor* value = ctx.input_value(1);
  if (value == nullptr) {
    return ctx.Error("input 1 ('axes') must be a constant: the output shape depends on its value");
  }
  return value->ToInt64Vector();
}

// True when the node returns its input unchanged (no axes and noop_with_empty_axes=1).
bool IsNoopReduction(const InferenceContext& ctx, const std::vector<int64_t>& axes) {
  return axes.empty() && ctx.GetInt("noop_with_empty_axes") == 1;
}

// The shape left after reducing `axes` (sorted, unique, in range).
Shape ReducedShape(const Shape& in, const std::vector<int>& axes, bool keepdims) {
  Shape out;
  size_t next = 0;
  for (int d = 0; d < in.rank(); ++d) {
    if (next < axes.size() && axes[next] == d) {
      ++next;
      if (keepdims) out.AddDim(1);
    } else {
      out.AddDim(in.dim(d));
    }
  }
  return out;
}

absl::Status InferReduce(InferenceContext& ctx) {
  TSR_RETURN_IF_ERROR(CheckFlagAttr(ctx, "keepdims"));
  TSR_RETURN_IF_ERROR(CheckFlagAttr(ctx, "noop_with_empty_axes"));
  TSR_ASSIGN_OR_RETURN(std::vector<int64_t> axes, ReduceAxes(ctx));
  const Shape& in = ctx.input_shape(0);
  if (IsNoopReduction(ctx, axes)) {
    ctx.set_output(0, ctx.input(0));
    return absl::OkStatus();
  }
  std::vector<int> normalized;
  if (axes.empty()) {
    for (int d = 0; d < in.rank(); ++d) normalized.push_back(d);
  } else {
    TSR_ASSIGN_OR_RETURN(normalized, NormalizeAxes(ctx, axes, in.rank()));
  }
  ctx.set_output(0, ctx.input_dtype(0), ReducedShape(in, normalized, ctx.GetInt("keepdims") == 1));
  return absl::OkStatus();
}

int64_t InputElements(const InferenceContext& ctx) { return ctx.input_shape(0).BindBatch(1).num_elements(); }

// FLOPs = per_input x input elements + per_output x output elements, or 0 for the
// identity case. Flops run only after inference succeeded, so the axes are valid.
FlopsFn ReduceFlops(int64_t per_input, int64_t per_output) {
  return [per_input, per_output](const InferenceContext& ctx) -> int64_t {
    absl::StatusOr<std::vector<int64_t>> axes = ReduceAxes(ctx);
    if (!axes.ok() || IsNoopReduction(ctx, *axes)) return 0;
    return per_input * InputElements(ctx) + per_output * OutputElements(ctx);
  };
}

OpDef ReduceOp(std::string name, std::string summary, absl::Span<const DType> allowed, FlopsFn flops) {
  return OpDefBuilder(std::move(name))
      .Summary(std::move(summary))
      .Input("data", "T")
      .OptionalInput("axes", "Tind")
      .Output("reduced", "T")
      .TypeConstraint("T", allowed)
      .TypeConstraint("Tind", {DType::kI64})
      .Attr("keepdims", AttrType::kInt, AttrValue::Int(1))
      .Attr("noop_with_empty_axes", AttrType::kInt, AttrValue::Int(0))
      .Infer(InferReduce)
      .Flops(std::move(flops))
      .Build();
}

absl::Status InferArgMax(InferenceContext& ctx) {
  TSR_RETURN_IF_ERROR(CheckFlagAttr(ctx, "keepdims"));
  TSR_RETURN_IF_ERROR(CheckFlagAttr(ctx, "select_last_index"));
  const Shape& in = ctx.input_shape(0);
  absl::StatusOr<int> axis = NormalizeAxis(ctx.GetInt("axis"), in.rank());
  if (!axis.ok()) return ctx.Error(axis.status().message());
  if (in.dim(*axis) == 0) {
    return ctx.Error(
        absl::StrCat("axis ", *axis, " of input shape ", in.ToString(), " is empty, so it has no maximum to index"));
  }
  ctx.set_output(0, DType::kI64, ReducedShape(in, {*axis}, ctx.GetInt("keepdims") == 1));
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterReductionOps(OpRegistry& registry) {
  // One add per input element.
  TSR_RETURN_IF_ERROR(
      registry.Register(ReduceOp("ReduceSum", "Sum over 'axes'.", kReduceArithmeticDTypes, ReduceFlops(1, 0))));
  // The sum, then one divide per output element.
  TSR_RETURN_IF_ERROR(
      registry.Register(ReduceOp("ReduceMean", "Mean over 'axes'.", kReduceArithmeticDTypes, ReduceFlops(1, 1))));
  TSR_RETURN_IF_ERROR(
      registry.Register(ReduceOp("ReduceMax", "Maximum over 'axes'.", kReduceOrderedDTypes, ReduceFlops(1, 0))));
  TSR_RETURN_IF_ERROR(
      registry.Register(ReduceOp("ReduceMin", "Minimum over 'axes'.", kReduceOrderedDTypes, ReduceFlops(1, 0))));
  TSR_RETURN_IF_ERROR(
      registry.Register(ReduceOp("ReduceProd", "Product over 'axes'.", kReduceArithmeticDTypes, ReduceFlops(1, 0))));
  // Square and add per input element, one square root per output element.
  TSR_RETURN_IF_ERROR(registry.Register(
      ReduceOp("ReduceL2", "sqrt(sum(X^2)) over 'axes'.", kReduceArithmeticDTypes, ReduceFlops(2, 1))));
  TSR_RETURN_IF_ERROR(
      registry.Register(OpDefBuilder("ArgMax")
                            .Summary("Index (int64) of the maximum along 'axis'; ties go to the first (or, with "
                                     "select_last_index=1, the last) occurrence.")
                            .Input("data", "T")
                            .Output("reduced", "Tind")
                            .TypeConstraint("T", kNumericDTypes)
                            .TypeConstraint("Tind", {DType::kI64})
                            .Attr("axis", AttrType::kInt, AttrValue::Int(0))
                            .Attr("keepdims", AttrType::kInt, AttrValue::Int(1))
                            .Attr("select_last_index", AttrType::kInt, AttrValue::Int(0))
                            .Infer(InferArgMax)
                            // One comparison per input element.
                            .Flops([](const InferenceContext& ctx) { return InputElements(ctx); })
                            .Build()));
  return absl::OkStatus();
}

}  // namespace tsr

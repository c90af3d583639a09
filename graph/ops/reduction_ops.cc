// Reductions with ONNX opset 18 semantics — ReduceSum, ReduceMean, ReduceMax,
// ReduceMin, ReduceProd, ReduceL1, ReduceL2, ReduceSumSquare, ReduceLogSum,
// ReduceLogSumExp — ArgMax and ArgMin, and the scans and selections along one axis:
// CumSum and TopK.
//
// The Reduce* ops take their axes as an optional int64 input (opset 18), but graphs
// are static, so when `axes` is given it must be a constant: the output shape depends
// on its value. Absent or empty axes reduce every dimension, unless
// noop_with_empty_axes=1, which makes the op the identity. Reducing the symbolic
// batch dimension is allowed (it becomes 1 with keepdims=1, disappears otherwise).
#include <algorithm>
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

absl::Status InferArgExtremum(InferenceContext& ctx) {
  TSR_RETURN_IF_ERROR(CheckFlagAttr(ctx, "keepdims"));
  TSR_RETURN_IF_ERROR(CheckFlagAttr(ctx, "select_last_index"));
  const Shape& in = ctx.input_shape(0);
  absl::StatusOr<int> axis = NormalizeAxis(ctx.GetInt("axis"), in.rank());
  if (!axis.ok()) return ctx.Error(axis.status().message());
  if (in.dim(*axis) == 0) {
    return ctx.Error(
        absl::StrCat("axis ", *axis, " of input shape ", in.ToString(), " is empty, so it has no extremum to index"));
  }
  ctx.set_output(0, DType::kI64, ReducedShape(in, {*axis}, ctx.GetInt("keepdims") == 1));
  return absl::OkStatus();
}

OpDef ArgExtremumOp(std::string name, std::string summary) {
  return OpDefBuilder(std::move(name))
      .Summary(std::move(summary))
      .Input("data", "T")
      .Output("reduced", "Tind")
      .TypeConstraint("T", kNumericDTypes)
      .TypeConstraint("Tind", {DType::kI64})
      .Attr("axis", AttrType::kInt, AttrValue::Int(0))
      .Attr("keepdims", AttrType::kInt, AttrValue::Int(1))
      .Attr("select_last_index", AttrType::kInt, AttrValue::Int(0))
      .Infer(InferArgExtremum)
      // One comparison per input element.
      .Flops([](const InferenceContext& ctx) { return InputElements(ctx); })
      .Build();
}

// CumSum's axis: a scalar (or one-element 1-D) int32/int64 input. Its value does not
// change the output shape, so it need not be constant; when it is, it is checked here.
absl::Status InferCumSum(InferenceContext& ctx) {
  TSR_RETURN_IF_ERROR(CheckFlagAttr(ctx, "exclusive"));
  TSR_RETURN_IF_ERROR(CheckFlagAttr(ctx, "reverse"));
  const Shape& axis_shape = ctx.input_shape(1);
  if (axis_shape.rank() > 1 || (axis_shape.rank() == 1 && axis_shape.dim(0) != 1)) {
    return ctx.Error(
        absl::StrCat("input 1 ('axis') has shape ", axis_shape.ToString(), " but a scalar (or [1]) is required"));
  }
  const int rank = ctx.input_rank(0);
  if (rank == 0) return ctx.Error("input 0 ('x') is a scalar but CumSum needs at least one axis");
  if (const Tensor* axis = ctx.input_value(1); axis != nullptr) {
    absl::StatusOr<int> a = NormalizeAxis(axis->GetAsInt64(0), rank);
    if (!a.ok()) return ctx.Error(a.status().message());
  }
  ctx.set_output(0, ctx.input(0));
  return absl::OkStatus();
}

// TopK: K (a constant one-element int64 input) sets the output size along `axis`.
absl::Status InferTopK(InferenceContext& ctx) {
  TSR_RETURN_IF_ERROR(CheckFlagAttr(ctx, "largest"));
  TSR_RETURN_IF_ERROR(CheckFlagAttr(ctx, "sorted"));
  const Shape& in = ctx.input_shape(0);
  absl::StatusOr<int> axis = NormalizeAxis(ctx.GetInt("axis"), in.rank());
  if (!axis.ok()) return ctx.Error(axis.status().message());
  const Shape& k_shape = ctx.input_shape(1);
  if (k_shape != Shape{1}) {
    return ctx.Error(absl::StrCat("input 1 ('K') has shape ", k_shape.ToString(), " but [1] is required"));
  }
  const Tensor* k_value = ctx.input_value(1);
  if (k_value == nullptr) return ctx.Error("input 1 ('K') must be a constant: the output shape depends on its value");
  const int64_t k = k_value->GetAsInt64(0);
  const int64_t n = in.dim(*axis);
  if (k < 0 || (n != kBatchDim && k > n)) {
    return ctx.Error(absl::StrCat("K is ", k, " but must be in [0, ",
                                  n == kBatchDim ? std::string("N") : absl::StrCat(n), "] (the size of axis ", *axis,
                                  " of input shape ", in.ToString(), ")"));
  }
  Shape out = in;
  out.set_dim(*axis, k);
  ctx.set_output(0, ctx.input_dtype(0), out);
  ctx.set_output(1, DType::kI64, std::move(out));
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
  // |x| and add per input element.
  TSR_RETURN_IF_ERROR(
      registry.Register(ReduceOp("ReduceL1", "sum(|X|) over 'axes'.", kReduceArithmeticDTypes, ReduceFlops(2, 0))));
  TSR_RETURN_IF_ERROR(registry.Register(
      ReduceOp("ReduceSumSquare", "sum(X^2) over 'axes'.", kReduceArithmeticDTypes, ReduceFlops(2, 0))));
  // The sum, then one log per output element.
  TSR_RETURN_IF_ERROR(registry.Register(
      ReduceOp("ReduceLogSum", "log(sum(X)) over 'axes'.", kReduceArithmeticDTypes, ReduceFlops(1, 1))));
  // Max, subtract, exp, add per input element; log and add back the max per output.
  TSR_RETURN_IF_ERROR(
      registry.Register(ReduceOp("ReduceLogSumExp", "log(sum(exp(X))) over 'axes' (computed shifted by the maximum).",
                                 kReduceArithmeticDTypes, ReduceFlops(4, 2))));
  TSR_RETURN_IF_ERROR(
      registry.Register(ArgExtremumOp("ArgMax",
                                      "Index (int64) of the maximum along 'axis'; ties go to the first (or, with "
                                      "select_last_index=1, the last) occurrence.")));
  TSR_RETURN_IF_ERROR(
      registry.Register(ArgExtremumOp("ArgMin",
                                      "Index (int64) of the minimum along 'axis'; ties go to the first (or, with "
                                      "select_last_index=1, the last) occurrence.")));
  TSR_RETURN_IF_ERROR(registry.Register(
      OpDefBuilder("CumSum")
          .Summary("Running sum along the axis given by input 'axis'; exclusive=1 leaves each element out of its "
                   "own sum, reverse=1 runs from the end.")
          .Input("x", "T")
          .Input("axis", "T2")
          .Output("y", "T")
          .TypeConstraint("T", kReduceArithmeticDTypes)
          .TypeConstraint("T2", kIndexDTypes)
          .Attr("exclusive", AttrType::kInt, AttrValue::Int(0))
          .Attr("reverse", AttrType::kInt, AttrValue::Int(0))
          .Infer(InferCumSum)
          .Flops(PerOutputElement(1))
          .Build()));
  TSR_RETURN_IF_ERROR(registry.Register(
      OpDefBuilder("TopK")
          .Summary("The K largest (largest=1) or smallest elements along 'axis' and their int64 indices; sorted=1 "
                   "orders them (largest first, or smallest first); equal values keep the lower index first.")
          .Input("X", "T")
          .Input("K", "Tind")
          .Output("Values", "T")
          .Output("Indices", "Tind")
          .TypeConstraint("T", kNumericDTypes)
          .TypeConstraint("Tind", {DType::kI64})
          .Attr("axis", AttrType::kInt, AttrValue::Int(-1))
          .Attr("largest", AttrType::kInt, AttrValue::Int(1))
          .Attr("sorted", AttrType::kInt, AttrValue::Int(1))
          .Infer(InferTopK)
          // About log2(n) comparisons per input element (a sort along the axis).
          .Flops([](const InferenceContext& ctx) {
            int64_t n = ctx.input_shape(0).BindBatch(1).dim(
                static_cast<int>(NormalizeAxis(ctx.GetInt("axis"), ctx.input_rank(0)).value_or(0)));
            int64_t log2 = 1;
            while ((int64_t{1} << log2) < n && log2 < 62) ++log2;
            return InputElements(ctx) * log2;
          })
          .Build()));
  return absl::OkStatus();
}

}  // namespace tsr

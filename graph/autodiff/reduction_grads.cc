// Gradients of the reductions: the output gradient is given back the reduced
// dimensions (as size 1) and broadcast over them; Mean divides by the count (read at
// run time when the symbolic batch was reduced), Max/Min send it to the elements
// equal to the result, split between ties; Prod multiplies by the other elements'
// product without dividing by zeros.
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/autodiff/gradient_context.h"
#include "graph/autodiff/gradient_registry.h"
#include "graph/builder/ops.h"
#include "graph/status_macros.h"

namespace tsr {

namespace {

// The normalized reduced axes of the node; nullopt when the node is the identity
// (no axes and noop_with_empty_axes=1). Axes come from the constant input 1 (the
// shape function already required it constant).
std::optional<std::vector<int64_t>> ReducedAxes(GradientContext& ctx) {
  const int rank = ctx.input(0).rank();
  std::vector<int64_t> axes;
  const Tensor* value =
      ctx.num_inputs() > 1 && ctx.input(1).valid() ? ctx.b().graph().ConstantValue(ctx.input(1).ref()) : nullptr;
  if (value != nullptr) {
    for (int64_t i = 0; i < value->num_elements(); ++i) {
      int64_t a = value->GetAsInt64(i);
      axes.push_back(a < 0 ? a + rank : a);
    }
  }
  if (axes.empty()) {
    if (ctx.GetInt("noop_with_empty_axes") == 1) return std::nullopt;
    for (int64_t a = 0; a < rank; ++a) axes.push_back(a);
  }
  return axes;
}

// The input's shape with the reduced axes set to 1 (what keepdims=1 gives).
Shape KeptShape(const Shape& in, const std::vector<int64_t>& axes) {
  Shape kept = in;
  for (int64_t a : axes) kept.set_dim(static_cast<int>(a), 1);
  return kept;
}

// `y` (an output or its gradient) in the keepdims=1 layout.
Output Kept(GradientContext& ctx, Output y, const std::vector<int64_t>& axes) {
  return ctx.ReshapeTo(y, KeptShape(ctx.input(0).shape(), axes));
}

absl::Status ReduceSumGrad(GradientContext& ctx) {
  std::optional<std::vector<int64_t>> axes = ReducedAxes(ctx);
  if (!axes) {
    ctx.set_input_grad(0, ctx.output_grad(0));
    return absl::OkStatus();
  }
  ctx.set_input_grad(0, ctx.BroadcastLike(Kept(ctx, ctx.output_grad(0), *axes), ctx.input(0)));
  return absl::OkStatus();
}

absl::Status ReduceMeanGrad(GradientContext& ctx) {
  std::optional<std::vector<int64_t>> axes = ReducedAxes(ctx);
  if (!axes) {
    ctx.set_input_grad(0, ctx.output_grad(0));
    return absl::OkStatus();
  }
  const Output x = ctx.input(0);
  const Output share = ops::Div(ctx.b(), Kept(ctx, ctx.output_grad(0), *axes), ctx.CountOf(x, *axes, x.dtype()));
  ctx.set_input_grad(0, ctx.BroadcastLike(share, x));
  return absl::OkStatus();
}

absl::Status ReduceExtremumGrad(GradientContext& ctx) {
  std::optional<std::vector<int64_t>> axes = ReducedAxes(ctx);
  if (!axes) {
    ctx.set_input_grad(0, ctx.output_grad(0));
    return absl::OkStatus();
  }
  GraphBuilder& b = ctx.b();
  const Output x = ctx.input(0);
  const Output zero = ctx.Scalar(0.0, x), one = ctx.Scalar(1.0, x);
  const Output hit = ops::Equal(b, x, Kept(ctx, ctx.output(0), *axes));
  const Output ties = ops::ReduceSum(b, ops::Where(b, hit, one, zero), *axes, /*keepdims=*/true);
  const Output share = ops::Div(b, Kept(ctx, ctx.output_grad(0), *axes), ties);
  ctx.set_input_grad(0, ops::Where(b, hit, share, zero));
  return absl::OkStatus();
}

// y = sqrt(sum x^2): dx = dy x / y (0 where y = 0, the subgradient).
absl::Status ReduceL2Grad(GradientContext& ctx) {
  std::optional<std::vector<int64_t>> axes = ReducedAxes(ctx);
  if (!axes) {
    // The identity case of ReduceL2 is |x|.
    GraphBuilder& b = ctx.b();
    const Output x = ctx.input(0), zero = ctx.Scalar(0.0, x), dy = ctx.output_grad(0);
    const Output positive = ops::Where(b, ops::Greater(b, x, zero), dy, zero);
    ctx.set_input_grad(0, ops::Where(b, ops::Less(b, x, zero), ops::Neg(b, dy), positive));
    return absl::OkStatus();
  }
  GraphBuilder& b = ctx.b();
  const Output x = ctx.input(0), zero = ctx.Scalar(0.0, x);
  const Output y = Kept(ctx, ctx.output(0), *axes);
  const Output ratio = ops::Div(b, Kept(ctx, ctx.output_grad(0), *axes), y);
  const Output dx = ops::Mul(b, x, ratio);
  ctx.set_input_grad(0, ops::Where(b, ops::Equal(b, y, zero), zero, dx));
  return absl::OkStatus();
}

// y = prod x: dx_i = dy * (product of the others). Dividing y by x_i fails at zeros,
// so with p = the product of the non-zero elements and z = how many are zero:
//   z = 0: dx_i = dy p / x_i;   z = 1: dx_i = dy p at the zero, 0 elsewhere;   z > 1: 0.
absl::Status ReduceProdGrad(GradientContext& ctx) {
  std::optional<std::vector<int64_t>> axes = ReducedAxes(ctx);
  if (!axes) {
    ctx.set_input_grad(0, ctx.output_grad(0));
    return absl::OkStatus();
  }
  GraphBuilder& b = ctx.b();
  const Output x = ctx.input(0), zero = ctx.Scalar(0.0, x), one = ctx.Scalar(1.0, x);
  const Output is_zero = ops::Equal(b, x, zero);
  const Output nonzero_x = ops::Where(b, is_zero, one, x);
  const Output zeros = ops::ReduceSum(b, ops::Where(b, is_zero, one, zero), *axes, /*keepdims=*/true);
  const Output p = ops::Mul(b, ops::ReduceProd(b, nonzero_x, *axes, /*keepdims=*/true),
                            Kept(ctx, ctx.output_grad(0), *axes));  // dy * p
  const Output at_zero = ops::Where(b, ops::Equal(b, zeros, one), p, zero);
  const Output elsewhere = ops::Where(b, ops::Equal(b, zeros, zero), ops::Div(b, p, nonzero_x), zero);
  ctx.set_input_grad(0, ops::Where(b, is_zero, ctx.BroadcastLike(at_zero, x), elsewhere));
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterReductionGradients(OpRegistry& registry) {
  TSR_RETURN_IF_ERROR(SetGradient(registry, "ReduceSum", ReduceSumGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "ReduceMean", ReduceMeanGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "ReduceMax", ReduceExtremumGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "ReduceMin", ReduceExtremumGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "ReduceL2", ReduceL2Grad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "ReduceProd", ReduceProdGrad));
  return absl::OkStatus();
}

}  // namespace tsr

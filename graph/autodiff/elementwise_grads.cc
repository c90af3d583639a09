// Gradients of the elementwise ops. Binary ops broadcast, so each input's gradient
// is summed back to that input's shape (GradientContext::SumToShape).
#include <cmath>
#include <vector>

#include "graph/autodiff/gradient_context.h"
#include "graph/autodiff/gradient_registry.h"
#include "graph/builder/ops.h"
#include "graph/status_macros.h"

namespace tsr {

namespace {

// Sets input i's gradient to `grad` summed to its shape, when it wants one.
void SetSummed(GradientContext& ctx, int i, Output grad) {
  if (ctx.wants_input_grad(i)) ctx.set_input_grad(i, ctx.SumToShape(grad, ctx.input(i).shape()));
}

absl::Status IdentityGrad(GradientContext& ctx) {
  ctx.set_input_grad(0, ctx.output_grad(0));
  return absl::OkStatus();
}

absl::Status AddGrad(GradientContext& ctx) {
  SetSummed(ctx, 0, ctx.output_grad(0));
  SetSummed(ctx, 1, ctx.output_grad(0));
  return absl::OkStatus();
}

absl::Status SubGrad(GradientContext& ctx) {
  SetSummed(ctx, 0, ctx.output_grad(0));
  if (ctx.wants_input_grad(1)) SetSummed(ctx, 1, ops::Neg(ctx.b(), ctx.output_grad(0)));
  return absl::OkStatus();
}

absl::Status MulGrad(GradientContext& ctx) {
  GraphBuilder& b = ctx.b();
  const Output dy = ctx.output_grad(0);
  if (ctx.wants_input_grad(0)) SetSummed(ctx, 0, ops::Mul(b, dy, ctx.input(1)));
  if (ctx.wants_input_grad(1)) SetSummed(ctx, 1, ops::Mul(b, dy, ctx.input(0)));
  return absl::OkStatus();
}

// y = a / b: da = dy / b, db = -dy * y / b.
absl::Status DivGrad(GradientContext& ctx) {
  GraphBuilder& b = ctx.b();
  const Output dy = ctx.output_grad(0);
  if (ctx.wants_input_grad(0)) SetSummed(ctx, 0, ops::Div(b, dy, ctx.input(1)));
  if (ctx.wants_input_grad(1)) {
    SetSummed(ctx, 1, ops::Neg(b, ops::Mul(b, dy, ops::Div(b, ctx.output(0), ctx.input(1)))));
  }
  return absl::OkStatus();
}

// y = a ^ e: da = dy * e * a^(e-1), de = dy * y * log(a) (only asked for when the
// exponent depends on the parameters; log(a) is NaN for negative a, as in the math).
absl::Status PowGrad(GradientContext& ctx) {
  GraphBuilder& b = ctx.b();
  const Output dy = ctx.output_grad(0), a = ctx.input(0), e = ctx.input(1);
  if (ctx.wants_input_grad(0)) {
    const Output e_minus_1 = ops::Sub(b, e, ctx.Scalar(1.0, e));
    SetSummed(ctx, 0, ops::Mul(b, dy, ops::Mul(b, e, ops::Pow(b, a, e_minus_1))));
  }
  if (ctx.wants_input_grad(1)) SetSummed(ctx, 1, ops::Mul(b, dy, ops::Mul(b, ctx.output(0), ops::Log(b, a))));
  return absl::OkStatus();
}

// Float Mod is C fmod: r = a - trunc(a / b) * b, so da = dy and db = -dy * trunc(a / b)
// (with trunc(q) = sign(q) * floor(|q|)). Integer Mod has no gradient to take.
absl::Status ModGrad(GradientContext& ctx) {
  GraphBuilder& b = ctx.b();
  const Output dy = ctx.output_grad(0), a = ctx.input(0), d = ctx.input(1);
  SetSummed(ctx, 0, dy);
  if (ctx.wants_input_grad(1)) {
    const Output q = ops::Div(b, a, d);
    const Output trunc = ops::Mul(b, ops::Sign(b, q), ops::Floor(b, ops::Abs(b, q)));
    SetSummed(ctx, 1, ops::Neg(b, ops::Mul(b, dy, trunc)));
  }
  return absl::OkStatus();
}

absl::Status NegGrad(GradientContext& ctx) {
  ctx.set_input_grad(0, ops::Neg(ctx.b(), ctx.output_grad(0)));
  return absl::OkStatus();
}

// d|x| = sign(x) (0 at 0, the subgradient PyTorch and TensorFlow use).
absl::Status AbsGrad(GradientContext& ctx) {
  GraphBuilder& b = ctx.b();
  const Output x = ctx.input(0), dy = ctx.output_grad(0), zero = ctx.Scalar(0.0, x);
  const Output positive = ops::Where(b, ops::Greater(b, x, zero), dy, zero);
  ctx.set_input_grad(0, ops::Where(b, ops::Less(b, x, zero), ops::Neg(b, dy), positive));
  return absl::OkStatus();
}

absl::Status ExpGrad(GradientContext& ctx) {
  ctx.set_input_grad(0, ops::Mul(ctx.b(), ctx.output_grad(0), ctx.output(0)));
  return absl::OkStatus();
}

absl::Status LogGrad(GradientContext& ctx) {
  ctx.set_input_grad(0, ops::Div(ctx.b(), ctx.output_grad(0), ctx.input(0)));
  return absl::OkStatus();
}

// d sqrt(x) = 0.5 / sqrt(x).
absl::Status SqrtGrad(GradientContext& ctx) {
  GraphBuilder& b = ctx.b();
  ctx.set_input_grad(0, ops::Div(b, ops::Mul(b, ctx.output_grad(0), ctx.Scalar(0.5, ctx.input(0))), ctx.output(0)));
  return absl::OkStatus();
}

// d x^-1/2 = -0.5 x^-3/2 = -0.5 y / x.
absl::Status RsqrtGrad(GradientContext& ctx) {
  GraphBuilder& b = ctx.b();
  const Output scaled = ops::Mul(b, ctx.output_grad(0), ctx.Scalar(-0.5, ctx.input(0)));
  ctx.set_input_grad(0, ops::Mul(b, scaled, ops::Div(b, ctx.output(0), ctx.input(0))));
  return absl::OkStatus();
}

// d 1/x = -1/x^2 = -y^2.
absl::Status ReciprocalGrad(GradientContext& ctx) {
  GraphBuilder& b = ctx.b();
  const Output y = ctx.output(0);
  ctx.set_input_grad(0, ops::Neg(b, ops::Mul(b, ctx.output_grad(0), ops::Mul(b, y, y))));
  return absl::OkStatus();
}

// Max/Min of several inputs: the gradient goes to the inputs equal to the result,
// split evenly between ties (so the sum over inputs is dy, as for a smooth choice).
absl::Status ExtremumGrad(GradientContext& ctx) {
  GraphBuilder& b = ctx.b();
  const Output y = ctx.output(0), dy = ctx.output_grad(0);
  const Output zero = ctx.Scalar(0.0, y), one = ctx.Scalar(1.0, y);
  std::vector<Output> hits(ctx.num_inputs());
  Output count;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    hits[i] = ops::Where(b, ops::Equal(b, ctx.input(i), y), one, zero);
    count = count.valid() ? ops::Add(b, count, hits[i]) : hits[i];
  }
  const Output share = ops::Div(b, dy, count);
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    if (ctx.wants_input_grad(i)) SetSummed(ctx, i, ops::Mul(b, share, hits[i]));
  }
  return absl::OkStatus();
}

absl::Status WhereGrad(GradientContext& ctx) {
  GraphBuilder& b = ctx.b();
  const Output c = ctx.input(0), dy = ctx.output_grad(0), zero = ctx.Scalar(0.0, dy);
  if (ctx.wants_input_grad(1)) SetSummed(ctx, 1, ops::Where(b, c, dy, zero));
  if (ctx.wants_input_grad(2)) SetSummed(ctx, 2, ops::Where(b, c, zero, dy));
  return absl::OkStatus();
}

// y = min(max(x, lo), hi): dx where lo <= x <= hi; dlo where x < lo; dhi where x > hi
// (and lo <= hi: past that the result is hi, as the forward computes it).
absl::Status ClipGrad(GradientContext& ctx) {
  GraphBuilder& b = ctx.b();
  const Output x = ctx.input(0), dy = ctx.output_grad(0), zero = ctx.Scalar(0.0, dy);
  const bool has_lo = ctx.num_inputs() > 1 && ctx.input(1).valid();
  const bool has_hi = ctx.num_inputs() > 2 && ctx.input(2).valid();
  Output below = has_lo ? ops::Less(b, x, ctx.input(1)) : Output();
  Output above = has_hi ? ops::Greater(b, has_lo ? ops::Max(b, x, ctx.input(1)) : x, ctx.input(2)) : Output();
  if (ctx.wants_input_grad(0)) {
    Output dx = dy;
    if (has_lo) dx = ops::Where(b, below, zero, dx);
    if (has_hi) dx = ops::Where(b, above, zero, dx);
    SetSummed(ctx, 0, dx);
  }
  if (has_lo && ctx.wants_input_grad(1)) {
    Output dlo = ops::Where(b, below, dy, zero);
    if (has_hi) dlo = ops::Where(b, above, zero, dlo);
    SetSummed(ctx, 1, dlo);
  }
  if (has_hi && ctx.wants_input_grad(2)) SetSummed(ctx, 2, ops::Where(b, above, dy, zero));
  return absl::OkStatus();
}

absl::Status CastGrad(GradientContext& ctx) {
  ctx.set_input_grad(0, ops::Cast(ctx.b(), ctx.output_grad(0), ctx.input(0).dtype()));
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterElementwiseGradients(OpRegistry& registry) {
  TSR_RETURN_IF_ERROR(SetGradient(registry, "Identity", IdentityGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "Add", AddGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "Sub", SubGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "Mul", MulGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "Div", DivGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "Pow", PowGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "Mod", ModGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "Neg", NegGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "Abs", AbsGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "Exp", ExpGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "Log", LogGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "Sqrt", SqrtGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "Rsqrt", RsqrtGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "Reciprocal", ReciprocalGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "Max", ExtremumGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "Min", ExtremumGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "Where", WhereGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "Clip", ClipGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "Cast", CastGrad));
  return absl::OkStatus();
}

}  // namespace tsr

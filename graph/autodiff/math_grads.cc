// Gradients of the unary math ops of graph/ops/math_ops.cc: the trigonometric and
// hyperbolic functions and their inverses, and the piecewise-constant Floor, Ceil,
// Round and Sign, whose gradient is zero (as in PyTorch and TensorFlow; at their
// jumps there is no derivative, and zero is the one that keeps training defined).
// IsNaN, IsInf and Not have bool inputs or outputs and so no gradient.
#include "graph/autodiff/gradient_context.h"
#include "graph/autodiff/gradient_registry.h"
#include "graph/builder/ops.h"
#include "graph/status_macros.h"

namespace tsr {

namespace {

// Sets dx = dy * slope.
void SetSlope(GradientContext& ctx, Output slope) {
  ctx.set_input_grad(0, ops::Mul(ctx.b(), ctx.output_grad(0), slope));
}

// 1 - x^2, the radicand of asin' and acos' and the denominator of atanh'.
Output OneMinusSquare(GradientContext& ctx) {
  const Output x = ctx.input(0);
  return ops::Sub(ctx.b(), ctx.Scalar(1.0, x), ops::Mul(ctx.b(), x, x));
}

absl::Status SinGrad(GradientContext& ctx) {
  SetSlope(ctx, ops::Cos(ctx.b(), ctx.input(0)));
  return absl::OkStatus();
}

absl::Status CosGrad(GradientContext& ctx) {
  SetSlope(ctx, ops::Neg(ctx.b(), ops::Sin(ctx.b(), ctx.input(0))));
  return absl::OkStatus();
}

// tan' = 1 + tan^2.
absl::Status TanGrad(GradientContext& ctx) {
  const Output y = ctx.output(0);
  SetSlope(ctx, ops::Add(ctx.b(), ctx.Scalar(1.0, y), ops::Mul(ctx.b(), y, y)));
  return absl::OkStatus();
}

// asin' = 1 / sqrt(1 - x^2).
absl::Status AsinGrad(GradientContext& ctx) {
  SetSlope(ctx, ops::Rsqrt(ctx.b(), OneMinusSquare(ctx)));
  return absl::OkStatus();
}

// acos' = -1 / sqrt(1 - x^2).
absl::Status AcosGrad(GradientContext& ctx) {
  SetSlope(ctx, ops::Neg(ctx.b(), ops::Rsqrt(ctx.b(), OneMinusSquare(ctx))));
  return absl::OkStatus();
}

// atan' = 1 / (1 + x^2).
absl::Status AtanGrad(GradientContext& ctx) {
  GraphBuilder& b = ctx.b();
  const Output x = ctx.input(0);
  SetSlope(ctx, ops::Reciprocal(b, ops::Add(b, ctx.Scalar(1.0, x), ops::Mul(b, x, x))));
  return absl::OkStatus();
}

absl::Status SinhGrad(GradientContext& ctx) {
  SetSlope(ctx, ops::Cosh(ctx.b(), ctx.input(0)));
  return absl::OkStatus();
}

absl::Status CoshGrad(GradientContext& ctx) {
  SetSlope(ctx, ops::Sinh(ctx.b(), ctx.input(0)));
  return absl::OkStatus();
}

// asinh' = 1 / sqrt(x^2 + 1).
absl::Status AsinhGrad(GradientContext& ctx) {
  GraphBuilder& b = ctx.b();
  const Output x = ctx.input(0);
  SetSlope(ctx, ops::Rsqrt(b, ops::Add(b, ops::Mul(b, x, x), ctx.Scalar(1.0, x))));
  return absl::OkStatus();
}

// acosh' = 1 / sqrt(x^2 - 1).
absl::Status AcoshGrad(GradientContext& ctx) {
  GraphBuilder& b = ctx.b();
  const Output x = ctx.input(0);
  SetSlope(ctx, ops::Rsqrt(b, ops::Sub(b, ops::Mul(b, x, x), ctx.Scalar(1.0, x))));
  return absl::OkStatus();
}

// atanh' = 1 / (1 - x^2).
absl::Status AtanhGrad(GradientContext& ctx) {
  SetSlope(ctx, ops::Reciprocal(ctx.b(), OneMinusSquare(ctx)));
  return absl::OkStatus();
}

absl::Status ZeroGrad(GradientContext& ctx) {
  ctx.set_input_grad(0, ctx.ZerosLike(ctx.input(0)));
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterMathGradients(OpRegistry& registry) {
  TSR_RETURN_IF_ERROR(SetGradient(registry, "Sin", SinGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "Cos", CosGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "Tan", TanGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "Asin", AsinGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "Acos", AcosGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "Atan", AtanGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "Sinh", SinhGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "Cosh", CoshGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "Asinh", AsinhGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "Acosh", AcoshGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "Atanh", AtanhGrad));
  for (const char* op : {"Floor", "Ceil", "Round", "Sign"}) TSR_RETURN_IF_ERROR(SetGradient(registry, op, ZeroGrad));
  return absl::OkStatus();
}

}  // namespace tsr

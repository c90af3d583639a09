// Gradients of the activation functions, from the forward output where that is
// cheaper (Sigmoid, Tanh, Elu, Selu, Celu) and from the input otherwise.
#include <cmath>

#include "graph/autodiff/gradient_context.h"
#include "graph/autodiff/gradient_registry.h"
#include "graph/builder/ops.h"
#include "graph/status_macros.h"

namespace tsr {

namespace {

// Relu'(0) = 0, as PyTorch and TensorFlow define it.
absl::Status ReluGrad(GradientContext& ctx) {
  GraphBuilder& b = ctx.b();
  const Output x = ctx.input(0), zero = ctx.Scalar(0.0, x);
  ctx.set_input_grad(0, ops::Where(b, ops::Greater(b, x, zero), ctx.output_grad(0), zero));
  return absl::OkStatus();
}

// x if x >= 0 else alpha * x.
absl::Status LeakyReluGrad(GradientContext& ctx) {
  GraphBuilder& b = ctx.b();
  const Output x = ctx.input(0), dy = ctx.output_grad(0);
  const Output scaled = ops::Mul(b, dy, ctx.Scalar(ctx.GetFloat("alpha"), x));
  ctx.set_input_grad(0, ops::Where(b, ops::Less(b, x, ctx.Scalar(0.0, x)), scaled, dy));
  return absl::OkStatus();
}

// s' = s (1 - s).
absl::Status SigmoidGrad(GradientContext& ctx) {
  GraphBuilder& b = ctx.b();
  const Output y = ctx.output(0);
  const Output slope = ops::Mul(b, y, ops::Sub(b, ctx.Scalar(1.0, y), y));
  ctx.set_input_grad(0, ops::Mul(b, ctx.output_grad(0), slope));
  return absl::OkStatus();
}

// tanh' = 1 - tanh^2.
absl::Status TanhGrad(GradientContext& ctx) {
  GraphBuilder& b = ctx.b();
  const Output y = ctx.output(0);
  const Output slope = ops::Sub(b, ctx.Scalar(1.0, y), ops::Mul(b, y, y));
  ctx.set_input_grad(0, ops::Mul(b, ctx.output_grad(0), slope));
  return absl::OkStatus();
}

// erf' = 2 / sqrt(pi) * exp(-x^2).
absl::Status ErfGrad(GradientContext& ctx) {
  GraphBuilder& b = ctx.b();
  const Output x = ctx.input(0);
  const Output gauss = ops::Exp(b, ops::Neg(b, ops::Mul(b, x, x)));
  const Output slope = ops::Mul(b, gauss, ctx.Scalar(2.0 / std::sqrt(M_PI), x));
  ctx.set_input_grad(0, ops::Mul(b, ctx.output_grad(0), slope));
  return absl::OkStatus();
}

// softplus' = sigmoid.
absl::Status SoftplusGrad(GradientContext& ctx) {
  ctx.set_input_grad(0, ops::Mul(ctx.b(), ctx.output_grad(0), ops::Sigmoid(ctx.b(), ctx.input(0))));
  return absl::OkStatus();
}

// y = x s(x): y' = s + y (1 - s).
absl::Status SiluGrad(GradientContext& ctx) {
  GraphBuilder& b = ctx.b();
  const Output x = ctx.input(0), y = ctx.output(0);
  const Output s = ops::Sigmoid(b, x);
  const Output slope = ops::Add(b, s, ops::Mul(b, y, ops::Sub(b, ctx.Scalar(1.0, x), s)));
  ctx.set_input_grad(0, ops::Mul(b, ctx.output_grad(0), slope));
  return absl::OkStatus();
}

// Exact: Phi(x) + x phi(x). Tanh approximation: with u = c (x + k x^3), t = tanh(u):
// 0.5 (1 + t) + 0.5 x (1 - t^2) c (1 + 3 k x^2).
absl::Status GeluGrad(GradientContext& ctx) {
  GraphBuilder& b = ctx.b();
  const Output x = ctx.input(0);
  auto c = [&](double v) { return ctx.Scalar(v, x); };
  Output slope;
  if (ctx.GetString("approximate") == "tanh") {
    constexpr double kK = 0.044715;
    const double root = std::sqrt(2.0 / M_PI);
    const Output x2 = ops::Mul(b, x, x);
    const Output u = ops::Mul(b, c(root), ops::Add(b, x, ops::Mul(b, c(kK), ops::Mul(b, x2, x))));
    const Output t = ops::Tanh(b, u);
    const Output left = ops::Mul(b, c(0.5), ops::Add(b, c(1.0), t));
    const Output du = ops::Mul(b, c(root), ops::Add(b, c(1.0), ops::Mul(b, c(3 * kK), x2)));
    const Output right = ops::Mul(b, ops::Mul(b, c(0.5), x), ops::Mul(b, ops::Sub(b, c(1.0), ops::Mul(b, t, t)), du));
    slope = ops::Add(b, left, right);
  } else {
    const Output cdf = ops::Mul(b, c(0.5), ops::Add(b, c(1.0), ops::Erf(b, ops::Mul(b, x, c(M_SQRT1_2)))));
    const Output pdf = ops::Mul(b, c(1.0 / std::sqrt(2 * M_PI)), ops::Exp(b, ops::Mul(b, c(-0.5), ops::Mul(b, x, x))));
    slope = ops::Add(b, cdf, ops::Mul(b, x, pdf));
  }
  ctx.set_input_grad(0, ops::Mul(b, ctx.output_grad(0), slope));
  return absl::OkStatus();
}

// dx = dy where x >= 0, dy * slope below; dslope = dy * x below 0, summed to the
// slope's shape (it broadcasts to x's).
absl::Status PReluGrad(GradientContext& ctx) {
  GraphBuilder& b = ctx.b();
  const Output x = ctx.input(0), slope = ctx.input(1), dy = ctx.output_grad(0), zero = ctx.Scalar(0.0, x);
  const Output negative = ops::Less(b, x, zero);
  if (ctx.wants_input_grad(0)) ctx.set_input_grad(0, ops::Where(b, negative, ops::Mul(b, dy, slope), dy));
  if (ctx.wants_input_grad(1)) {
    ctx.set_input_grad(1, ctx.SumToShape(ops::Where(b, negative, ops::Mul(b, dy, x), zero), slope.shape()));
  }
  return absl::OkStatus();
}

// Below 0, y = alpha (e^x - 1) has slope alpha e^x = y + alpha.
absl::Status EluGrad(GradientContext& ctx) {
  GraphBuilder& b = ctx.b();
  const Output x = ctx.input(0), y = ctx.output(0), dy = ctx.output_grad(0);
  const Output below = ops::Mul(b, dy, ops::Add(b, y, ctx.Scalar(ctx.GetFloat("alpha"), y)));
  ctx.set_input_grad(0, ops::Where(b, ops::Greater(b, x, ctx.Scalar(0.0, x)), dy, below));
  return absl::OkStatus();
}

// gamma above 0; below, y = gamma alpha (e^x - 1) has slope y + gamma alpha.
absl::Status SeluGrad(GradientContext& ctx) {
  GraphBuilder& b = ctx.b();
  const Output x = ctx.input(0), y = ctx.output(0), dy = ctx.output_grad(0);
  const double alpha = ctx.GetFloat("alpha"), gamma = ctx.GetFloat("gamma");
  const Output above = ops::Mul(b, dy, ctx.Scalar(gamma, y));
  const Output below = ops::Mul(b, dy, ops::Add(b, y, ctx.Scalar(gamma * alpha, y)));
  ctx.set_input_grad(0, ops::Where(b, ops::Greater(b, x, ctx.Scalar(0.0, x)), above, below));
  return absl::OkStatus();
}

// Below 0, y = alpha (e^(x/alpha) - 1) has slope e^(x/alpha) = y / alpha + 1.
absl::Status CeluGrad(GradientContext& ctx) {
  GraphBuilder& b = ctx.b();
  const Output x = ctx.input(0), y = ctx.output(0), dy = ctx.output_grad(0);
  const Output slope = ops::Add(b, ops::Div(b, y, ctx.Scalar(ctx.GetFloat("alpha"), y)), ctx.Scalar(1.0, y));
  ctx.set_input_grad(0, ops::Where(b, ops::Greater(b, x, ctx.Scalar(0.0, x)), dy, ops::Mul(b, dy, slope)));
  return absl::OkStatus();
}

// alpha where 0 < alpha x + beta < 1, 0 where clamped.
absl::Status HardSigmoidGrad(GradientContext& ctx) {
  GraphBuilder& b = ctx.b();
  const Output x = ctx.input(0), dy = ctx.output_grad(0);
  const double alpha = ctx.GetFloat("alpha");
  const Output v = ops::Add(b, ops::Mul(b, x, ctx.Scalar(alpha, x)), ctx.Scalar(ctx.GetFloat("beta"), x));
  const Output inside = ops::And(b, ops::Greater(b, v, ctx.Scalar(0.0, x)), ops::Less(b, v, ctx.Scalar(1.0, x)));
  ctx.set_input_grad(0, ops::Where(b, inside, ops::Mul(b, dy, ctx.Scalar(alpha, x)), ctx.Scalar(0.0, x)));
  return absl::OkStatus();
}

// y = x hardsigmoid(x): 0 below -3, 1 above 3, x / 3 + 1/2 between.
absl::Status HardSwishGrad(GradientContext& ctx) {
  GraphBuilder& b = ctx.b();
  const Output x = ctx.input(0), dy = ctx.output_grad(0);
  const Output middle = ops::Mul(b, dy, ops::Add(b, ops::Div(b, x, ctx.Scalar(3.0, x)), ctx.Scalar(0.5, x)));
  const Output upper = ops::Where(b, ops::Greater(b, x, ctx.Scalar(3.0, x)), dy, middle);
  ctx.set_input_grad(0, ops::Where(b, ops::Less(b, x, ctx.Scalar(-3.0, x)), ctx.Scalar(0.0, x), upper));
  return absl::OkStatus();
}

// softsign' = 1 / (1 + |x|)^2.
absl::Status SoftsignGrad(GradientContext& ctx) {
  GraphBuilder& b = ctx.b();
  const Output x = ctx.input(0);
  const Output d = ops::Add(b, ctx.Scalar(1.0, x), ops::Abs(b, x));
  ctx.set_input_grad(0, ops::Div(b, ctx.output_grad(0), ops::Mul(b, d, d)));
  return absl::OkStatus();
}

absl::Status ThresholdedReluGrad(GradientContext& ctx) {
  GraphBuilder& b = ctx.b();
  const Output x = ctx.input(0);
  const Output above = ops::Greater(b, x, ctx.Scalar(ctx.GetFloat("alpha"), x));
  ctx.set_input_grad(0, ops::Where(b, above, ctx.output_grad(0), ctx.Scalar(0.0, x)));
  return absl::OkStatus();
}

// 1 outside [-lambd, lambd] (the bias only shifts), 0 inside.
absl::Status ShrinkGrad(GradientContext& ctx) {
  GraphBuilder& b = ctx.b();
  const Output x = ctx.input(0);
  const double lambd = ctx.GetFloat("lambd");
  const Output outside = ops::Or(b, ops::Less(b, x, ctx.Scalar(-lambd, x)), ops::Greater(b, x, ctx.Scalar(lambd, x)));
  ctx.set_input_grad(0, ops::Where(b, outside, ctx.output_grad(0), ctx.Scalar(0.0, x)));
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterActivationGradients(OpRegistry& registry) {
  TSR_RETURN_IF_ERROR(SetGradient(registry, "Relu", ReluGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "LeakyRelu", LeakyReluGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "Sigmoid", SigmoidGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "Tanh", TanhGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "Erf", ErfGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "Softplus", SoftplusGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "Silu", SiluGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "Gelu", GeluGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "PRelu", PReluGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "Elu", EluGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "Selu", SeluGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "Celu", CeluGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "HardSigmoid", HardSigmoidGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "HardSwish", HardSwishGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "Softsign", SoftsignGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "ThresholdedRelu", ThresholdedReluGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "Shrink", ShrinkGrad));
  return absl::OkStatus();
}

}  // namespace tsr

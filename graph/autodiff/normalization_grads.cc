// Gradients of BatchNormalization and LayerNormalization.
//
// BatchNormalization, training form (training_mode=1): the statistics are the batch's,
// so dX goes through them — BatchNormalizationGrad(X, dY * scale) (gradient_ops.cc)
// gives dX and the normalized X, from which d scale = sum(dY * normalized) and
// dB = sum(dY) over every dim but the channels. input_mean / input_var only feed the
// running statistics, which carry no gradient here. Inference form: the statistics
// are inputs, and every gradient is a composition of elementwise ops and sums.
//
// LayerNormalization: LayerNormalizationGrad(X, dY * Scale) likewise; Scale and B
// broadcast onto X's trailing dims, so their gradients are summed back to their shapes.
// The Mean and InvStdDev outputs carry no gradient here.
#include <cstdint>
#include <vector>

#include "graph/autodiff/gradient_context.h"
#include "graph/autodiff/gradient_registry.h"
#include "graph/builder/ops.h"
#include "graph/status_macros.h"

namespace tsr {

namespace {

Output As(GraphBuilder& b, Output x, DType dtype) { return x.dtype() == dtype ? x : ops::Cast(b, x, dtype); }

// Error when a gradient reaches one of the statistics outputs [first, num_outputs).
bool StatisticsHaveGradients(GradientContext& ctx, int first) {
  for (int i = first; i < ctx.num_outputs(); ++i) {
    if (ctx.output_grad(i).valid()) {
      ctx.Error("gradients through the statistics outputs are not supported; differentiate output 0 only");
      return true;
    }
  }
  return false;
}

absl::Status BatchNormalizationGrad(GradientContext& ctx) {
  if (StatisticsHaveGradients(ctx, 1)) return absl::OkStatus();
  GraphBuilder& b = ctx.b();
  const Output x = ctx.input(0), scale = ctx.input(1), dy = ctx.output_grad(0);
  const DType t = x.dtype();
  // Per-channel parameters as [C, 1, ...] against X [N, C, ...]; a 1-D X is [N] with
  // one channel, which a [1] parameter already broadcasts against.
  std::vector<int64_t> param_shape = {-1};
  for (int i = 2; i < x.rank(); ++i) param_shape.push_back(1);
  auto per_channel = [&](Output p) {
    p = As(b, p, t);
    return x.rank() <= 1 ? p : ops::Reshape(b, p, param_shape);
  };
  std::vector<int64_t> axes = {0};
  for (int i = 2; i < x.rank(); ++i) axes.push_back(i);
  // Sum over every dim but the channels, in the dtype and shape of parameter `i`.
  auto channel_sum = [&](Output v, int i) {
    return ctx.ReshapeTo(As(b, ops::ReduceSum(b, v, axes, /*keepdims=*/false), ctx.input(i).dtype()),
                         ctx.input(i).shape());
  };
  const double epsilon = ctx.GetFloat("epsilon");
  if (ctx.GetInt("training_mode") == 1) {
    std::vector<Output> grads = b.Op("BatchNormalizationGrad", {x, ops::Mul(b, dy, per_channel(scale))},
                                     {{"epsilon", AttrValue::Float(epsilon)}});
    if (!b.ok()) return absl::OkStatus();
    if (ctx.wants_input_grad(0)) ctx.set_input_grad(0, grads[0]);
    if (ctx.wants_input_grad(1)) ctx.set_input_grad(1, channel_sum(ops::Mul(b, dy, grads[1]), 1));
    if (ctx.wants_input_grad(2)) ctx.set_input_grad(2, channel_sum(dy, 2));
    return absl::OkStatus();
  }
  // Y = scale * (X - mean) * inv + B with inv = (var + epsilon)^(-1/2).
  const Output mean = per_channel(ctx.input(3));
  const Output inv = ops::Rsqrt(b, ops::Add(b, per_channel(ctx.input(4)), ctx.Scalar(epsilon, x)));
  const Output s = per_channel(scale);
  const Output centered = ops::Sub(b, x, mean);
  if (ctx.wants_input_grad(0)) ctx.set_input_grad(0, ops::Mul(b, dy, ops::Mul(b, s, inv)));
  if (ctx.wants_input_grad(1)) ctx.set_input_grad(1, channel_sum(ops::Mul(b, dy, ops::Mul(b, centered, inv)), 1));
  if (ctx.wants_input_grad(2)) ctx.set_input_grad(2, channel_sum(dy, 2));
  // d mean = -sum(dY) * scale * inv; d var = sum(dY * (X - mean)) * scale * (-1/2) inv^3.
  if (ctx.wants_input_grad(3)) {
    ctx.set_input_grad(3, channel_sum(ops::Mul(b, dy, ops::Neg(b, ops::Mul(b, s, inv))), 3));
  }
  if (ctx.wants_input_grad(4)) {
    const Output inv3 = ops::Mul(b, inv, ops::Mul(b, inv, inv));
    const Output factor = ops::Mul(b, ops::Mul(b, s, inv3), ctx.Scalar(-0.5, x));
    ctx.set_input_grad(4, channel_sum(ops::Mul(b, ops::Mul(b, dy, centered), factor), 4));
  }
  return absl::OkStatus();
}

absl::Status LayerNormalizationGrad(GradientContext& ctx) {
  if (StatisticsHaveGradients(ctx, 1)) return absl::OkStatus();
  GraphBuilder& b = ctx.b();
  const Output x = ctx.input(0), scale = ctx.input(1), dy = ctx.output_grad(0);
  std::vector<Output> grads =
      b.Op("LayerNormalizationGrad", {x, ops::Mul(b, dy, scale)},
           {{"axis", AttrValue::Int(ctx.GetInt("axis"))}, {"epsilon", AttrValue::Float(ctx.GetFloat("epsilon"))}});
  if (!b.ok()) return absl::OkStatus();
  if (ctx.wants_input_grad(0)) ctx.set_input_grad(0, grads[0]);
  if (ctx.wants_input_grad(1)) ctx.set_input_grad(1, ctx.SumToShape(ops::Mul(b, dy, grads[1]), scale.shape()));
  if (ctx.num_inputs() > 2 && ctx.wants_input_grad(2)) {
    ctx.set_input_grad(2, ctx.SumToShape(dy, ctx.input(2).shape()));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterNormalizationGradients(OpRegistry& registry) {
  TSR_RETURN_IF_ERROR(SetGradient(registry, "BatchNormalization", BatchNormalizationGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "LayerNormalization", LayerNormalizationGrad));
  return absl::OkStatus();
}

}  // namespace tsr

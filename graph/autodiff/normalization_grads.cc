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
//
// InstanceNormalization is a LayerNormalization over axes 2.. with per-channel
// parameters: LayerNormalizationGrad(X, dY * scale, axis=2). MeanVarianceNormalization
// and LRN are compositions of elementwise ops and sums (formulas at each function).
// Hardmax is piecewise constant: its gradient is zero.
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

// Per-channel [C] parameter `p` as [C, 1, ...] against x [N, C, D...].
Output PerChannel(GraphBuilder& b, Output p, const Output& x) {
  std::vector<int64_t> shape = {-1};
  for (int i = 2; i < x.rank(); ++i) shape.push_back(1);
  return ops::Reshape(b, p, shape);
}

absl::Status InstanceNormalizationGrad(GradientContext& ctx) {
  GraphBuilder& b = ctx.b();
  const Output x = ctx.input(0), dy = ctx.output_grad(0);
  std::vector<Output> grads =
      b.Op("LayerNormalizationGrad", {x, ops::Mul(b, dy, PerChannel(b, ctx.input(1), x))},
           {{"axis", AttrValue::Int(2)}, {"epsilon", AttrValue::Float(ctx.GetFloat("epsilon"))}});
  if (!b.ok()) return absl::OkStatus();
  std::vector<int64_t> axes = {0};
  for (int i = 2; i < x.rank(); ++i) axes.push_back(i);
  if (ctx.wants_input_grad(0)) ctx.set_input_grad(0, grads[0]);
  if (ctx.wants_input_grad(1)) {
    ctx.set_input_grad(1, ops::ReduceSum(b, ops::Mul(b, dy, grads[1]), axes, /*keepdims=*/false));
  }
  if (ctx.wants_input_grad(2)) ctx.set_input_grad(2, ops::ReduceSum(b, dy, axes, /*keepdims=*/false));
  return absl::OkStatus();
}

// y = u / d with u = x - mean(x), s = sqrt(mean(u^2)), d = s + 1e-9 (over `axes`):
// dx = (dy - mean(dy)) / d - u mean(dy u) / (s d^2); the second term is 0 where s = 0
// (then u = 0 too).
absl::Status MeanVarianceNormalizationGrad(GradientContext& ctx) {
  GraphBuilder& b = ctx.b();
  const Output x = ctx.input(0), dy = ctx.output_grad(0);
  const std::vector<int64_t> axes = ctx.GetInts("axes");
  auto mean = [&](Output v) { return ops::ReduceMean(b, v, axes, /*keepdims=*/true); };
  const Output u = ops::Sub(b, x, mean(x));
  const Output s = ops::Sqrt(b, mean(ops::Mul(b, u, u)));
  const Output d = ops::Add(b, s, ctx.Scalar(1e-9, x));
  const Output zero = ctx.Scalar(0.0, x);
  const Output first = ops::Div(b, ops::Sub(b, dy, mean(dy)), d);
  const Output denominator = ops::Mul(b, s, ops::Mul(b, d, d));
  const Output safe = ops::Where(b, ops::Equal(b, s, zero), ctx.Scalar(1.0, x), denominator);
  const Output factor = ops::Where(b, ops::Equal(b, s, zero), zero, ops::Div(b, mean(ops::Mul(b, dy, u)), safe));
  ctx.set_input_grad(0, ops::Sub(b, first, ops::Mul(b, u, factor)));
  return absl::OkStatus();
}

// The sum of v over channels [c - before, c + after] (clipped), for each channel c of
// v [N, C, D...]: v padded with zeros along axis 1, then one slice per offset.
Output ChannelWindowSum(GraphBuilder& b, Output v, int64_t before, int64_t after) {
  const int rank = v.rank();
  const int64_t channels = v.shape().dim(1);
  std::vector<int64_t> pads(2 * rank, 0);
  pads[1] = before;
  pads[rank + 1] = after;
  const Output padded = ops::Pad(b, v, pads);
  Output sum;
  for (int64_t k = 0; k <= before + after; ++k) {
    const Output part = ops::Slice(b, padded, {k}, {k + channels}, {1});
    sum = sum.valid() ? ops::Add(b, sum, part) : part;
  }
  return sum;
}

// y = x D^-beta with D = bias + alpha / size * W(x^2), W the window sum over channels
// [c - before, c + after]: dx = dy D^-beta - 2 x (alpha beta / size) W'(dy x D^(-beta-1)),
// where W' (the transposed window) sums over [c - after, c + before].
absl::Status LRNGrad(GradientContext& ctx) {
  GraphBuilder& b = ctx.b();
  const Output x = ctx.input(0), dy = ctx.output_grad(0);
  if (x.shape().dim(1) == kBatchDim) {
    ctx.Error("the channel dimension (axis 1) of X must be static");
    return absl::OkStatus();
  }
  const int64_t size = ctx.GetInt("size");
  const int64_t before = (size - 1) / 2, after = size - 1 - before;
  const double alpha = ctx.GetFloat("alpha"), beta = ctx.GetFloat("beta");
  const double k = alpha / static_cast<double>(size);
  const Output d = ops::Add(b, ctx.Scalar(ctx.GetFloat("bias"), x),
                            ops::Mul(b, ctx.Scalar(k, x), ChannelWindowSum(b, ops::Mul(b, x, x), before, after)));
  const Output direct = ops::Mul(b, dy, ops::Pow(b, d, ctx.Scalar(-beta, x)));
  const Output inner = ops::Mul(b, ops::Mul(b, dy, x), ops::Pow(b, d, ctx.Scalar(-beta - 1, x)));
  const Output spread = ops::Mul(b, ChannelWindowSum(b, inner, after, before), ctx.Scalar(2 * k * beta, x));
  ctx.set_input_grad(0, ops::Sub(b, direct, ops::Mul(b, x, spread)));
  return absl::OkStatus();
}

absl::Status HardmaxGrad(GradientContext& ctx) {
  ctx.set_input_grad(0, ctx.ZerosLike(ctx.input(0)));
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterNormalizationGradients(OpRegistry& registry) {
  TSR_RETURN_IF_ERROR(SetGradient(registry, "BatchNormalization", BatchNormalizationGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "LayerNormalization", LayerNormalizationGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "InstanceNormalization", InstanceNormalizationGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "MeanVarianceNormalization", MeanVarianceNormalizationGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "LRN", LRNGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "Hardmax", HardmaxGrad));
  return absl::OkStatus();
}

}  // namespace tsr

// Gradients of Softmax, LogSoftmax, SoftmaxCrossEntropyLoss and
// NegativeLogLikelihoodLoss (ONNX semantics: class axis 1, optional class weights,
// ignore_index, reductions none/sum/mean).
#include <cstdint>
#include <vector>

#include "graph/autodiff/gradient_context.h"
#include "graph/autodiff/gradient_registry.h"
#include "graph/builder/ops.h"
#include "graph/status_macros.h"

namespace tsr {

namespace {

// dx = y * (dy - sum(dy * y)) along the axis.
absl::Status SoftmaxGrad(GradientContext& ctx) {
  GraphBuilder& b = ctx.b();
  const Output y = ctx.output(0), dy = ctx.output_grad(0);
  const std::vector<int64_t> axis = {ctx.GetInt("axis")};
  const Output dot = ops::ReduceSum(b, ops::Mul(b, dy, y), axis, /*keepdims=*/true);
  ctx.set_input_grad(0, ops::Mul(b, y, ops::Sub(b, dy, dot)));
  return absl::OkStatus();
}

// dx = dy - softmax(x) * sum(dy) along the axis.
Output LogSoftmaxInputGrad(GraphBuilder& b, Output dy, Output softmax, int64_t axis) {
  const Output total = ops::ReduceSum(b, dy, std::vector<int64_t>{axis}, /*keepdims=*/true);
  return ops::Sub(b, dy, ops::Mul(b, softmax, total));
}

absl::Status LogSoftmaxGrad(GradientContext& ctx) {
  GraphBuilder& b = ctx.b();
  const Output softmax = ops::Exp(b, ctx.output(0));
  ctx.set_input_grad(0, LogSoftmaxInputGrad(b, ctx.output_grad(0), softmax, ctx.GetInt("axis")));
  return absl::OkStatus();
}

// loss_i = -w_i log p_i[label_i] with w_i = weights[label_i] (1 without weights; 0
// for an ignored label). d loss_i / d scores_i = w_i (p_i - onehot(label_i)); the
// reduction scales it by dy (none: per sample; sum: one scalar; mean: dy / sum(w)).
//
// Both losses share the per-sample factor: LabelTermGrad gives {w_i * scale_i
// unsqueezed at axis 1, onehot(label_i)} (invalid Outputs without a loss gradient).
struct LabelTerm {
  Output per_sample;  // [N, 1, D1...]
  Output onehot;      // [N, C, D1...]
};

LabelTerm LabelTermGrad(GradientContext& ctx, int64_t classes) {
  GraphBuilder& b = ctx.b();
  const Output scores = ctx.input(0), labels = ctx.input(1);
  const bool has_weights = ctx.num_inputs() > 2 && ctx.input(2).valid();
  LabelTerm term;
  if (ctx.output_grad(0).valid()) {
    Output safe_labels = labels;
    Output weight;  // per sample, in the scores' dtype; none: 1
    if (ctx.has_attr("ignore_index")) {
      const Output ignored = ops::Equal(b, labels, ops::Scalar(b, ctx.GetInt("ignore_index"), labels.dtype()));
      safe_labels = ops::Where(b, ignored, ops::Scalar(b, 0.0, labels.dtype()), labels);
      weight = ops::Where(b, ignored, ctx.Scalar(0.0, scores), ctx.Scalar(1.0, scores));
    }
    if (has_weights) {
      const Output gathered = ops::Gather(b, ctx.input(2), safe_labels);
      weight = weight.valid() ? ops::Mul(b, weight, gathered) : gathered;
    }
    const std::string reduction = ctx.GetString("reduction");
    Output scale = ctx.output_grad(0);  // per sample ("none") or a scalar
    if (reduction == "mean") {
      std::vector<int64_t> all(labels.rank());
      for (int i = 0; i < labels.rank(); ++i) all[i] = i;
      const Output total = weight.valid() ? ops::ReduceSum(b, weight, all, /*keepdims=*/false)
                                          : ctx.CountOf(labels, all, scores.dtype());
      scale = ops::Div(b, scale, total);
    }
    Output per_sample = weight.valid() ? ops::Mul(b, weight, scale) : ctx.BroadcastLike(scale, labels);
    term.onehot = ops::OneHot(b, safe_labels, classes, {.dtype = scores.dtype(), .axis = 1});
    term.per_sample = ops::Unsqueeze(b, per_sample, std::vector<int64_t>{1});
  }
  if (has_weights && ctx.wants_input_grad(2)) {
    ctx.Error("gradients with respect to the class weights are not supported; make them a constant");
  }
  return term;
}

absl::Status SoftmaxCrossEntropyLossGrad(GradientContext& ctx) {
  GraphBuilder& b = ctx.b();
  const Output scores = ctx.input(0);
  const int64_t classes = scores.shape().dim(1);
  if (classes == kBatchDim) {
    ctx.Error("the class dimension (axis 1) of the scores must be static");
    return absl::OkStatus();
  }
  const Output probs = ops::Softmax(b, scores, 1);
  Output grad;
  const LabelTerm term = LabelTermGrad(ctx, classes);
  if (term.per_sample.valid()) grad = ops::Mul(b, ops::Sub(b, probs, term.onehot), term.per_sample);
  if (ctx.num_outputs() > 1 && ctx.output_grad(1).valid()) {
    const Output from_log_prob = LogSoftmaxInputGrad(b, ctx.output_grad(1), probs, 1);
    grad = grad.valid() ? ops::Add(b, grad, from_log_prob) : from_log_prob;
  }
  ctx.set_input_grad(0, grad);
  return absl::OkStatus();
}

// loss_i = -w_i input_i[label_i]: d loss_i / d input_i = -w_i onehot(label_i).
absl::Status NegativeLogLikelihoodLossGrad(GradientContext& ctx) {
  const int64_t classes = ctx.input(0).shape().dim(1);
  if (classes == kBatchDim) {
    ctx.Error("the class dimension (axis 1) of the input must be static");
    return absl::OkStatus();
  }
  const LabelTerm term = LabelTermGrad(ctx, classes);
  if (term.per_sample.valid()) {
    ctx.set_input_grad(0, ops::Neg(ctx.b(), ops::Mul(ctx.b(), term.onehot, term.per_sample)));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterSoftmaxGradients(OpRegistry& registry) {
  TSR_RETURN_IF_ERROR(SetGradient(registry, "Softmax", SoftmaxGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "LogSoftmax", LogSoftmaxGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "SoftmaxCrossEntropyLoss", SoftmaxCrossEntropyLossGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "NegativeLogLikelihoodLoss", NegativeLogLikelihoodLossGrad));
  return absl::OkStatus();
}

}  // namespace tsr

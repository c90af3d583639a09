// Gradient of Dropout: through the mask the forward draw produced (its output 1),
//   dX = dY * mask / (1 - ratio)  in training, dX = dY otherwise,
// so the gradient sees exactly the elements the forward kept. When training_mode is
// not a constant the scale is chosen at run time.
#include "graph/autodiff/gradient_context.h"
#include "graph/autodiff/gradient_registry.h"
#include "graph/builder/ops.h"
#include "graph/status_macros.h"

namespace tsr {

namespace {

absl::Status DropoutGrad(GradientContext& ctx) {
  GraphBuilder& b = ctx.b();
  const Output x = ctx.input(0), dy = ctx.output_grad(0);
  if (!dy.valid()) return absl::OkStatus();
  const Output training = ctx.num_inputs() > 2 ? ctx.input(2) : Output();
  const Tensor* training_value = training.valid() ? b.graph().ConstantValue(training.ref()) : nullptr;
  if (!training.valid() || (training_value != nullptr && !training_value->data<bool>()[0])) {
    ctx.set_input_grad(0, dy);  // the identity outside training
    return absl::OkStatus();
  }
  const Output ratio =
      ctx.num_inputs() > 1 && ctx.input(1).valid() ? ops::Cast(b, ctx.input(1), x.dtype()) : ctx.Scalar(0.5, x);
  Output scale = ops::Reciprocal(b, ops::Sub(b, ctx.Scalar(1.0, x), ratio));
  if (training_value == nullptr) scale = ops::Where(b, training, scale, ctx.Scalar(1.0, x));
  const Output kept = ops::Mul(b, dy, scale);
  ctx.set_input_grad(0, ops::Where(b, ctx.output(1), kept, ctx.Scalar(0.0, x)));
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterRandomGradients(OpRegistry& registry) {
  TSR_RETURN_IF_ERROR(SetGradient(registry, "Dropout", DropoutGrad));
  return absl::OkStatus();
}

}  // namespace tsr

// Optimizer ops: one step of a first-order method on one parameter. Each reads the
// parameter (a Variable) and its slot Variables and returns their new values, which
// replace the Variables once the node ran (OpDef::variable_updates) — never in
// place, so every reader in the same run sees the values from before the step.
//
// Conventions follow PyTorch's torch.optim (so results can be compared with it):
//   SGDUpdate:      g' = g + wd p;                      p -= lr g'
//   MomentumUpdate: g' = g + wd p; v = mu v + g';      p -= lr (nesterov ? g' + mu v : v)
//   AdamUpdate:     t = step + 1; (wd: g += wd p, or with decoupled_weight_decay p -= lr wd p — AdamW)
//                   m = b1 m + (1-b1) g; v = b2 v + (1-b2) g^2;
//                   p -= lr (m / (1-b1^t)) / (sqrt(v / (1-b2^t)) + eps)
//   RMSPropUpdate:  g' = g + wd p; s = rho s + (1-rho) g'^2; p -= lr g' / (sqrt(s) + eps)
//   Increment:      n + 1 (the global step counter)
//   Assign:         value (e.g. BatchNormalization's updated running statistics)
// The learning rate is a scalar input (fed per step, so any schedule works); Adam's
// `step` input is the number of steps taken before this one.
#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "graph/op_registry.h"
#include "graph/ops/op_helpers.h"
#include "graph/ops/register_ops.h"
#include "graph/status_macros.h"

namespace tsr {

namespace {

// Inputs [0, num_state) are the parameter and its slots, all of the parameter's type;
// then the gradient (same type); then the scalar learning rate; Adam adds the
// integer scalar step.
absl::Status InferUpdate(InferenceContext& ctx, int num_state, bool has_step) {
  const TensorType& param = ctx.input(0);
  const int grad = num_state;
  for (int i = 1; i <= grad; ++i) {
    if (ctx.input(i) != param) {
      return ctx.Error(absl::StrCat("input ", i, " ('", ctx.op_def().inputs[i].name, "') is ", ctx.input(i).ToString(),
                                    " but the parameter is ", param.ToString(), "; they must match"));
    }
  }
  if (ctx.input_shape(grad + 1).rank() != 0) {
    return ctx.Error(absl::StrCat("input ", grad + 1, " ('lr') has shape ", ctx.input_shape(grad + 1).ToString(),
                                  " but a scalar is required"));
  }
  if (has_step && ctx.input_shape(grad + 2).rank() != 0) {
    return ctx.Error(absl::StrCat("input ", grad + 2, " ('step') has shape ", ctx.input_shape(grad + 2).ToString(),
                                  " but a scalar is required"));
  }
  for (int i = 0; i < num_state; ++i) ctx.set_output(i, param);
  return absl::OkStatus();
}

absl::Status CheckNonNegative(InferenceContext& ctx, absl::string_view attr) {
  const double v = ctx.GetFloat(attr);
  if (!(v >= 0)) return ctx.Error(absl::StrCat("attribute '", attr, "' is ", v, " but must be >= 0"));
  return absl::OkStatus();
}

absl::Status CheckUnitInterval(InferenceContext& ctx, absl::string_view attr) {
  const double v = ctx.GetFloat(attr);
  if (!(v >= 0 && v < 1)) return ctx.Error(absl::StrCat("attribute '", attr, "' is ", v, " but must be in [0, 1)"));
  return absl::OkStatus();
}

absl::Status InferSgd(InferenceContext& ctx) {
  TSR_RETURN_IF_ERROR(CheckNonNegative(ctx, "weight_decay"));
  return InferUpdate(ctx, 1, false);
}

absl::Status InferMomentum(InferenceContext& ctx) {
  TSR_RETURN_IF_ERROR(CheckNonNegative(ctx, "weight_decay"));
  TSR_RETURN_IF_ERROR(CheckUnitInterval(ctx, "momentum"));
  TSR_RETURN_IF_ERROR(CheckFlagAttr(ctx, "nesterov"));
  return InferUpdate(ctx, 2, false);
}

absl::Status InferAdam(InferenceContext& ctx) {
  TSR_RETURN_IF_ERROR(CheckNonNegative(ctx, "weight_decay"));
  TSR_RETURN_IF_ERROR(CheckUnitInterval(ctx, "beta1"));
  TSR_RETURN_IF_ERROR(CheckUnitInterval(ctx, "beta2"));
  TSR_RETURN_IF_ERROR(CheckNonNegative(ctx, "epsilon"));
  TSR_RETURN_IF_ERROR(CheckFlagAttr(ctx, "decoupled_weight_decay"));
  return InferUpdate(ctx, 3, true);
}

absl::Status InferRmsProp(InferenceContext& ctx) {
  TSR_RETURN_IF_ERROR(CheckNonNegative(ctx, "weight_decay"));
  TSR_RETURN_IF_ERROR(CheckUnitInterval(ctx, "rho"));
  TSR_RETURN_IF_ERROR(CheckNonNegative(ctx, "epsilon"));
  return InferUpdate(ctx, 2, false);
}

absl::Status InferIncrement(InferenceContext& ctx) {
  if (ctx.input_shape(0).rank() != 0) {
    return ctx.Error(absl::StrCat("input 0 has shape ", ctx.input_shape(0).ToString(), " but a scalar is required"));
  }
  ctx.set_output(0, ctx.input(0));
  return absl::OkStatus();
}

absl::Status InferAssign(InferenceContext& ctx) {
  if (ctx.input(1) != ctx.input(0)) {
    return ctx.Error(absl::StrCat("input 1 ('value') is ", ctx.input(1).ToString(), " but the variable is ",
                                  ctx.input(0).ToString(), "; they must match"));
  }
  ctx.set_output(0, ctx.input(0));
  return absl::OkStatus();
}

// Elements of the parameter times a small per-method cost.
FlopsFn UpdateFlops(int64_t per_element) {
  return [per_element](const InferenceContext& ctx) { return per_element * OutputElements(ctx); };
}

}  // namespace

absl::Status RegisterOptimizerOps(OpRegistry& registry) {
  TSR_RETURN_IF_ERROR(registry.Register(OpDefBuilder("SGDUpdate")
                                            .Summary("p - lr * (grad + weight_decay * p).")
                                            .Input("param", "T")
                                            .Input("grad", "T")
                                            .Input("lr", "T")
                                            .Output("new_param", "T")
                                            .UpdatesVariable(0)
                                            .TypeConstraint("T", kFloatDTypes)
                                            .Attr("weight_decay", AttrType::kFloat, AttrValue::Float(0.0))
                                            .Infer(InferSgd)
                                            .Flops(UpdateFlops(3))
                                            .Build()));
  TSR_RETURN_IF_ERROR(registry.Register(OpDefBuilder("MomentumUpdate")
                                            .Summary("SGD with (Nesterov) momentum, PyTorch's convention.")
                                            .Input("param", "T")
                                            .Input("velocity", "T")
                                            .Input("grad", "T")
                                            .Input("lr", "T")
                                            .Output("new_param", "T")
                                            .Output("new_velocity", "T")
                                            .UpdatesVariable(0)
                                            .UpdatesVariable(1)
                                            .TypeConstraint("T", kFloatDTypes)
                                            .Attr("momentum", AttrType::kFloat, AttrValue::Float(0.9))
                                            .Attr("nesterov", AttrType::kInt, AttrValue::Int(0))
                                            .Attr("weight_decay", AttrType::kFloat, AttrValue::Float(0.0))
                                            .Infer(InferMomentum)
                                            .Flops(UpdateFlops(5))
                                            .Build()));
  TSR_RETURN_IF_ERROR(registry.Register(OpDefBuilder("AdamUpdate")
                                            .Summary("Adam (AdamW with decoupled_weight_decay), bias-corrected.")
                                            .Input("param", "T")
                                            .Input("m", "T")
                                            .Input("v", "T")
                                            .Input("grad", "T")
                                            .Input("lr", "T")
                                            .Input("step", "Tstep")
                                            .Output("new_param", "T")
                                            .Output("new_m", "T")
                                            .Output("new_v", "T")
                                            .UpdatesVariable(0)
                                            .UpdatesVariable(1)
                                            .UpdatesVariable(2)
                                            .TypeConstraint("T", kFloatDTypes)
                                            .TypeConstraint("Tstep", kIndexDTypes)
                                            .Attr("beta1", AttrType::kFloat, AttrValue::Float(0.9))
                                            .Attr("beta2", AttrType::kFloat, AttrValue::Float(0.999))
                                            .Attr("epsilon", AttrType::kFloat, AttrValue::Float(1e-8))
                                            .Attr("weight_decay", AttrType::kFloat, AttrValue::Float(0.0))
                                            .Attr("decoupled_weight_decay", AttrType::kInt, AttrValue::Int(0))
                                            .Infer(InferAdam)
                                            .Flops(UpdateFlops(12))
                                            .Build()));
  TSR_RETURN_IF_ERROR(registry.Register(OpDefBuilder("RMSPropUpdate")
                                            .Summary("RMSProp, PyTorch's convention (epsilon outside the sqrt).")
                                            .Input("param", "T")
                                            .Input("mean_square", "T")
                                            .Input("grad", "T")
                                            .Input("lr", "T")
                                            .Output("new_param", "T")
                                            .Output("new_mean_square", "T")
                                            .UpdatesVariable(0)
                                            .UpdatesVariable(1)
                                            .TypeConstraint("T", kFloatDTypes)
                                            .Attr("rho", AttrType::kFloat, AttrValue::Float(0.99))
                                            .Attr("epsilon", AttrType::kFloat, AttrValue::Float(1e-8))
                                            .Attr("weight_decay", AttrType::kFloat, AttrValue::Float(0.0))
                                            .Infer(InferRmsProp)
                                            .Flops(UpdateFlops(7))
                                            .Build()));
  TSR_RETURN_IF_ERROR(registry.Register(OpDefBuilder("Assign")
                                            .Summary("Gives the Variable at input 0 the value of input 1.")
                                            .Input("variable", "T")
                                            .Input("value", "T")
                                            .Output("new_value", "T")
                                            .UpdatesVariable(0)
                                            .TypeConstraint("T", kAllDTypes)
                                            .Infer(InferAssign)
                                            .Build()));
  TSR_RETURN_IF_ERROR(registry.Register(OpDefBuilder("Increment")
                                            .Summary("n + 1: advances a step counter Variable.")
                                            .Input("count", "T")
                                            .Output("new_count", "T")
                                            .UpdatesVariable(0)
                                            .TypeConstraint("T", kIndexDTypes)
                                            .Infer(InferIncrement)
                                            .Build()));
  return absl::OkStatus();
}

}  // namespace tsr

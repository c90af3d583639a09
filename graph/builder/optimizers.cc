// Minimize: gradients, global-norm clipping, slot Variables, update ops, step counter.
#include "graph/builder/optimizers.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "graph/autodiff/gradients.h"
#include "graph/builder/ops.h"

namespace tsr {

namespace {

struct Method {
  const char* op;
  std::vector<const char*> slots;
};

Method MethodOf(OptimizerKind kind) {
  switch (kind) {
    case OptimizerKind::kSgd:
      return {"SGDUpdate", {}};
    case OptimizerKind::kMomentum:
    case OptimizerKind::kNesterov:
      return {"MomentumUpdate", {"momentum"}};
    case OptimizerKind::kAdam:
    case OptimizerKind::kAdamW:
      return {"AdamUpdate", {"adam_m", "adam_v"}};
    case OptimizerKind::kRmsProp:
      return {"RMSPropUpdate", {"rms"}};
  }
  return {"SGDUpdate", {}};
}

AttrMap MethodAttrs(const OptimizerOptions& o) {
  AttrMap attrs = {{"weight_decay", AttrValue::Float(o.weight_decay)}};
  switch (o.kind) {
    case OptimizerKind::kSgd:
      break;
    case OptimizerKind::kMomentum:
    case OptimizerKind::kNesterov:
      attrs["momentum"] = AttrValue::Float(o.momentum);
      attrs["nesterov"] = AttrValue::Int(o.kind == OptimizerKind::kNesterov ? 1 : 0);
      break;
    case OptimizerKind::kAdam:
    case OptimizerKind::kAdamW:
      attrs["beta1"] = AttrValue::Float(o.beta1);
      attrs["beta2"] = AttrValue::Float(o.beta2);
      attrs["epsilon"] = AttrValue::Float(o.epsilon);
      attrs["decoupled_weight_decay"] = AttrValue::Int(o.kind == OptimizerKind::kAdamW ? 1 : 0);
      break;
    case OptimizerKind::kRmsProp:
      attrs["rho"] = AttrValue::Float(o.rho);
      attrs["epsilon"] = AttrValue::Float(o.epsilon);
      break;
  }
  return attrs;
}

constexpr std::pair<OptimizerKind, absl::string_view> kNames[] = {
    {OptimizerKind::kSgd, "sgd"},   {OptimizerKind::kMomentum, "momentum"}, {OptimizerKind::kNesterov, "nesterov"},
    {OptimizerKind::kAdam, "adam"}, {OptimizerKind::kAdamW, "adamw"},       {OptimizerKind::kRmsProp, "rmsprop"},
};

}  // namespace

absl::string_view OptimizerName(OptimizerKind kind) {
  for (const auto& [k, name] : kNames) {
    if (k == kind) return name;
  }
  return "unknown";
}

absl::StatusOr<OptimizerKind> ParseOptimizerKind(absl::string_view name) {
  const std::string lower = absl::AsciiStrToLower(name);
  for (const auto& [k, n] : kNames) {
    if (n == lower) return k;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown optimizer '", name, "' (known: sgd, momentum, nesterov, adam, adamw, rmsprop)"));
}

std::vector<Output> TrainableVariables(GraphBuilder& b) {
  std::vector<Output> params;
  for (const Node* node : b.graph().nodes()) {
    if (node->op() != "Variable" || node->num_outputs() != 1 || !IsFloating(node->output_type(0).dtype)) continue;
    const AttrValue* trainable = node->FindAttr("trainable");
    if (trainable != nullptr && trainable->type() == AttrType::kBool && !trainable->b()) continue;
    params.push_back(b.Wrap(node->output(0)));
  }
  return params;
}

TrainingOps Minimize(GraphBuilder& b, Output loss, const std::vector<Output>& params, const OptimizerOptions& options) {
  TrainingOps train;
  if (!b.ok()) return train;
  for (const Output& p : params) {
    if (!p.valid() || p.node() == nullptr || p.node()->op() != "Variable") {
      b.RecordError(absl::InvalidArgumentError(
          absl::StrCat("Minimize: parameter '", p.name(), "' is not a Variable; only Variables can be trained")));
      return train;
    }
  }
  if (params.empty()) {
    b.RecordError(absl::InvalidArgumentError("Minimize: there are no parameters to train"));
    return train;
  }
  if (options.clip_global_norm.has_value() && !(*options.clip_global_norm > 0)) {
    b.RecordError(absl::InvalidArgumentError(
        absl::StrCat("Minimize: clip_global_norm is ", *options.clip_global_norm, " but must be > 0")));
    return train;
  }
  train.gradients = Gradients(b, loss, params);
  if (!b.ok()) return train;
  const DType dtype = loss.dtype();
  train.learning_rate = b.Input("learning_rate", dtype, Shape({}));
  // State first, at the caller's scope: "global_step" and "<parameter>/<slot>".
  const Output step = ops::Variable(b, "global_step", DType::kI64, Shape({}), {.trainable = false});
  const Method method = MethodOf(options.kind);
  std::vector<std::vector<Output>> slots(params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    const Output& p = params[i];
    for (const char* slot : method.slots) {
      slots[i].push_back(
          ops::Variable(b, absl::StrCat(p.node()->name(), "/", slot), p.dtype(), p.shape(), {.trainable = false}));
    }
  }
  auto scope = b.Scope("optimizer");

  // Global norm over all gradients, computed in the loss's dtype.
  Output sum_squares;
  for (const Output& g : train.gradients) {
    Output s = ops::ReduceSum(b, ops::Mul(b, g, g), std::vector<int64_t>{}, /*keepdims=*/false);
    if (s.dtype() != dtype) s = ops::Cast(b, s, dtype);
    sum_squares = sum_squares.valid() ? ops::Add(b, sum_squares, s) : s;
  }
  train.global_norm = ops::Sqrt(b, sum_squares, "global_norm");
  std::vector<Output> grads = train.gradients;
  if (options.clip_global_norm.has_value()) {
    const Output clip = ops::Scalar(b, *options.clip_global_norm, dtype);
    const Output scale = ops::Div(b, clip, ops::Max(b, train.global_norm, clip), "clip_scale");
    for (Output& g : grads) g = ops::Mul(b, g, g.dtype() == dtype ? scale : ops::Cast(b, scale, g.dtype()));
  }

  const AttrMap attrs = MethodAttrs(options);
  for (size_t i = 0; i < params.size(); ++i) {
    const Output& p = params[i];
    const std::string& name = p.node()->name();
    std::vector<Output> inputs = {p};
    inputs.insert(inputs.end(), slots[i].begin(), slots[i].end());
    inputs.push_back(grads[i]);
    inputs.push_back(p.dtype() == dtype ? train.learning_rate : ops::Cast(b, train.learning_rate, p.dtype()));
    if (options.kind == OptimizerKind::kAdam || options.kind == OptimizerKind::kAdamW) inputs.push_back(step);
    std::vector<Output> updated = b.Op(method.op, inputs, attrs, absl::StrCat("update/", name));
    if (b.ok()) train.update_nodes.push_back(updated[0].node()->name());
  }
  train.global_step = b.Op1("Increment", {step}, {}, "increment_step");
  if (b.ok()) train.update_nodes.push_back(train.global_step.node()->name());
  return train;
}

}  // namespace tsr

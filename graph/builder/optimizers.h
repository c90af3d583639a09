// Training graphs: `Minimize` adds to a graph the gradients of a loss (autodiff), an
// optional clipping by global norm, the optimizer's slot Variables and one update op
// per parameter (graph/ops/optimizer_ops.cc), and a global step counter.
//
//   TrainingOps train = Minimize(b, loss, TrainableVariables(b), {.kind = OptimizerKind::kAdam});
//   ... session->Run({{"image", x}, {"labels", y}, {"learning_rate", lr}}, {"loss"}, train.update_nodes);
//
// The learning rate is a Placeholder fed every step, so schedules live with the
// caller (runtime/trainer computes them from the step). Slots are named
// "<parameter>/<slot>" (e.g. "dense/kernel/adam_m") and are not trainable; the step
// counter is the i64 Variable "global_step". Everything a checkpoint must hold to
// resume exactly is a Variable.
#ifndef TESSERA_GRAPH_BUILDER_OPTIMIZERS_H_
#define TESSERA_GRAPH_BUILDER_OPTIMIZERS_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/builder/graph_builder.h"

namespace tsr {

enum class OptimizerKind { kSgd, kMomentum, kNesterov, kAdam, kAdamW, kRmsProp };

// "sgd", "momentum", "nesterov", "adam", "adamw", "rmsprop".
absl::string_view OptimizerName(OptimizerKind kind);
absl::StatusOr<OptimizerKind> ParseOptimizerKind(absl::string_view name);

struct OptimizerOptions {
  OptimizerKind kind = OptimizerKind::kMomentum;
  double momentum = 0.9;  // Momentum, Nesterov
  double beta1 = 0.9;     // Adam, AdamW
  double beta2 = 0.999;
  double epsilon = 1e-8;  // Adam, AdamW, RMSProp
  double rho = 0.99;      // RMSProp
  // L2 penalty added to the gradient; AdamW decouples it (p -= lr * wd * p).
  double weight_decay = 0.0;
  // Scales all gradients by min(1, clip / global_norm) when set.
  std::optional<double> clip_global_norm;
};

struct TrainingOps {
  Output learning_rate;                   // Placeholder "learning_rate", a scalar of the loss's dtype
  std::vector<Output> gradients;          // one per parameter, before clipping
  Output global_norm;                     // sqrt(sum of squares of all gradients), before clipping
  Output global_step;                     // the step counter after this step
  std::vector<std::string> update_nodes;  // the nodes a training step runs (Session::Run targets)
};

// Parameters must be Variable outputs of floating dtype. Errors are recorded in `b`.
TrainingOps Minimize(GraphBuilder& b, Output loss, const std::vector<Output>& params,
                     const OptimizerOptions& options = {});

// The trainable floating-point Variables of the graph being built, in node order.
std::vector<Output> TrainableVariables(GraphBuilder& b);

}  // namespace tsr

#endif  // TESSERA_GRAPH_BUILDER_OPTIMIZERS_H_

// ZeroStrategy (see zero.h).
#include "strategies/zero.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "strategies/data_parallel.h"

namespace tsr {

namespace {

// An optimizer update: it updates Variables and reads a gradient.
bool IsOptimizerUpdate(const Node& node) {
  const OpDef* def = node.op_def();
  if (def == nullptr || def->variable_updates.empty()) return false;
  return std::any_of(def->inputs.begin(), def->inputs.end(), [](const auto& in) { return in.name == "grad"; });
}

}  // namespace

std::string ZeroStrategy::name() const { return absl::StrCat("zero", stage_, "(", devices_, ")"); }

absl::StatusOr<StrategyPlan> ZeroStrategy::Plan(const Graph& graph) const {
  if (stage_ < 1 || stage_ > 3) return absl::InvalidArgumentError(absl::StrCat("ZeRO stage ", stage_, " (1, 2 or 3)"));
  TSR_ASSIGN_OR_RETURN(StrategyPlan plan, DataParallelPlan(graph, devices_));
  plan.reduce_scatter = stage_ >= 2;
  const auto split_rows = [&](const TensorType& type) {
    std::vector<std::vector<std::string>> dims(type.shape.rank());
    dims[0] = {"data"};
    return dims;
  };
  const auto shardable = [&](const TensorType& type) {
    return type.shape.rank() > 0 && type.shape.is_static() && type.shape.dim(0) >= devices_;
  };
  int sharded = 0;
  for (const Node* node : graph.nodes()) {
    if (!IsOptimizerUpdate(*node)) continue;
    const std::vector<int>& updates = node->op_def()->variable_updates;
    const TensorType& param = node->output_type(0);
    if (!shardable(param)) continue;
    for (size_t i = 0; i < updates.size(); ++i) {
      const TensorRef state = node->input(updates[i]);
      const Node* variable = graph.node(state.node);
      if (variable == nullptr || variable->op() != "Variable") continue;
      // Stage 3 splits the parameter's storage; stages 1 and 2 its slots only.
      if (stage_ == 3 || i > 0) plan.annotations.tensors[variable->name()] = split_rows(param);
    }
    // The update runs on shares (for SGD, which has no slots, this alone shards it).
    plan.annotations.tensors[node->name()] = split_rows(param);
    ++sharded;
  }
  if (sharded == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ZeRO shards optimizer updates, but the graph has none whose parameter's first dimension is at least ",
        devices_, " (the device count)"));
  }
  return plan;
}

}  // namespace tsr

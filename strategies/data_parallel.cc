// Data-parallel strategies (see data_parallel.h).
#include "strategies/data_parallel.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"

namespace tsr {

absl::StatusOr<StrategyPlan> DataParallelPlan(const Graph& graph, int devices, const std::string& axis) {
  if (devices < 1) return absl::InvalidArgumentError(absl::StrCat("data parallelism over ", devices, " devices"));
  TSR_ASSIGN_OR_RETURN(DeviceMesh mesh, DeviceMesh::Create({MeshAxis{axis, devices}}));
  StrategyPlan plan{std::move(mesh), {}};
  for (const SignatureEntry& e : graph.inputs()) {
    const TensorType* type = graph.TypeOf(e.ref);
    if (type == nullptr || type->shape.rank() == 0 || type->shape.dim(0) != kBatchDim) continue;
    std::vector<std::vector<std::string>> dims(type->shape.rank());
    dims[0] = {axis};
    plan.annotations.tensors[e.name] = std::move(dims);
  }
  if (plan.annotations.tensors.empty()) {
    return absl::InvalidArgumentError(
        "data parallelism splits the batch, but no input of the graph has the symbolic batch dimension N first");
  }
  return plan;
}

std::string MirroredStrategy::name() const { return absl::StrCat("mirrored(", devices_, ")"); }

absl::StatusOr<StrategyPlan> MirroredStrategy::Plan(const Graph& graph) const {
  return DataParallelPlan(graph, devices_);
}

std::string MultiWorkerMirroredStrategy::name() const { return absl::StrCat("multi-worker(", workers_, ")"); }

absl::StatusOr<StrategyPlan> MultiWorkerMirroredStrategy::Plan(const Graph& graph) const {
  return DataParallelPlan(graph, workers_);
}

}  // namespace tsr

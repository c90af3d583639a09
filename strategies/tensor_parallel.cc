// Tensor-parallel and hybrid strategies (see tensor_parallel.h).
#include "strategies/tensor_parallel.h"

#include <algorithm>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "graph/bind_batch.h"
#include "graph/status_macros.h"
#include "partitioner/shape_folding.h"
#include "strategies/data_parallel.h"

namespace tsr {

namespace {

const Node* VariableAt(const Graph& graph, TensorRef ref) {
  const Node* node = ref.valid() ? graph.node(ref.node) : nullptr;
  return node != nullptr && node->op() == "Variable" ? node : nullptr;
}

// Annotates Variable `name` (and its optimizer slots "<name>/...", of the same shape).
void Annotate(const Graph& graph, const Node& variable, std::vector<std::vector<std::string>> dims,
              ShardingAnnotations& annotations) {
  for (const Node* node : graph.nodes()) {
    if (node->op() != "Variable" || node->num_outputs() == 0) continue;
    if (node == &variable || (absl::StartsWith(node->name(), absl::StrCat(variable.name(), "/")) &&
                              node->output_type(0).shape == variable.output_type(0).shape)) {
      annotations.tensors[node->name()] = dims;
    }
  }
}

}  // namespace

absl::Status AddTensorParallelAnnotations(const Graph& graph, const DeviceMesh& mesh, const std::string& axis,
                                          ShardingAnnotations& annotations) {
  const int model = mesh.AxisIndex(axis);
  if (model < 0)
    return absl::InvalidArgumentError(absl::StrCat("the mesh ", mesh.ToString(), " has no axis '", axis, "'"));
  // Shardings are propagated on the graph with static shapes, as the partitioner sees it.
  TSR_ASSIGN_OR_RETURN(Graph bound, BindBatch(graph, mesh.num_devices()));
  TSR_RETURN_IF_ERROR(FoldShapeComputations(bound).status());
  TSR_ASSIGN_OR_RETURN(std::vector<const Node*> order, bound.TopologicalOrder());
  int layers = 0;
  for (const Node* node : order) {
    if ((node->op() != "MatMul" && node->op() != "Gemm") || node->num_inputs() < 2) continue;
    const Node* weight = VariableAt(bound, node->input(1));
    if (weight == nullptr || weight->output_type(0).shape.rank() != 2) continue;
    if (node->op() == "Gemm") {
      const AttrValue* tb = node->FindAttr("transB");
      if (tb != nullptr && tb->i() != 0) continue;  // [N, K] weights: not handled yet
    }
    // A layer whose input arrives split by features (after a column layer, through
    // per-feature or per-head ops) splits its rows; any other splits its columns.
    TSR_ASSIGN_OR_RETURN(ShardingPlan plan, PropagateShardings(bound, mesh, annotations));
    const Sharding& input = plan.ResultOf(node->input(0));
    const bool row = !input.dims.empty() &&
                     std::find(input.dims.back().begin(), input.dims.back().end(), model) != input.dims.back().end();
    ++layers;
    Annotate(
        bound, *weight,
        row ? std::vector<std::vector<std::string>>{{axis}, {}} : std::vector<std::vector<std::string>>{{}, {axis}},
        annotations);
    if (row) continue;
    // The bias added to a column layer's output is split with the columns.
    for (const auto& [consumer, slot] : bound.Consumers(node->output(0))) {
      if (consumer->op() != "Add" || consumer->num_inputs() != 2) continue;
      const Node* bias = VariableAt(bound, consumer->input(1 - slot));
      if (bias != nullptr && bias->output_type(0).shape.rank() == 1) Annotate(bound, *bias, {{axis}}, annotations);
    }
    if (node->op() == "Gemm" && node->num_inputs() > 2) {
      const Node* bias = VariableAt(bound, node->input(2));
      if (bias != nullptr && bias->output_type(0).shape.rank() == 1) Annotate(bound, *bias, {{axis}}, annotations);
    }
  }
  if (layers == 0) {
    return absl::InvalidArgumentError(
        "tensor parallelism splits dense layers' weights, but the graph has no MatMul or Gemm with a rank-2 Variable "
        "weight");
  }
  return absl::OkStatus();
}

std::string TensorParallelStrategy::name() const { return absl::StrCat("tensor-parallel(", devices_, ")"); }

absl::StatusOr<StrategyPlan> TensorParallelStrategy::Plan(const Graph& graph) const {
  if (devices_ < 1) return absl::InvalidArgumentError(absl::StrCat("tensor parallelism over ", devices_, " devices"));
  TSR_ASSIGN_OR_RETURN(DeviceMesh mesh, DeviceMesh::Create({MeshAxis{"model", devices_}}));
  StrategyPlan plan{std::move(mesh), {}};
  TSR_RETURN_IF_ERROR(AddTensorParallelAnnotations(graph, plan.mesh, "model", plan.annotations));
  return plan;
}

std::string HybridStrategy::name() const { return absl::StrCat("hybrid(data=", data_, ", model=", model_, ")"); }

absl::StatusOr<StrategyPlan> HybridStrategy::Plan(const Graph& graph) const {
  TSR_ASSIGN_OR_RETURN(StrategyPlan data, DataParallelPlan(graph, data_));
  TSR_ASSIGN_OR_RETURN(DeviceMesh mesh, DeviceMesh::Create({MeshAxis{"data", data_}, MeshAxis{"model", model_}}));
  StrategyPlan plan{std::move(mesh), std::move(data.annotations)};
  TSR_RETURN_IF_ERROR(AddTensorParallelAnnotations(graph, plan.mesh, "model", plan.annotations));
  return plan;
}

}  // namespace tsr

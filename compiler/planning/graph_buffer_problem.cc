// BuildGraphBufferProblem: liveness of every node output of a Graph in topological order.
#include "compiler/planning/graph_buffer_problem.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "graph/tensor.h"

namespace tsr {

bool IsInPlaceOp(absl::string_view op) {
  // Ops whose kernels read element i of each input before writing element i of the
  // output, so the output may share an input's buffer: elementwise ops, and the ops that
  // only give the same bytes another shape (their kernels copy nothing when the output
  // is the input's buffer; planned in place, a Reshape costs no copy).
  static const auto* const kOps = new absl::flat_hash_set<std::string>{
      "Relu",       "LeakyRelu", "Gelu", "Sigmoid",     "Tanh",      "Erf",      "Softplus", "Silu",
      "Elu",        "Selu",      "Celu", "HardSigmoid", "HardSwish", "Softsign", "Add",      "Sub",
      "Mul",        "Div",       "Neg",  "Abs",         "Exp",       "Log",      "Sqrt",     "Rsqrt",
      "Reciprocal", "Floor",     "Ceil", "Sign",        "Reshape",   "Flatten",  "Squeeze",  "Unsqueeze"};
  return kOps->contains(op);
}

absl::StatusOr<GraphBufferProblem> BuildGraphBufferProblem(const Graph& graph, int64_t batch) {
  TSR_ASSIGN_OR_RETURN(std::vector<const Node*> order, graph.TopologicalOrder());
  GraphBufferProblem result;
  result.steps = order;
  absl::flat_hash_map<TensorRef, int> value_of;
  absl::flat_hash_set<TensorRef> outputs;
  for (const SignatureEntry& e : graph.outputs()) outputs.insert(e.ref);

  std::vector<BufferValue>& values = result.problem.values;
  for (int step = 0; step < static_cast<int>(order.size()); ++step) {
    const Node* node = order[step];
    // Readers first: the inputs of this step live until here.
    for (const TensorRef& in : node->inputs()) {
      if (!in.valid()) continue;
      auto it = value_of.find(in);
      if (it == value_of.end()) {
        return absl::InvalidArgumentError(
            absl::StrCat("node '", node->name(), "' reads ", graph.TensorName(in), ", which no earlier step defines"));
      }
      values[it->second].last_use_step = step;
    }
    const bool source = node->op() == "Placeholder" || node->op() == "Constant" || node->op() == "Variable";
    if (node->num_outputs() == 0 && node->op_def() != nullptr && node->op_def()->min_outputs() > 0) {
      return absl::FailedPreconditionError(absl::StrCat("node '", node->name(), "' has no inferred output types"));
    }
    for (int k = 0; k < node->num_outputs(); ++k) {
      const TensorType& type = node->output_type(k);
      const Shape shape = type.shape.BindBatch(batch);
      absl::StatusOr<int64_t> elements = shape.NumElements();
      if (!elements.ok()) {
        return absl::InvalidArgumentError(absl::StrCat("node '", node->name(), "' output ", k, " (", type.ToString(),
                                                       "): ", elements.status().message()));
      }
      const int64_t bytes = *elements * static_cast<int64_t>(DTypeSize(type.dtype));
      if (*elements > 0 && bytes / *elements != static_cast<int64_t>(DTypeSize(type.dtype))) {
        return absl::InvalidArgumentError(absl::StrCat("node '", node->name(), "' output ", k, " is too large"));
      }
      BufferValue value;
      value.name = graph.TensorName(node->output(k));
      value.size = bytes;
      value.alignment = static_cast<int64_t>(kTensorAlignment);
      value.def_step = step;
      value.last_use_step = step;
      value.external = source || outputs.contains(node->output(k));
      if (value.external) result.external_bytes += bytes;
      if (k == 0 && !value.external && IsInPlaceOp(node->op())) {
        for (const TensorRef& in : node->inputs()) {
          if (!in.valid()) continue;
          const int v = value_of.at(in);
          const TensorType* in_type = graph.TypeOf(in);
          if (in_type != nullptr && in_type->dtype == type.dtype && values[v].size == bytes) {
            value.inplace_candidates.push_back(v);
          }
        }
      }
      value_of[node->output(k)] = static_cast<int>(values.size());
      result.tensors.push_back(node->output(k));
      values.push_back(std::move(value));
    }
  }
  return result;
}

}  // namespace tsr

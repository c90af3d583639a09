// FoldShapeComputations (see shape_folding.h).
#include "partitioner/shape_folding.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "kernels/run_op.h"

namespace tsr {

namespace {

constexpr int64_t kMaxFoldedElements = 4096;

// Shape's value: the dims [start, end) of its input (ONNX clamping of negative and
// out-of-range bounds).
Tensor ShapeValue(const Node& node, const Shape& shape) {
  const int rank = shape.rank();
  auto clamp = [rank](int64_t v) {
    if (v < 0) v += rank;
    return std::clamp<int64_t>(v, 0, rank);
  };
  const AttrValue* start_attr = node.FindAttr("start");
  const AttrValue* end_attr = node.FindAttr("end");
  const int64_t start = clamp(start_attr != nullptr ? start_attr->i() : 0);
  const int64_t end = clamp(end_attr != nullptr ? end_attr->i() : rank);
  std::vector<int64_t> dims;
  for (int64_t d = start; d < end; ++d) dims.push_back(shape.dim(static_cast<int>(d)));
  return Tensor::FromVector<int64_t>(Shape{static_cast<int64_t>(dims.size())}, dims);
}

// Makes the consumers of `ref` read `replacement` (and the signature too).
void Rewire(Graph& graph, TensorRef ref, TensorRef replacement) {
  for (Node* consumer : graph.nodes()) {
    for (int i = 0; i < consumer->num_inputs(); ++i) {
      if (consumer->input(i) == ref) consumer->set_input(i, replacement);
    }
  }
}

bool Foldable(const Node& node) {
  const OpDef* def = node.op_def();
  if (def == nullptr || def->stateful || !def->variable_updates.empty()) return false;
  if (node.op() == "Constant" || node.op() == "Placeholder" || node.op() == "Variable") return false;
  if (node.num_outputs() == 0) return false;
  for (const TensorType& t : node.output_types()) {
    if (!t.shape.is_static() || t.shape.num_elements() > kMaxFoldedElements) return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<int> FoldShapeComputations(Graph& graph) {
  TSR_ASSIGN_OR_RETURN(std::vector<const Node*> order, graph.TopologicalOrder());
  int folded = 0;
  for (const Node* const_node : order) {
    Node* node = graph.node(const_node->id());
    std::vector<Tensor> values;
    if ((node->op() == "Shape" || node->op() == "Size") && node->num_inputs() == 1 && node->input(0).valid()) {
      const TensorType* in = graph.TypeOf(node->input(0));
      if (in == nullptr || !in->shape.is_static()) continue;
      values.push_back(node->op() == "Shape" ? ShapeValue(*node, in->shape)
                                             : Tensor::Scalar<int64_t>(in->shape.num_elements()));
    } else {
      if (!Foldable(*node)) continue;
      std::vector<std::optional<Tensor>> inputs;
      bool all_constant = true;
      for (const TensorRef& ref : node->inputs()) {
        if (!ref.valid()) {
          inputs.push_back(std::nullopt);
          continue;
        }
        const Tensor* value = graph.ConstantValue(ref);
        if (value == nullptr) {
          all_constant = false;
          break;
        }
        inputs.push_back(*value);
      }
      if (!all_constant || node->num_inputs() == 0) continue;
      absl::StatusOr<std::vector<Tensor>> outputs = RunOp(node->op(), inputs, node->attrs());
      if (!outputs.ok()) {
        return absl::Status(outputs.status().code(), absl::StrCat("folding node '", node->name(), "' (", node->op(),
                                                                  "): ", outputs.status().message()));
      }
      values = *std::move(outputs);
    }
    for (int i = 0; i < static_cast<int>(values.size()) && i < node->num_outputs(); ++i) {
      AttrMap attrs;
      attrs["value"] = AttrValue::FromTensor(std::move(values[i]));
      TSR_ASSIGN_OR_RETURN(Node * constant,
                           graph.AddNodeAndInfer(graph.UniqueName(absl::StrCat(node->name(), "/folded")), "Constant",
                                                 {}, std::move(attrs)));
      Rewire(graph, node->output(i), constant->output(0));
    }
    ++folded;
  }
  return folded;
}

}  // namespace tsr

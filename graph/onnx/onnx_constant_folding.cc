// FoldOnnxNode: converts one ONNX node into a scratch graph whose inputs are the known
// constants (or typed Placeholders), then evaluates the scratch nodes in order with the
// reference kernels, computing Shape/Size of statically shaped tensors from their types.
#include "graph/onnx/onnx_constant_folding.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "graph/attr_reader.h"
#include "graph/onnx/onnx_node_context.h"
#include "kernels/run_op.h"

namespace tsr {

namespace {

// Whether the node may be foldable, judged from the importer's graph alone; keeps the
// scratch conversion off the (many) nodes that read run-time data.
bool IsCandidate(const onnx::NodeProto& node, const Graph& graph, absl::Span<const TensorRef> inputs) {
  if (inputs.empty()) return false;
  bool any_input = false;
  for (const TensorRef& ref : inputs) {
    if (!ref.valid()) continue;
    any_input = true;
    if (graph.ConstantValue(ref) == nullptr) {
      // Shape and Size read only the type of their data input.
      const bool type_only = node.op_type() == "Shape" || node.op_type() == "Size";
      const TensorType* type = graph.TypeOf(ref);
      if (!type_only || type == nullptr || !type->shape.is_static()) return false;
    }
  }
  return any_input;
}

// The value of a Shape or Size node whose input type is static (ONNX's start/end rules,
// as Tessera's InferShape applies them).
Tensor ShapeValue(const Node& node, const Shape& input) {
  const int64_t rank = input.rank();
  if (node.op() == "Size") return Tensor::Scalar<int64_t>(input.num_elements());
  AttrReader attrs(*node.op_def(), node.attrs());
  auto clamp = [rank](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank); };
  const int64_t start = clamp(attrs.GetInt("start"));
  const int64_t end = attrs.has_attr("end") ? clamp(attrs.GetInt("end")) : rank;
  std::vector<int64_t> dims;
  for (int64_t i = start; i < end; ++i) dims.push_back(input.dim(static_cast<int>(i)));
  return Tensor::FromVector<int64_t>(Shape{static_cast<int64_t>(dims.size())}, dims);
}

class ScratchEvaluation {
 public:
  explicit ScratchEvaluation(const OnnxConstantFoldingOptions& options) : options_(options) {}

  Graph& graph() { return graph_; }

  // A scratch tensor standing for `ref` of `source`: its Constant, or a Placeholder of
  // its type whose value stays unknown.
  std::optional<TensorRef> AddInput(const Graph& source, TensorRef ref, int slot) {
    const std::string name = graph_.UniqueName(absl::StrCat("__fold_input_", slot));
    absl::StatusOr<Node*> n;
    if (const Tensor* value = source.ConstantValue(ref); value != nullptr) {
      n = graph_.AddNodeAndInfer(name, "Constant", {}, {{"value", AttrValue::FromTensor(*value)}});
    } else {
      const TensorType* type = source.TypeOf(ref);
      if (type == nullptr) return std::nullopt;
      n = graph_.AddNodeAndInfer(
          name, "Placeholder", {},
          {{"dtype", AttrValue::Type(type->dtype)}, {"shape", AttrValue::FromShape(type->shape)}});
    }
    if (!n.ok()) return std::nullopt;
    return (*n)->output(0);
  }

  // Evaluates every scratch node in id order (which is topological: a node's inputs
  // exist before it). False when some node cannot be evaluated; the results it needs
  // are then unknown.
  bool Run() {
    for (const Node* node : std::as_const(graph_).nodes()) {
      if (node->op_def() == nullptr || node->op_def()->stateful) return false;
      // Placeholders stand for run-time tensors that only Shape/Size read (their value
      // stays unknown); Constants hold data already in the model. Neither is computed.
      if (node->op() == "Placeholder") continue;
      if (node->op() == "Constant") {
        values_[node->output(0)] = *graph_.ConstantValue(node->output(0));
        continue;
      }
      for (const TensorType& t : node->output_types()) {
        if (!t.shape.is_static() || t.shape.num_elements() > options_.max_elements) return false;
      }
      if ((node->op() == "Shape" || node->op() == "Size") && node->num_inputs() == 1) {
        const TensorType* in = graph_.TypeOf(node->input(0));
        if (in == nullptr || !in->shape.is_static()) return false;
        Tensor value = ShapeValue(*node, in->shape);
        if (value.type() != node->output_type(0)) return false;
        values_[node->output(0)] = std::move(value);
        continue;
      }
      std::vector<std::optional<Tensor>> inputs;
      for (const TensorRef& ref : node->inputs()) {
        if (!ref.valid()) {
          inputs.push_back(std::nullopt);
          continue;
        }
        auto it = values_.find(ref);
        if (it == values_.end()) return false;
        inputs.push_back(it->second);
      }
      RunOpOptions run;
      run.device = kReferenceDevice;
      absl::StatusOr<std::vector<Tensor>> outputs = RunOp(node->op(), inputs, node->attrs(), run);
      if (!outputs.ok() || static_cast<int>(outputs->size()) != node->num_outputs()) return false;
      for (int i = 0; i < node->num_outputs(); ++i) {
        // The kernel's result must have the type the graph inferred: the folded Constant
        // replaces the node for every later shape function.
        if ((*outputs)[i].type() != node->output_type(i)) return false;
        values_[node->output(i)] = std::move((*outputs)[i]);
      }
    }
    return true;
  }

  const Tensor* Value(TensorRef ref) const {
    auto it = values_.find(ref);
    return it == values_.end() ? nullptr : &it->second;
  }

 private:
  const OnnxConstantFoldingOptions& options_;
  Graph graph_;
  absl::flat_hash_map<TensorRef, Tensor> values_;
};

}  // namespace

std::optional<std::vector<Tensor>> FoldOnnxNode(const onnx::NodeProto& node, int node_index, int64_t opset,
                                                const OnnxConverter& convert, const Graph& graph,
                                                absl::Span<const TensorRef> inputs,
                                                const OnnxTensorOptions& tensor_options,
                                                const OnnxConstantFoldingOptions& options) {
  if (!IsCandidate(node, graph, inputs)) return std::nullopt;
  ScratchEvaluation eval(options);
  std::vector<TensorRef> scratch_inputs;
  for (int i = 0; i < static_cast<int>(inputs.size()); ++i) {
    if (!inputs[i].valid()) {
      scratch_inputs.push_back(TensorRef::None());
      continue;
    }
    std::optional<TensorRef> ref = eval.AddInput(graph, inputs[i], i);
    if (!ref.has_value()) return std::nullopt;
    scratch_inputs.push_back(*ref);
  }
  Graph& scratch = eval.graph();
  OnnxNodeContext ctx(node, node_index, opset, scratch, std::move(scratch_inputs), tensor_options,
                      [&scratch](absl::string_view prefix) { return scratch.UniqueName(prefix); });
  absl::StatusOr<std::vector<TensorRef>> outputs = convert(ctx);
  if (!outputs.ok() || !ctx.CheckAllAttrsHandled().ok() || !eval.Run()) return std::nullopt;

  std::vector<Tensor> values(node.output_size());
  for (int i = 0; i < node.output_size(); ++i) {
    if (node.output(i).empty()) continue;
    if (i >= static_cast<int>(outputs->size())) return std::nullopt;
    const Tensor* value = eval.Value((*outputs)[i]);
    if (value == nullptr) return std::nullopt;
    values[i] = *value;
  }
  return values;
}

}  // namespace tsr

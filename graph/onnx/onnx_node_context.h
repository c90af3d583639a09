// `OnnxNodeContext`: what the converter of one ONNX node sees — the node, the opset, its
// inputs already resolved to Tessera tensors — and what it may do: read attributes
// (each read marks the attribute as handled), add Tessera nodes and constants, and
// produce errors that name the node, its op type and the opset.
//
// After a converter returns, every attribute it did not read is an error: an attribute
// the importer does not understand is never silently ignored.
#ifndef TESSERA_GRAPH_ONNX_ONNX_NODE_CONTEXT_H_
#define TESSERA_GRAPH_ONNX_ONNX_NODE_CONTEXT_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/graph.h"
#include "graph/onnx/onnx_tensor.h"
#include "onnx/onnx_pb.h"

namespace tsr {

class OnnxNodeContext {
 public:
  // `unique_name` returns a node name unused in the graph and in the model's tensor names.
  OnnxNodeContext(const onnx::NodeProto& node, int node_index, int64_t opset, Graph& graph,
                  std::vector<TensorRef> inputs, const OnnxTensorOptions& tensor_options,
                  std::function<std::string(absl::string_view)> unique_name);

  const onnx::NodeProto& node() const { return node_; }
  const std::string& op_type() const { return node_.op_type(); }
  int64_t opset() const { return opset_; }
  Graph& graph() { return graph_; }

  // Inputs; None() for an absent optional input (empty name or past the end).
  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  TensorRef input(int i) const { return i < num_inputs() ? inputs_[i] : TensorRef::None(); }
  const std::vector<TensorRef>& inputs() const { return inputs_; }
  // Number of outputs the ONNX node lists (trailing ones may be empty names).
  int num_outputs() const { return node_.output_size(); }
  // The type of input i; an error when absent.
  absl::StatusOr<TensorType> InputType(int i) const;

  // "ONNX node 'name' (Op, opset N)"; unnamed nodes are described by index and output.
  std::string Describe() const;
  // InvalidArgument / Unimplemented prefixed with Describe().
  absl::Status Error(absl::string_view message) const;
  absl::Status Unsupported(absl::string_view message) const;

  // Attribute access. Each marks the attribute handled; a present attribute of the
  // wrong ONNX type is an error.
  const onnx::AttributeProto* FindAttr(absl::string_view name);
  absl::StatusOr<std::optional<int64_t>> GetInt(absl::string_view name);
  absl::StatusOr<std::optional<double>> GetFloat(absl::string_view name);
  absl::StatusOr<std::optional<std::string>> GetString(absl::string_view name);
  absl::StatusOr<std::optional<std::vector<int64_t>>> GetInts(absl::string_view name);
  absl::StatusOr<std::optional<std::vector<double>>> GetFloats(absl::string_view name);
  absl::StatusOr<std::optional<Tensor>> GetTensor(absl::string_view name);
  // Copies the named ONNX attributes that are present into `attrs` with Tessera types
  // (INT -> kInt, FLOAT -> kFloat, STRING -> kString, INTS -> kInts, FLOATS -> kFloats).
  // When `op` is given, each must have the type Tessera's `op` declares for it.
  absl::Status CopyAttrs(std::initializer_list<absl::string_view> names, AttrMap& attrs, absl::string_view op = "");
  // The first attribute the converter never read, as an error; Ok when none.
  absl::Status CheckAllAttrsHandled() const;

  // Adds a Tessera node (types inferred); a failure is reported as this node's error.
  // The node that produces the ONNX node's outputs is named after its first output, so
  // that the ONNX tensor name fetches it; intermediate nodes of a decomposition
  // (`produces_outputs` false) get fresh names derived from it.
  absl::StatusOr<Node*> AddNode(absl::string_view op, std::vector<TensorRef> inputs, AttrMap attrs = {},
                                bool produces_outputs = true);
  // A Constant node holding `value`.
  absl::StatusOr<TensorRef> AddConstant(Tensor value, absl::string_view suffix);
  absl::StatusOr<TensorRef> AddInt64Constant(const std::vector<int64_t>& values, absl::string_view suffix);

 private:
  const onnx::NodeProto& node_;
  int node_index_;
  int64_t opset_;
  Graph& graph_;
  std::vector<TensorRef> inputs_;
  const OnnxTensorOptions& tensor_options_;
  std::function<std::string(absl::string_view)> unique_name_;
  absl::flat_hash_set<std::string> handled_attrs_;
  // The name of the node that produces the outputs, or where helper names derive from.
  std::string base_name_;
  bool main_node_added_ = false;
};

}  // namespace tsr

#endif  // TESSERA_GRAPH_ONNX_ONNX_NODE_CONTEXT_H_

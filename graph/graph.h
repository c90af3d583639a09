// `Graph`: a static dataflow graph of `Node`s. Edges are `TensorRef`s (producer
// node id, output index). A graph also carries its signature: named inputs (fed
// Placeholders) and named outputs (fetches).
//
// Nodes are never removed from the id space: ids are stable handles.
#ifndef TESSERA_GRAPH_GRAPH_H_
#define TESSERA_GRAPH_GRAPH_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "graph/attribute.h"
#include "graph/op_def.h"
#include "graph/tensor_type.h"

namespace tsr {

class OpRegistry;

// An edge endpoint: output `index` of node `node`. node == -1 is "no tensor" (an
// absent optional input).
struct TensorRef {
  int node = -1;
  int index = 0;

  static TensorRef None() { return TensorRef(); }
  bool valid() const { return node >= 0; }
  friend bool operator==(const TensorRef& a, const TensorRef& b) { return a.node == b.node && a.index == b.index; }
  friend bool operator!=(const TensorRef& a, const TensorRef& b) { return !(a == b); }
  template <typename H>
  friend H AbslHashValue(H h, const TensorRef& r) {
    return H::combine(std::move(h), r.node, r.index);
  }
};

class Node {
 public:
  int id() const { return id_; }
  const std::string& name() const { return name_; }
  const std::string& op() const { return op_; }
  // nullptr when the op is not registered (the verifier reports it).
  const OpDef* op_def() const { return op_def_; }

  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  TensorRef input(int i) const { return inputs_[i]; }
  const std::vector<TensorRef>& inputs() const { return inputs_; }

  const AttrMap& attrs() const { return attrs_; }
  const AttrValue* FindAttr(absl::string_view name) const;

  // Output types as last inferred (empty before inference).
  int num_outputs() const { return static_cast<int>(output_types_.size()); }
  const TensorType& output_type(int i) const { return output_types_[i]; }
  const std::vector<TensorType>& output_types() const { return output_types_; }
  TensorRef output(int i = 0) const { return TensorRef{id_, i}; }

  void set_input(int i, TensorRef ref) { inputs_[i] = ref; }
  void add_input(TensorRef ref) { inputs_.push_back(ref); }
  void set_attr(std::string name, AttrValue value) { attrs_[std::move(name)] = std::move(value); }
  void set_output_types(std::vector<TensorType> types) { output_types_ = std::move(types); }

 private:
  friend class Graph;
  Node() = default;

  int id_ = -1;
  std::string name_;
  std::string op_;
  const OpDef* op_def_ = nullptr;
  std::vector<TensorRef> inputs_;
  AttrMap attrs_;
  std::vector<TensorType> output_types_;
};

// A named entry of the signature.
struct SignatureEntry {
  std::string name;
  TensorRef ref;
};

class Graph {
 public:
  // Ops are looked up in `registry` (the global one by default), which must outlive the graph.
  Graph();
  explicit Graph(const OpRegistry& registry);
  Graph(Graph&&) = default;
  Graph& operator=(Graph&&) = default;
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  // A deep copy.
  Graph Clone() const;

  const OpRegistry& registry() const { return *registry_; }

  // Adds a node without inferring its types. The name must be non-empty and unique;
  // an unknown op is accepted here and reported by Verify().
  absl::StatusOr<Node*> AddNode(std::string name, std::string op, std::vector<TensorRef> inputs, AttrMap attrs = {});
  // AddNode, then InferTypes on the new node (its inputs must already have types).
  // On failure the graph is left unchanged.
  absl::StatusOr<Node*> AddNodeAndInfer(std::string name, std::string op, std::vector<TensorRef> inputs,
                                        AttrMap attrs = {});

  // Runs the op's shape inference from the node's current input types and stores
  // the result as its output types.
  absl::Status InferTypes(Node* node);
  // InferTypes on every node in topological order.
  absl::Status InferAllTypes();
  // What inference would produce for `node`, without storing it.
  absl::StatusOr<std::vector<TensorType>> InferredTypes(const Node& node) const;

  int num_nodes() const { return static_cast<int>(nodes_.size()); }
  // nullptr when out of range.
  Node* node(int id);
  const Node* node(int id) const;
  Node* FindNode(absl::string_view name);
  const Node* FindNode(absl::string_view name) const;
  // Nodes in id (insertion) order.
  std::vector<Node*> nodes();
  std::vector<const Node*> nodes() const;

  // `prefix` if unused, else prefix_1, prefix_2, ...
  std::string UniqueName(absl::string_view prefix) const;

  // Producers before consumers, ties broken by id. FailedPrecondition naming a
  // node on the cycle when there is one; InvalidArgument for dangling inputs.
  absl::StatusOr<std::vector<const Node*>> TopologicalOrder() const;

  // The type of a tensor, nullptr when the ref does not name an inferred output.
  const TensorType* TypeOf(TensorRef ref) const;
  // The value of a tensor produced by a Constant node, else nullptr.
  const Tensor* ConstantValue(TensorRef ref) const;
  // "node" for output 0, "node:1" otherwise.
  std::string TensorName(TensorRef ref) const;
  // Inverse of TensorName.
  absl::StatusOr<TensorRef> ParseTensorName(absl::string_view name) const;
  // (consumer node, input slot) pairs reading `ref`.
  std::vector<std::pair<const Node*, int>> Consumers(TensorRef ref) const;

  // Signature.
  absl::Status AddInput(std::string name, TensorRef ref);
  absl::Status AddOutput(std::string name, TensorRef ref);
  const std::vector<SignatureEntry>& inputs() const { return inputs_; }
  const std::vector<SignatureEntry>& outputs() const { return outputs_; }

  // Checks everything: unique names, known ops, valid input references, no
  // cycles, attributes, input counts and dtypes, that stored output types match
  // what inference gives, and the signature. The status names the node.
  absl::Status Verify() const;

  // One line per node: "name = Op(inputs) {attrs} -> types".
  std::string DebugString() const;

 private:
  const OpRegistry* registry_;
  std::vector<std::unique_ptr<Node>> nodes_;
  absl::flat_hash_map<std::string, int> by_name_;
  std::vector<SignatureEntry> inputs_;
  std::vector<SignatureEntry> outputs_;
  // Names in inputs_ / outputs_, for duplicate checks in constant time.
  absl::flat_hash_set<std::string> input_names_;
  absl::flat_hash_set<std::string> output_names_;
};

}  // namespace tsr

#endif  // TESSERA_GRAPH_GRAPH_H_

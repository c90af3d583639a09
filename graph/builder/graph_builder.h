// `GraphBuilder`: straight-line construction of a `Graph`, and `Output`, the handle
// of a tensor being built.
//
// Errors are sticky, as in TensorFlow's C++ `Scope`: the first failing call records
// its status (naming the node and op) and every later call returns an invalid
// `Output` without touching the graph. User code therefore needs no error checks
// between ops; `Finish()` reports the first error, or the result of Graph::Verify().
//
//   GraphBuilder b;
//   Output x = b.Input("image", DType::kF32, {kBatchDim, 784});
//   {
//     auto scope = b.Scope("head");                   // names below start with "head/"
//     x = ops::Relu(b, x);                            // auto-named "head/Relu"
//   }
//   b.MarkOutput("features", x);
//   absl::StatusOr<Graph> graph = b.Finish();
//
// Node names: an explicit name is used as given (inside the current scope) and must
// be free; without one the op name is used, made unique with "_1", "_2", ...
#ifndef TESSERA_GRAPH_BUILDER_GRAPH_BUILDER_H_
#define TESSERA_GRAPH_BUILDER_GRAPH_BUILDER_H_

#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/attribute.h"
#include "graph/graph.h"
#include "graph/op_registry.h"
#include "graph/tensor_type.h"

namespace tsr {

class GraphBuilder;

// One output of a node being built. A default-constructed Output is "no tensor" (an
// absent optional input); an Output returned after an error is invalid too.
// Outputs refer into their builder's graph and must not be used after Finish().
class Output {
 public:
  Output() = default;

  bool valid() const { return builder_ != nullptr && ref_.valid(); }
  TensorRef ref() const { return ref_; }
  GraphBuilder* builder() const { return builder_; }

  // The inferred type; an invalid dtype and scalar shape when !valid().
  const TensorType& type() const;
  const Shape& shape() const { return type().shape; }
  DType dtype() const { return type().dtype; }
  int rank() const { return shape().rank(); }
  // The tensor name ("node", or "node:1" for output 1); empty when !valid().
  std::string name() const;
  // The producing node; nullptr when !valid().
  const Node* node() const;

 private:
  friend class GraphBuilder;
  Output(GraphBuilder* builder, TensorRef ref) : builder_(builder), ref_(ref) {}

  GraphBuilder* builder_ = nullptr;
  TensorRef ref_;
};

class GraphBuilder {
 public:
  // Ops are looked up in `registry` (the global one by default), which must outlive the builder.
  GraphBuilder();
  explicit GraphBuilder(const OpRegistry& registry);
  // Continues building `graph` (one loaded from a file, say, to add its gradients and
  // optimizer): its node names and their scopes count as taken.
  explicit GraphBuilder(Graph graph);
  GraphBuilder(const GraphBuilder&) = delete;
  GraphBuilder& operator=(const GraphBuilder&) = delete;

  // While alive, names created by the builder start with the scope's prefix. Scopes
  // nest; destroying one restores the scope that was current when it was entered.
  class [[nodiscard]] NameScope {
   public:
    NameScope(NameScope&& other) noexcept;
    NameScope& operator=(NameScope&&) = delete;
    NameScope(const NameScope&) = delete;
    ~NameScope();

   private:
    friend class GraphBuilder;
    NameScope(GraphBuilder* builder, size_t restore_depth) : builder_(builder), restore_depth_(restore_depth) {}
    GraphBuilder* builder_;
    size_t restore_depth_;
  };

  // Enters scope `name` exactly (re-entering a scope is allowed: node names still
  // have to be unique). An empty name or one containing '/' or ':' is an error.
  NameScope Scope(absl::string_view name);
  // Enters `base`, or `base_1`, `base_2`, ... — the first that no node or earlier
  // scope under the current prefix uses. Layers use this: "dense", "dense_1".
  NameScope UniqueScope(absl::string_view base);
  // "block1/attn/" inside scopes block1 and attn; "" at the top level.
  std::string scope_prefix() const;

  // Adds a node of `op` and infers its types. `name` is the node name inside the
  // current scope (empty: the op name, made unique). Returns one Output per
  // inferred output. After an error: one invalid Output per output the OpDef
  // declares at least (a minimum of one), so that indexing stays safe.
  std::vector<Output> Op(absl::string_view op, const std::vector<Output>& inputs, AttrMap attrs = {},
                         absl::string_view name = {});
  // Op() for single-output use: output 0.
  Output Op1(absl::string_view op, const std::vector<Output>& inputs, AttrMap attrs = {}, absl::string_view name = {});

  // The Output of an existing tensor of the graph being built; invalid, with an error
  // recorded, when `ref` names no inferred output.
  Output Wrap(TensorRef ref);

  // A Placeholder named `name` (inside the current scope) that is also added to the
  // signature under `name`.
  Output Input(absl::string_view name, DType dtype, Shape shape);
  // Adds `output` to the signature under `name`.
  void MarkOutput(absl::string_view name, Output output);

  // Sticky error state.
  bool ok() const { return status_.ok(); }
  const absl::Status& status() const { return status_; }
  // Records `status` unless an error is already recorded (for helpers that check
  // their own arguments, e.g. layers). OK statuses are ignored.
  void RecordError(absl::Status status);

  // The graph so far (for inspection while building).
  const Graph& graph() const { return graph_; }

  // The first recorded error, else the graph after Graph::Verify(). The builder is
  // spent afterwards: later calls fail with FailedPrecondition.
  absl::StatusOr<Graph> Finish();

 private:
  friend class Output;
  // Checks that `inputs` belong to this builder; absent (default) Outputs pass through
  // as absent optional inputs.
  absl::Status ResolveInputs(absl::string_view node_name, absl::string_view op, const std::vector<Output>& inputs,
                             std::vector<TensorRef>& refs) const;
  NameScope PushScope(std::string full_path);
  // The full name (with scope prefix) for a node: `name` when given (it must be
  // free), else `base` made unique.
  std::string NodeName(absl::string_view name, absl::string_view base) const;

  Graph graph_;
  absl::Status status_;
  bool finished_ = false;
  // Full paths ("a/b") of the scopes on the stack, outermost first.
  std::vector<std::string> scopes_;
  // Every scope path entered so far, so that UniqueScope does not reuse one.
  absl::flat_hash_set<std::string> used_scopes_;
};

}  // namespace tsr

#endif  // TESSERA_GRAPH_BUILDER_GRAPH_BUILDER_H_

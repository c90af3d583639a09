// `OnnxExportContext`: what the export rule of one Tessera node sees — the ONNX names of
// its inputs and outputs (assigned before any rule runs), the target opset — and what it
// may do: add ONNX nodes and initializers under fresh names, and produce errors that name
// the node and its op. `OnnxExportRule`s (onnx_export_rules.cc) are looked up by op.
#ifndef TESSERA_GRAPH_ONNX_ONNX_EXPORT_CONTEXT_H_
#define TESSERA_GRAPH_ONNX_ONNX_EXPORT_CONTEXT_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/graph.h"
#include "graph/tensor.h"
#include "onnx/onnx_pb.h"

namespace tsr {

class OnnxExportContext {
 public:
  OnnxExportContext(const Graph& graph, int64_t opset, onnx::GraphProto& proto);

  const Graph& graph() const { return graph_; }
  int64_t opset() const { return opset_; }

  // Tensor names. Reserve/Claim make a name unavailable to UniqueName.
  bool IsNameUsed(absl::string_view name) const { return used_names_.contains(name); }
  void ReserveName(const std::string& name) { used_names_.insert(name); }
  // `base` if unused, else base_1, base_2, ...; the result is reserved.
  std::string UniqueName(absl::string_view base);
  void SetTensorName(TensorRef ref, std::string name) { tensor_names_[ref] = std::move(name); }
  bool HasTensorName(TensorRef ref) const { return tensor_names_.contains(ref); }
  // The ONNX name given to `ref`; "" when it has none.
  std::string NameOf(TensorRef ref) const;
  // Whether an exported node or graph output reads the tensor (unread optional outputs
  // are left out of the ONNX node).
  void MarkUsed(TensorRef ref) { used_tensors_.insert(ref); }
  bool IsUsed(TensorRef ref) const { return used_tensors_.contains(ref); }

  // The ONNX name of input i of `node`; "" for an absent optional input.
  std::string InputName(const Node& node, int i) const;
  // All input names, trailing absent ones dropped.
  std::vector<std::string> InputNames(const Node& node) const;
  // The ONNX name of output i of `node`; "" when nothing reads it and i > 0.
  std::string OutputName(const Node& node, int i) const;
  // All output names, trailing unread ones dropped.
  std::vector<std::string> OutputNames(const Node& node) const;

  // Adds an ONNX node (default domain) named `name` (made unique among node names).
  onnx::NodeProto* AddNode(absl::string_view op_type, std::vector<std::string> inputs, std::vector<std::string> outputs,
                           absl::string_view name);
  // Adds an initializer under a fresh name derived from `base`; returns the name.
  absl::StatusOr<std::string> AddInitializer(const Tensor& value, absl::string_view base);
  // A scalar initializer of `dtype` (a floating-point type) holding `value`.
  absl::StatusOr<std::string> AddScalar(double value, DType dtype, absl::string_view base);
  std::string AddInt64s(const std::vector<int64_t>& values, absl::string_view base);

  // InvalidArgument / Unimplemented "node 'name' (Op): message".
  absl::Status Error(const Node& node, absl::string_view message) const;
  absl::Status Unsupported(const Node& node, absl::string_view message) const;

 private:
  const Graph& graph_;
  int64_t opset_;
  onnx::GraphProto& proto_;
  absl::flat_hash_map<TensorRef, std::string> tensor_names_;
  absl::flat_hash_set<TensorRef> used_tensors_;
  absl::flat_hash_set<std::string> used_names_;
  absl::flat_hash_set<std::string> node_names_;
};

// Emits the ONNX nodes computing `node`'s outputs under ctx.OutputName(node, i).
using OnnxExportRule = std::function<absl::Status(const Node& node, OnnxExportContext& ctx)>;

// The rule for `op` at `opset`: a dedicated one (decompositions, opset rewrites, training
// ops that are refused), else the generic 1:1 rule when `op` is an ONNX op the importer
// maps to the same Tessera op and ONNX `opset` has it; else the reason there is none.
absl::StatusOr<OnnxExportRule> FindOnnxExportRule(const OpDef& def, int64_t opset);

// The 1:1 rule: the ONNX op of the same name, inputs in order (an input that ONNX
// `opset` takes as an attribute of the same name, like Reduce*'s axes before 18, must be
// a constant and becomes that attribute), attributes copied by name and converted to the
// schema's types (bool and dtype attributes become ints), those equal to ONNX's default
// left out. An attribute or input that the opset does not have is an error unless it
// holds the default / is absent. Attributes in `skip_attrs` are not exported.
absl::Status ExportDirect(const Node& node, OnnxExportContext& ctx, const std::vector<std::string>& skip_attrs = {});

}  // namespace tsr

#endif  // TESSERA_GRAPH_ONNX_ONNX_EXPORT_CONTEXT_H_

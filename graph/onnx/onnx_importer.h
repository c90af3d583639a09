// Import of ONNX models (opsets 11-18 of the default domain) into a Tessera Graph.
//
// The model is untrusted: every malformed, inconsistent, oversized or unsupported
// model gives an absl::Status naming the node (name, op type, opset), tensor or file
// and what was expected — never a crash, an allocation beyond the stated limits or a
// read outside the model's folder (external data). Unsupported ops and attributes are
// errors, never approximations. The result passes Graph::Verify().
//
// Mapping: graph inputs that are not initializers become Placeholders named after the
// input; initializers become Constants (or, on request, floating-point ones become
// trainable Variables); each ONNX node becomes one Tessera node named after its first
// output (a few become small exact subgraphs, e.g. Sum, opset-11 Softmax); graph
// outputs become signature outputs under their ONNX names. Nodes computable at import
// time (constant inputs, Shape of static shapes) become Constants named after their
// outputs, unless options.fold_constants is false.
//
// No ONNX or protobuf type appears here: callers need not see generated code.
#ifndef TESSERA_GRAPH_ONNX_ONNX_IMPORTER_H_
#define TESSERA_GRAPH_ONNX_ONNX_IMPORTER_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/graph.h"
#include "graph/tensor.h"

namespace tsr {

// Oldest and newest default-domain opset the importer understands. The op mappings
// follow the definitions in effect from opset kMinMappedOnnxOpset on; a node of an
// older model imports when its op's definition at the model's opset is the one in
// effect at that opset (Relu, Sin, And... unchanged since before it), and is an error
// naming the node and both definitions otherwise (Clip with min/max attributes,
// Softmax's 2-D coercion...): convert such models with onnx.version_converter.
inline constexpr int64_t kMinOnnxOpset = 1;
inline constexpr int64_t kMinMappedOnnxOpset = 11;
inline constexpr int64_t kMaxOnnxOpset = 18;

struct OnnxImportOptions {
  // Initializers become Constant nodes (inference), or — for fine-tuning — floating-point
  // initializers become trainable Variables holding the value. Integer and bool
  // initializers stay Constants either way: they are shapes, axes and indices that shape
  // inference needs as known values.
  bool initializers_as_variables = false;
  // Symbolic input dims (dim_param) bound to a size by name, e.g. {"batch", 64}.
  std::map<std::string, int64_t> dim_bindings;
  // Unbound symbolic dims (and dims without a size) become Tessera's one symbolic batch
  // dimension N. Only one distinct symbolic name may remain unbound; when false, every
  // symbolic dim must be bound.
  bool symbolic_dims_as_batch = true;
  // Graph inputs bound to values: each becomes a Constant holding its value and is not
  // fed at run time. A static graph needs the inputs that set output shapes — Resize's
  // scales or sizes, TopK's K, ConstantOfShape's shape — as values when the model takes
  // them as inputs (what TensorRT's shape tensors and XLA's compile-time constants do).
  // The value must have the declared dtype and rank, and each fixed dim's size.
  std::map<std::string, Tensor> input_values;
  // The model file (protobuf cannot parse 2 GiB or more whatever this says).
  int64_t max_model_bytes = (int64_t{2} << 30) - 1;
  // One tensor's data (initializer, Constant attribute, external data).
  int64_t max_tensor_bytes = int64_t{4} << 30;
  // Import-time constant folding (onnx_constant_folding.h): a node whose inputs are all
  // constants, or Shape/Size of a tensor with a static shape, becomes Constants holding
  // its outputs. Exporters compute Reshape shapes and Slice bounds with such chains;
  // without folding, models whose shape operands are not literal constants are
  // rejected (Tessera's shape inference needs them as values).
  bool fold_constants = true;
  // The most elements a folded node's tensors may have (see OnnxConstantFoldingOptions).
  int64_t max_folded_elements = int64_t{64} * 1024;
};

struct ImportedModel {
  Graph graph;
  // Graph inputs fed at run time (signature inputs), in the model's order. Inputs that
  // are also initializers (older exporters list weights as inputs) are not among them.
  std::vector<std::string> input_names;
  // Signature outputs, in the model's order.
  std::vector<std::string> output_names;
  // Initializers, in the model's order: the names of their Constant/Variable nodes.
  std::vector<std::string> initializer_names;
  // ONNX nodes replaced by Constants through import-time folding.
  int64_t num_folded_nodes = 0;
  int64_t opset_version = 0;  // of the default domain
  int64_t ir_version = 0;
  std::string producer_name;
};

// Parses a serialized ModelProto. External data is resolved inside `model_dir`; with an
// empty `model_dir`, a model that refers to external data is rejected.
absl::StatusOr<ImportedModel> ImportOnnxModelFromBytes(absl::string_view bytes, const OnnxImportOptions& options = {},
                                                       absl::string_view model_dir = "");

// Reads `path` (at most options.max_model_bytes) and imports it; external data is
// resolved in the file's folder. Errors are prefixed with the path.
absl::StatusOr<ImportedModel> ImportOnnxModel(absl::string_view path, const OnnxImportOptions& options = {});

// ImportOnnxModel(path, options)'s graph alone, for tools that treat ONNX models like
// GraphDef files (`tessera run model.onnx`).
absl::StatusOr<Graph> LoadOnnxGraph(const std::string& path, const OnnxImportOptions& options = {});

// Whether `path` names an ONNX model (extension ".onnx", any case).
bool IsOnnxModelPath(absl::string_view path);

}  // namespace tsr

#endif  // TESSERA_GRAPH_ONNX_ONNX_IMPORTER_H_

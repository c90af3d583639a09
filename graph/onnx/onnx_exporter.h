// Export of a Tessera Graph as an ONNX model (default domain, opset 17 by default).
//
// What becomes what: signature inputs (and any other Placeholder the outputs need) become
// graph inputs with their shapes, the batch dimension N as the symbolic dim "N" or a
// fixed size; Constants become initializers, and so do Variables, holding the values
// given in the options (e.g. read from a Session or a checkpoint) or, for frozen graphs,
// their 'value' attribute; the signature outputs (or, for a graph without any, the first
// output of every node nothing reads) become graph outputs under their names. Only the
// nodes those outputs need are exported.
//
// Ops: every Tessera op whose name is an ONNX op with the same semantics — the ops the
// importer maps 1:1 — is exported as that op, attributes copied by name (those equal to
// ONNX's default are left out); opset-dependent forms are rewritten for the target
// opset (Reduce* axes as attributes before opset 18, Split's num_outputs as sizes), and
// Tessera-only ops are decomposed exactly (Silu, Gelu, Rsqrt). Training ops (optimizer
// updates, gradients, Assign) and anything else without an export rule are errors naming
// the node and op: nothing is approximated.
//
// No ONNX or protobuf type appears here (the ModelProto form is in onnx_export_model.h).
#ifndef TESSERA_GRAPH_ONNX_ONNX_EXPORTER_H_
#define TESSERA_GRAPH_ONNX_ONNX_EXPORTER_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "graph/op_def.h"
#include "graph/tensor.h"

namespace tsr {

// The opsets the exporter can target: 13 (Squeeze, Unsqueeze, Split and ReduceSum take
// their axes as inputs, as in Tessera) through 17, the newest the ONNX checker linked
// here knows.
inline constexpr int64_t kMinOnnxExportOpset = 13;
inline constexpr int64_t kMaxOnnxExportOpset = 17;
inline constexpr int64_t kDefaultOnnxExportOpset = 17;

struct OnnxExportOptions {
  int64_t opset = kDefaultOnnxExportOpset;
  // 0: the batch dimension stays symbolic, as the dim_param `batch_dim_name`; > 0: it
  // becomes this fixed size in the inputs' and outputs' shapes.
  int64_t batch_size = 0;
  std::string batch_dim_name = "N";
  // What to export as graph outputs: signature output names or tensor names ("node",
  // "node:1"). Empty: the signature outputs, or when there are none the first output of
  // every node no other node reads (Placeholders, Constants and Variables excepted).
  std::vector<std::string> outputs;
  // Values of Variables by node name; a Variable missing here uses its 'value' attribute,
  // and one with neither is an error.
  std::map<std::string, Tensor> variable_values;
  // Run the ONNX checker and strict shape inference on the result (ExportOnnxModelToBytes
  // and SaveOnnxModel); a failure is an Internal error naming the check.
  bool check = true;
  std::string producer_name = "tessera";
  std::string graph_name = "tessera";
};

struct OnnxExportStats {
  int64_t nodes = 0;         // ONNX nodes
  int64_t initializers = 0;  // ONNX initializers
  int64_t bytes = 0;         // serialized model size
};

// The serialized ModelProto.
absl::StatusOr<std::string> ExportOnnxModelToBytes(const Graph& graph, const OnnxExportOptions& options = {},
                                                   OnnxExportStats* stats = nullptr);

// Exports and writes the model to `path` atomically (temp file in the same folder,
// fsync, rename): on any failure an existing file is left untouched and no partial file
// remains. Errors are prefixed with the path when they concern the file.
absl::Status SaveOnnxModel(const Graph& graph, const std::string& path, const OnnxExportOptions& options = {},
                           OnnxExportStats* stats = nullptr);

// Whether nodes of `def` can be exported at `opset`: Ok, or the reason they cannot (a
// node may still fail for its attributes, e.g. a non-constant axes input). For listings
// and tests.
absl::Status OnnxExportSupport(const OpDef& def, int64_t opset = kDefaultOnnxExportOpset);

}  // namespace tsr

#endif  // TESSERA_GRAPH_ONNX_ONNX_EXPORTER_H_

// The ModelProto form of the ONNX export (onnx_exporter.h), for callers that already use
// ONNX's generated types (tests, tools that post-process the model).
#ifndef TESSERA_GRAPH_ONNX_ONNX_EXPORT_MODEL_H_
#define TESSERA_GRAPH_ONNX_ONNX_EXPORT_MODEL_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "graph/onnx/onnx_exporter.h"
#include "onnx/onnx_pb.h"

namespace tsr {

// Builds the model; does not run the checker (options.check is ignored here).
absl::StatusOr<onnx::ModelProto> ExportOnnxModel(const Graph& graph, const OnnxExportOptions& options = {});

// onnx::checker::check_model, then strict shape inference (which also checks every
// node's input types against its schema); ONNX's exceptions become Internal errors.
// `model` is not modified.
absl::Status CheckOnnxModel(const onnx::ModelProto& model);

}  // namespace tsr

#endif  // TESSERA_GRAPH_ONNX_ONNX_EXPORT_MODEL_H_

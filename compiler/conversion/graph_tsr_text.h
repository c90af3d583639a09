// Graph <-> tsr dialect text, for code outside compiler/ (no MLIR headers here). The MLIR-level
// API (ImportGraph / ExportGraph on a ModuleOp) is compiler/conversion/graph_tsr.h.
#ifndef TESSERA_COMPILER_CONVERSION_GRAPH_TSR_TEXT_H_
#define TESSERA_COMPILER_CONVERSION_GRAPH_TSR_TEXT_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/graph.h"

namespace tsr {

// The graph as a tsr module in MLIR's textual form, node names as `loc("name")`. The graph's
// nodes must have inferred types (Graph::InferAllTypes).
absl::StatusOr<std::string> GraphToTsrText(const Graph& graph);

// Parses and verifies a tsr module (as GraphToTsrText prints, or written by hand) into a graph
// over the global op registry. Malformed text, unknown ops and wrong types give an
// InvalidArgument status carrying MLIR's diagnostics with their locations.
absl::StatusOr<Graph> TsrTextToGraph(absl::string_view text);

}  // namespace tsr

#endif  // TESSERA_COMPILER_CONVERSION_GRAPH_TSR_TEXT_H_

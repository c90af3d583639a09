// Reading and writing graphs as GraphDef files (graph/proto/graph_def.proto), in
// protobuf's binary or text format.
//
// Writing records every node in id order with its inputs, attributes and inferred
// output types, and the signature; reading rebuilds the same Graph. Reading treats its
// input as hostile: every malformed, inconsistent or oversized file gives an
// absl::Status naming what is wrong and where (the node, attribute and, for text, the
// line), never a crash and never an allocation beyond a small multiple of the file's
// size (about 30x at worst, for a binary node made of empty input names, most of it
// protobuf's own objects; op shape functions must bound their outputs for this to
// hold). Types are re-inferred and the result passes Graph::Verify().
//
// No protobuf type appears here: callers need not link against generated code.
#ifndef TESSERA_GRAPH_PROTO_GRAPH_DEF_IO_H_
#define TESSERA_GRAPH_PROTO_GRAPH_DEF_IO_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/graph.h"

namespace tsr {

enum class GraphFormat { kBinary, kText };

struct GraphLoadOptions {
  // Larger inputs are rejected before parsing. Protobuf cannot parse more than
  // 2 GiB - 1 bytes whatever this says.
  int64_t max_bytes = int64_t{2} << 30;
};

// ".pb"/".tsrg" -> binary, ".pbtxt"/".txt" -> text (case-insensitive); an error naming
// the path otherwise.
absl::StatusOr<GraphFormat> GraphFormatFromPath(absl::string_view path);

// The graph as a GraphDef. Nodes without inferred types are written without recorded
// output types (a reader infers them). Fails when a tensor has no name that reads back
// as itself (an input naming a missing node, or output 1 of "a" next to a node named
// "a:1") and when the binary encoding would pass protobuf's 2 GiB limit.
absl::StatusOr<std::string> SerializeGraph(const Graph& graph, GraphFormat format);

// Parses, converts, infers types and runs Graph::Verify(). Never crashes, never
// allocates more than a small multiple of the input size.
absl::StatusOr<Graph> ParseGraph(absl::string_view bytes, GraphFormat format, const GraphLoadOptions& options = {});

// Writes atomically (temp file in the same folder + fsync + rename): a failure leaves
// any existing file intact. The format follows the path's extension.
absl::Status SaveGraph(const Graph& graph, const std::string& path);

// Reads the file (rejecting it before reading when it is larger than max_bytes) and
// parses it in the format its extension names. Errors are prefixed with the path.
absl::StatusOr<Graph> LoadGraph(const std::string& path, const GraphLoadOptions& options = {});

}  // namespace tsr

#endif  // TESSERA_GRAPH_PROTO_GRAPH_DEF_IO_H_

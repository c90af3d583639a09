// GraphDef files: the format named by the extension, atomic saving and size-bounded
// loading (platform/file.h); the parsing itself is in graph_def_io.cc.
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "graph/proto/graph_def_io.h"
#include "graph/status_macros.h"
#include "platform/file.h"

namespace tsr {

absl::StatusOr<GraphFormat> GraphFormatFromPath(absl::string_view path) {
  for (absl::string_view ext : {".pb", ".tsrg"}) {
    if (absl::EndsWithIgnoreCase(path, ext)) return GraphFormat::kBinary;
  }
  for (absl::string_view ext : {".pbtxt", ".txt"}) {
    if (absl::EndsWithIgnoreCase(path, ext)) return GraphFormat::kText;
  }
  return absl::InvalidArgumentError(absl::StrCat("cannot tell the graph format of '", path,
                                                 "': expected a .pb or .tsrg (binary) or .pbtxt or .txt (text) file"));
}

absl::Status SaveGraph(const Graph& graph, const std::string& path) {
  const std::string where = absl::StrCat("saving graph '", path, "': ");
  absl::StatusOr<GraphFormat> format = GraphFormatFromPath(path);
  if (!format.ok()) return format.status();
  absl::StatusOr<std::string> bytes = SerializeGraph(graph, *format);
  if (!bytes.ok()) return absl::Status(bytes.status().code(), absl::StrCat(where, bytes.status().message()));
  absl::Status written = WriteFileAtomically(path, *bytes);
  if (!written.ok()) return absl::Status(written.code(), absl::StrCat(where, written.message()));
  return absl::OkStatus();
}

absl::StatusOr<Graph> LoadGraph(const std::string& path, const GraphLoadOptions& options) {
  const std::string where = absl::StrCat("loading graph '", path, "': ");
  absl::StatusOr<GraphFormat> format = GraphFormatFromPath(path);
  if (!format.ok()) return format.status();
  absl::StatusOr<std::string> bytes = ReadFileBounded(path, options.max_bytes, "GraphLoadOptions::max_bytes");
  if (!bytes.ok()) return absl::Status(bytes.status().code(), absl::StrCat(where, bytes.status().message()));
  absl::StatusOr<Graph> graph = ParseGraph(*bytes, *format, options);
  if (!graph.ok()) return absl::Status(graph.status().code(), absl::StrCat(where, graph.status().message()));
  return graph;
}

}  // namespace tsr

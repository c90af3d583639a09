// `tessera convert IN OUT`: rewrites a GraphDef between the binary (.pb, .tsrg) and
// text (.pbtxt) formats, chosen by extension; the input is verified on load.
#include "absl/strings/str_cat.h"
#include "graph/proto/graph_def_io.h"
#include "tools/command.h"

namespace tsr::cli {

namespace {

constexpr absl::string_view kUsage = "tessera convert IN OUT";
constexpr absl::string_view kDescription =
    "Loads the GraphDef IN, verifies it, and writes it to OUT. Each file's format\n"
    "follows its extension: .pb or .tsrg for binary, .pbtxt or .txt for text. OUT is\n"
    "replaced atomically.";

absl::string_view FormatName(GraphFormat format) { return format == GraphFormat::kBinary ? "binary" : "text"; }

}  // namespace

int RunConvert(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  FlagParser flags;
  absl::StatusOr<std::vector<std::string>> positionals = flags.Parse(args);
  if (!positionals.ok()) return UsageError(err, "convert", positionals.status().message());
  if (flags.help_requested()) {
    PrintHelp(out, kUsage, kDescription, flags);
    return kExitOk;
  }
  if (positionals->size() != 2) {
    return UsageError(err, "convert", absl::StrCat("expected IN and OUT, got ", positionals->size(), " arguments"));
  }
  const std::string& in = (*positionals)[0];
  const std::string& dest = (*positionals)[1];
  // Both extensions are checked before any work so that a typo costs nothing.
  absl::StatusOr<GraphFormat> in_format = GraphFormatFromPath(in);
  if (!in_format.ok()) return UsageError(err, "convert", in_format.status().message());
  absl::StatusOr<GraphFormat> out_format = GraphFormatFromPath(dest);
  if (!out_format.ok()) return UsageError(err, "convert", out_format.status().message());

  absl::StatusOr<Graph> graph = LoadGraph(in);
  if (!graph.ok()) return Failure(err, "convert", graph.status());
  if (absl::Status s = SaveGraph(*graph, dest); !s.ok()) return Failure(err, "convert", s);
  out << "converted " << in << " (" << FormatName(*in_format) << ") -> " << dest << " (" << FormatName(*out_format)
      << "): " << graph->num_nodes() << " nodes\n";
  return kExitOk;
}

}  // namespace tsr::cli

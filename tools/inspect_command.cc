// `tessera inspect MODEL`: totals, signature and a per-node table of a GraphDef file,
// as text or JSON.
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "graph/builder/model_summary.h"
#include "graph/proto/graph_def_io.h"
#include "tools/command.h"

namespace tsr::cli {

namespace {

constexpr absl::string_view kUsage = "tessera inspect [--top N] [--json] MODEL";
constexpr absl::string_view kDescription =
    "Loads MODEL (a GraphDef: .pb or .tsrg binary, .pbtxt text), verifies it and prints\n"
    "its totals — nodes, ops by type, parameters (elements of Variables, trainable and\n"
    "not), constant elements, their bytes, estimated FLOPs per example (batch = 1) —\n"
    "its signature, and a table of nodes with output types, parameters and FLOPs.";

// A JSON string literal.
std::string Quote(absl::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += absl::StrFormat("\\u%04x", static_cast<unsigned char>(c));
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string SignatureJson(const std::vector<SignatureSummary>& entries) {
  std::string out = "[";
  for (size_t i = 0; i < entries.size(); ++i) {
    const SignatureSummary& e = entries[i];
    absl::StrAppend(&out, i == 0 ? "" : ", ", "{\"name\": ", Quote(e.name), ", \"tensor\": ", Quote(e.tensor),
                    ", \"type\": ", Quote(e.type.ToString()), "}");
  }
  return out + "]";
}

std::string SummaryJson(absl::string_view path, const ModelSummary& s, int top) {
  std::string out = "{\n";
  absl::StrAppend(&out, "  \"model\": ", Quote(path), ",\n");
  absl::StrAppend(&out, "  \"nodes\": ", s.num_nodes, ",\n");
  absl::StrAppend(&out, "  \"ops\": {");
  for (size_t i = 0; i < s.op_counts.size(); ++i) {
    absl::StrAppend(&out, i == 0 ? "" : ", ", Quote(s.op_counts[i].first), ": ", s.op_counts[i].second);
  }
  absl::StrAppend(&out, "},\n");
  absl::StrAppend(&out, "  \"parameters\": {\"total\": ", s.params(), ", \"trainable\": ", s.trainable_params,
                  ", \"non_trainable\": ", s.non_trainable_params, ", \"bytes\": ", s.param_bytes, "},\n");
  absl::StrAppend(&out, "  \"constants\": {\"elements\": ", s.constant_elements, ", \"bytes\": ", s.constant_bytes,
                  "},\n");
  absl::StrAppend(&out, "  \"flops_per_example\": ", s.flops, ",\n");
  absl::StrAppend(&out, "  \"signature\": {\"inputs\": ", SignatureJson(s.inputs),
                  ", \"outputs\": ", SignatureJson(s.outputs), "},\n");
  absl::StrAppend(&out, "  \"table\": [");
  const std::vector<const NodeSummary*> rows = HeaviestNodes(s, top);
  for (size_t i = 0; i < rows.size(); ++i) {
    const NodeSummary& n = *rows[i];
    std::string outputs;
    for (size_t k = 0; k < n.outputs.size(); ++k)
      absl::StrAppend(&outputs, k == 0 ? "" : ", ", Quote(n.outputs[k].ToString()));
    absl::StrAppend(&out, i == 0 ? "\n" : ",\n", "    {\"name\": ", Quote(n.name), ", \"op\": ", Quote(n.op),
                    ", \"outputs\": [", outputs, "], \"params\": ", n.params, ", \"flops\": ", n.flops, "}");
  }
  absl::StrAppend(&out, rows.empty() ? "]\n" : "\n  ]\n", "}\n");
  return out;
}

}  // namespace

int RunInspect(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  FlagParser flags;
  int64_t top = 0;
  bool json = false;
  flags.AddInt("top", '\0', "N", &top, "show only the N nodes with the most FLOPs (then parameters); 0: all, in order");
  flags.AddBool("json", '\0', &json, "print JSON instead of text");
  absl::StatusOr<std::vector<std::string>> positionals = flags.Parse(args);
  if (!positionals.ok()) return UsageError(err, "inspect", positionals.status().message());
  if (flags.help_requested()) {
    PrintHelp(out, kUsage, kDescription, flags);
    return kExitOk;
  }
  if (positionals->size() != 1) {
    return UsageError(err, "inspect", absl::StrCat("expected one MODEL argument, got ", positionals->size()));
  }
  if (top < 0 || top > (int64_t{1} << 30)) {
    return UsageError(err, "inspect", absl::StrCat("--top must be a count of nodes, not ", top));
  }
  const int rows = top == 0 ? -1 : static_cast<int>(top);
  const std::string& path = (*positionals)[0];
  absl::StatusOr<Graph> graph = LoadGraph(path);
  if (!graph.ok()) return Failure(err, "inspect", graph.status());
  absl::StatusOr<ModelSummary> summary = SummarizeModel(*graph);
  if (!summary.ok()) return Failure(err, "inspect", summary.status());
  if (json) {
    out << SummaryJson(path, *summary, rows);
  } else {
    out << "model: " << path << "\n" << FormatModelSummary(*summary, rows);
  }
  return kExitOk;
}

}  // namespace tsr::cli

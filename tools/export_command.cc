// `tessera export MODEL --format onnx -o OUT.onnx`: writes a model that `tessera run`
// accepts (GraphDef or ONNX) as an ONNX model (graph/onnx/onnx_exporter.h), checked by
// ONNX's checker. Variables without a stored value get the values `tessera run` would
// give them (initialized from --seed), so both runtimes compute the same outputs.
#include <map>

#include "absl/strings/str_cat.h"
#include "graph/onnx/onnx_exporter.h"
#include "graph/onnx/onnx_importer.h"
#include "graph/proto/graph_def_io.h"
#include "platform/file.h"
#include "runtime/session.h"
#include "tools/command.h"
#include "tools/variable_values.h"

namespace tsr::cli {

namespace {

constexpr absl::string_view kUsage =
    "tessera export MODEL --format onnx -o OUT.onnx [--opset N] [--batch-symbolic | --batch-size N] [--seed N]\n"
    "                      [--no-check]";
constexpr absl::string_view kDescription =
    "Loads MODEL (a GraphDef: .pb or .tsrg binary, .pbtxt text; or an ONNX model, .onnx)\n"
    "and writes it as an ONNX model (default domain, opset 17 unless --opset, 13 to 17)\n"
    "to OUT, replaced atomically. The signature inputs become graph inputs and the\n"
    "signature outputs graph outputs, under their names; the batch dimension stays the\n"
    "symbolic dim \"N\" (--batch-symbolic, the default) or becomes --batch-size N.\n"
    "Constants and Variables become initializers: a Variable holding a value (a model\n"
    "saved by 'tessera train --save') keeps it, others get the values 'tessera run'\n"
    "initializes them with from --seed. Ops without an ONNX form (training ops) are\n"
    "errors naming the node. The result passes ONNX's checker and shape inference\n"
    "(skipped with --no-check).";

}  // namespace

int RunExport(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  FlagParser flags;
  std::string format, output;
  int64_t opset = kDefaultOnnxExportOpset, batch_size = 0, seed = 0;
  bool batch_symbolic = false, no_check = false;
  flags.AddString("format", 'f', "FORMAT", &format, "the output format: onnx");
  flags.AddString("output", 'o', "FILE", &output, "where to write the model");
  flags.AddInt("opset", '\0', "N", &opset, "the ONNX opset to target, 13 to 17 (default 17)");
  flags.AddBool("batch-symbolic", '\0', &batch_symbolic, "keep the batch dimension symbolic as \"N\" (the default)");
  flags.AddInt("batch-size", '\0', "N", &batch_size, "fix the batch dimension to N in the inputs and outputs");
  flags.AddInt("seed", '\0', "N", &seed, "seed of the initializers of Variables without a value (default 0)");
  flags.AddBool("no-check", '\0', &no_check, "skip ONNX's checker and shape inference");
  absl::StatusOr<std::vector<std::string>> positionals = flags.Parse(args);
  if (!positionals.ok()) return UsageError(err, "export", positionals.status().message());
  if (flags.help_requested()) {
    PrintHelp(out, kUsage, kDescription, flags);
    return kExitOk;
  }
  if (positionals->size() != 1) {
    return UsageError(err, "export", absl::StrCat("expected one MODEL, got ", positionals->size(), " arguments"));
  }
  if (format.empty()) return UsageError(err, "export", "--format is required (known: onnx)");
  if (format != "onnx") return UsageError(err, "export", absl::StrCat("unknown --format '", format, "' (known: onnx)"));
  if (output.empty()) return UsageError(err, "export", "-o OUT.onnx is required");
  if (opset < kMinOnnxExportOpset || opset > kMaxOnnxExportOpset) {
    return UsageError(err, "export",
                      absl::StrCat("--opset must be in [", kMinOnnxExportOpset, ", ", kMaxOnnxExportOpset, "]"));
  }
  if (batch_size < 0) return UsageError(err, "export", "--batch-size must be positive");
  if (batch_symbolic && batch_size > 0) {
    return UsageError(err, "export", "--batch-symbolic and --batch-size exclude each other");
  }
  if (seed < 0) return UsageError(err, "export", "--seed must not be negative");

  const std::string& model = (*positionals)[0];
  absl::StatusOr<Graph> graph = IsOnnxModelPath(model) ? LoadOnnxGraph(model) : LoadGraph(model);
  if (!graph.ok()) return Failure(err, "export", graph.status());
  OnnxExportOptions options;
  options.opset = opset;
  options.batch_size = batch_size;
  options.check = !no_check;
  absl::StatusOr<std::map<std::string, Tensor>> values = InitialVariableValues(*graph, static_cast<uint64_t>(seed));
  if (!values.ok()) return Failure(err, "export", values.status());
  options.variable_values = *std::move(values);
  OnnxExportStats stats;
  absl::StatusOr<std::string> bytes = ExportOnnxModelToBytes(*graph, options, &stats);
  if (!bytes.ok()) {
    return Failure(err, "export",
                   absl::Status(bytes.status().code(), absl::StrCat(model, ": ", bytes.status().message())));
  }
  if (absl::Status s = WriteFileAtomically(output, *bytes); !s.ok()) return Failure(err, "export", s);
  out << "exported " << model << " -> " << output << " (ONNX opset " << opset << "): " << stats.nodes << " nodes, "
      << stats.initializers << " initializers, " << stats.bytes << " bytes\n";
  return kExitOk;
}

}  // namespace tsr::cli

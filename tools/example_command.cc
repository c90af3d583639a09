// `tessera example NAME -o FILE`: builds one of the example models
// (examples/models.h), verifies it, saves it as a GraphDef and prints its summary.
#include "absl/strings/str_cat.h"
#include "examples/models.h"
#include "graph/builder/model_summary.h"
#include "graph/proto/graph_def_io.h"
#include "tools/command.h"

namespace tsr::cli {

namespace {

constexpr absl::string_view kUsage = "tessera example NAME [-o FILE] [--training]";
constexpr absl::string_view kDescription =
    "Builds an example model, verifies it, saves it as a GraphDef (binary for .pb or\n"
    ".tsrg, text for .pbtxt) and prints its summary. NAME is one of:\n"
    "  mlp    784-256-256-10 multilayer perceptron; input \"image\" f32[N,784]\n"
    "  lenet  LeNet-5 style CNN; input \"image\" f32[N,1,28,28]\n"
    "Both output \"logits\" f32[N,10].";

}  // namespace

int RunExample(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  FlagParser flags;
  std::string output;
  bool training = false;
  flags.AddString("output", 'o', "FILE", &output, "where to save the model (default: NAME.pb)");
  flags.AddBool("training", '\0', &training,
                "add the training head: input \"labels\" i64[N] and output \"loss\" (softmax cross-entropy)");
  absl::StatusOr<std::vector<std::string>> positionals = flags.Parse(args);
  if (!positionals.ok()) return UsageError(err, "example", positionals.status().message());
  if (flags.help_requested()) {
    PrintHelp(out, kUsage, kDescription, flags);
    return kExitOk;
  }
  if (positionals->size() != 1) {
    return UsageError(err, "example",
                      absl::StrCat("expected one NAME (mlp or lenet), got ", positionals->size(), " arguments"));
  }
  const std::string& name = (*positionals)[0];
  if (output.empty()) output = absl::StrCat(name, ".pb");
  if (absl::StatusOr<GraphFormat> format = GraphFormatFromPath(output); !format.ok()) {
    return UsageError(err, "example", format.status().message());
  }

  absl::StatusOr<Graph> graph;
  if (name == "mlp") {
    graph = examples::BuildMlp({.training_head = training});
  } else if (name == "lenet") {
    graph = examples::BuildLeNet({.training_head = training});
  } else {
    return UsageError(err, "example", absl::StrCat("unknown example '", name, "' (known: mlp, lenet)"));
  }
  if (!graph.ok()) return Failure(err, "example", graph.status());
  if (absl::Status s = SaveGraph(*graph, output); !s.ok()) return Failure(err, "example", s);
  absl::StatusOr<ModelSummary> summary = SummarizeModel(*graph);
  if (!summary.ok()) return Failure(err, "example", summary.status());
  out << "saved " << name << " to " << output << "\n" << FormatModelSummary(*summary);
  return kExitOk;
}

}  // namespace tsr::cli

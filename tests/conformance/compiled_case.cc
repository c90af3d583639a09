// RunCompiledCase: import, compile, load, run and compare one ONNX node-test folder on the
// compiled path (compiled_case.h).
#include "tests/conformance/compiled_case.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "compiler/pipeline/compile_graph.h"
#include "graph/shape.h"
#include "runtime/compiled/compiled_program.h"
#include "runtime/session.h"
#include "tests/conformance/node_test_case.h"

namespace tsr::conformance {

namespace {

using Feeds = std::vector<std::pair<std::string, Tensor>>;

absl::Status Categorized(absl::string_view category, const absl::Status& s) {
  return absl::Status(s.code(), absl::StrCat(category, ": ", s.message()));
}

absl::Status Error(absl::string_view category, absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat(category, ": ", message));
}

// The data set's tensors of the inputs `model` still feeds (the others were bound as
// constants at import).
Feeds FeedsOf(const NodeTestCase& test_case, const NodeTestDataSet& set, const ImportedModel& model) {
  Feeds feeds;
  for (size_t i = 0; i < set.inputs.size() && i < test_case.input_names.size(); ++i) {
    const std::string& name = test_case.input_names[i];
    if (std::find(model.input_names.begin(), model.input_names.end(), name) != model.input_names.end()) {
      feeds.emplace_back(name, set.inputs[i]);
    }
  }
  return feeds;
}

// The size the graph's symbolic batch dimension N takes in `feeds` (every input dim that
// is N must have the same size), or 1 when no input has one: the executable's inputs
// then have exactly the feeds' shapes.
absl::StatusOr<int64_t> BatchOf(const Graph& graph, const Feeds& feeds) {
  std::optional<int64_t> batch;
  for (const SignatureEntry& input : graph.inputs()) {
    const TensorType* type = graph.TypeOf(input.ref);
    if (type == nullptr) continue;
    auto feed = std::find_if(feeds.begin(), feeds.end(), [&](const auto& f) { return f.first == input.name; });
    if (feed == feeds.end()) return Error("data", absl::StrCat("graph input '", input.name, "' is not fed"));
    const Shape& shape = type->shape;
    const Shape& fed = feed->second.shape();
    if (shape.rank() != fed.rank()) {
      return Error("data", absl::StrCat("graph input '", input.name, "' has the shape ", shape.ToString(),
                                        " but is fed ", fed.ToString()));
    }
    for (int d = 0; d < shape.rank(); ++d) {
      if (shape.dim(d) != kBatchDim) continue;
      if (batch.has_value() && *batch != fed.dim(d)) {
        return Error("data", absl::StrCat("the batch dimension N is ", *batch, " in one input and ", fed.dim(d),
                                          " in dim ", d, " of '", input.name, "'"));
      }
      batch = fed.dim(d);
    }
  }
  return batch.value_or(1);
}

absl::StatusOr<std::unique_ptr<CompiledProgram>> CompileAndLoad(const Graph& graph, int64_t batch, int threads) {
  CompileOptions compile_options;
  compile_options.batch = batch;
  compile_options.threads = threads;
  absl::StatusOr<Executable> executable = CompileGraph(graph, compile_options);
  if (!executable.ok()) return Categorized("compile", executable.status());
  absl::StatusOr<std::unique_ptr<CompiledProgram>> program =
      CompiledProgram::Load(*std::move(executable), {.threads = threads});
  if (!program.ok()) return Categorized("load", program.status());
  return program;
}

// Runs `set` on the interpreter and on `program` and compares the compiled outputs
// with the expected and the interpreter's ones.
absl::Status CheckDataSet(const ImportedModel& model, CompiledProgram& program, const Feeds& feeds,
                          const NodeTestDataSet& set, const CompiledCaseOptions& options) {
  if (set.expected.size() != model.output_names.size()) {
    return Error("output", absl::StrCat("the model has ", model.output_names.size(), " outputs but the data set",
                                        set.label, " expects ", set.expected.size()));
  }
  absl::StatusOr<std::unique_ptr<Session>> session =
      Session::Create(model.graph.Clone(), {.num_threads = options.num_threads, .device = "cpu"});
  if (!session.ok()) return Categorized("run: the interpreter", session.status());
  absl::StatusOr<std::vector<Tensor>> interpreted = (*session)->Run(feeds, model.output_names);
  if (!interpreted.ok()) return Categorized("run: the interpreter", interpreted.status());

  absl::StatusOr<std::vector<Tensor>> compiled = program.Run(feeds);
  if (!compiled.ok()) return Categorized("run", compiled.status());
  if (compiled->size() != model.output_names.size() || interpreted->size() != model.output_names.size()) {
    return Error("output", absl::StrCat("the compiled program returned ", compiled->size(), " outputs for ",
                                        model.output_names.size()));
  }
  for (size_t i = 0; i < model.output_names.size(); ++i) {
    const std::string output = absl::StrCat("output '", model.output_names[i], "'", set.label);
    if (absl::Status s = CompareOutput(set.expected[i], (*compiled)[i], options.expected_tolerance); !s.ok()) {
      return Error("mismatch", absl::StrCat(output, ": ", s.message()));
    }
    if (absl::Status s = CompareOutput((*interpreted)[i], (*compiled)[i], options.interpreter_tolerance); !s.ok()) {
      return Error("disagree", absl::StrCat(output, " vs the interpreter: ", s.message()));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status RunCompiledCase(const std::string& case_dir, const CompiledCaseOptions& options) {
  absl::StatusOr<NodeTestCase> test_case = ReadNodeTestCase(case_dir);
  if (!test_case.ok()) return test_case.status();
  absl::StatusOr<ImportedModel> plain = ImportNodeTestModel(*test_case, nullptr);
  if (!plain.ok() && !options.bind_inputs) return plain.status();

  // A model that imports as it is compiles once for all data sets; one that needs its
  // inputs bound compiles once per data set.
  std::unique_ptr<CompiledProgram> program;
  int64_t program_batch = 0;
  for (const NodeTestDataSet& set : test_case->data_sets) {
    std::optional<ImportedModel> bound;
    if (!plain.ok()) {
      absl::StatusOr<ImportedModel> rebound = ImportNodeTestModel(*test_case, &set);
      if (!rebound.ok()) return plain.status();
      bound = *std::move(rebound);
      program.reset();
    }
    const ImportedModel& model = bound.has_value() ? *bound : *plain;
    const Feeds feeds = FeedsOf(*test_case, set, model);
    absl::StatusOr<int64_t> batch = BatchOf(model.graph, feeds);
    if (!batch.ok()) return batch.status();
    if (program == nullptr || program_batch != *batch) {
      absl::StatusOr<std::unique_ptr<CompiledProgram>> loaded =
          CompileAndLoad(model.graph, *batch, options.num_threads);
      if (!loaded.ok()) return loaded.status();
      program = *std::move(loaded);
      program_batch = *batch;
    }
    if (absl::Status s = CheckDataSet(model, *program, feeds, set, options); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace tsr::conformance

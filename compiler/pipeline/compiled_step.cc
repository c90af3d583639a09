// CompiledStepCompiler: CompileGraph + CompiledProgram::Load behind the Trainer's
// StepProgram interface.
#include "compiler/pipeline/compiled_step.h"

#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "compiler/pipeline/compile_graph.h"
#include "graph/status_macros.h"
#include "runtime/compiled/compiled_program.h"

namespace tsr {
namespace {

class CompiledStep : public StepProgram {
 public:
  CompiledStep(std::unique_ptr<CompiledProgram> program, std::vector<int> fetch_indices, std::string summary)
      : program_(std::move(program)), fetch_indices_(std::move(fetch_indices)), summary_(std::move(summary)) {}

  absl::StatusOr<std::vector<Tensor>> Run(const Batch& feeds, uint64_t step, RunMetadata* metadata) override {
    // The program's inputs only: an evaluation step has no learning rate, for one.
    Batch used;
    used.reserve(program_->inputs().size());
    for (const CompiledSignatureEntry& input : program_->inputs()) {
      for (const auto& [name, tensor] : feeds) {
        if (name == input.name) {
          used.emplace_back(name, tensor);
          break;
        }
      }
    }
    TSR_ASSIGN_OR_RETURN(std::vector<Tensor> outputs, program_->Run(used, metadata, step));
    std::vector<Tensor> fetched;
    fetched.reserve(fetch_indices_.size());
    for (int i : fetch_indices_) fetched.push_back(std::move(outputs[i]));
    return fetched;
  }

  std::vector<std::string> VariableNames() const override {
    std::vector<std::string> names;
    for (const CompiledSignatureEntry& v : program_->variables()) names.push_back(v.name);
    return names;
  }
  absl::StatusOr<Tensor> ReadVariable(absl::string_view name) override { return program_->ReadVariable(name); }
  absl::Status AssignVariable(absl::string_view name, const Tensor& value) override {
    return program_->AssignVariable(name, value);
  }
  std::string Summary() const override { return summary_; }

 private:
  std::unique_ptr<CompiledProgram> program_;
  std::vector<int> fetch_indices_;  // per fetch, its index among the program's outputs
  std::string summary_;
};

absl::StatusOr<std::unique_ptr<StepProgram>> CompileStep(const CompiledStepOptions& step_options,
                                                         const StepProgramSpec& spec) {
  if (spec.graph == nullptr) return absl::InvalidArgumentError("no graph to compile");
  const bool training = !spec.targets.empty();
  CompileOptions options;
  options.batch = spec.batch;
  options.threads = spec.threads;
  options.variables_as_state = true;
  options.targets = spec.targets;
  options.variable_values = spec.variable_values;
  options.fuse = step_options.fuse;
  if (!step_options.dump_ir_dir.empty()) {
    options.dump_ir_dir = absl::StrCat(step_options.dump_ir_dir, "/", training ? "train" : "eval", "-b", spec.batch);
  }
  CompileStats stats;
  TSR_ASSIGN_OR_RETURN(Executable executable, CompileGraph(*spec.graph, options, &stats));
  TSR_ASSIGN_OR_RETURN(
      std::unique_ptr<CompiledProgram> program,
      CompiledProgram::Load(std::move(executable),
                            {.threads = spec.threads, .seed = spec.seed, .collective_groups = spec.collective_groups}));
  std::vector<int> fetch_indices;
  for (const std::string& fetch : spec.fetches) {
    int found = -1;
    for (size_t i = 0; i < program->outputs().size(); ++i) {
      if (program->outputs()[i].name == fetch) found = static_cast<int>(i);
    }
    if (found < 0) return absl::InvalidArgumentError(absl::StrCat("the compiled step has no output '", fetch, "'"));
    fetch_indices.push_back(found);
  }
  std::string summary = absl::StrFormat("%s, %.2f MB arena, compiled in %.2f s", stats.fusion_summary,
                                        static_cast<double>(stats.arena_bytes) / 1e6, stats.total_seconds);
  return std::make_unique<CompiledStep>(std::move(program), std::move(fetch_indices), std::move(summary));
}

}  // namespace

StepCompiler CompiledStepCompiler(CompiledStepOptions options) {
  return [options](const StepProgramSpec& spec) { return CompileStep(options, spec); };
}

}  // namespace tsr

// `StepProgram`: a step of the Trainer compiled ahead of time for one batch size — the
// training step (forward, backward, optimizer and model updates as one program) or the
// evaluation forward — and `StepCompiler`, what makes one. The Trainer runs its steps on
// compiled programs when TrainerOptions::step_compiler is set, on the interpreter
// (Session) otherwise. The runtime does not link the compiler: the compiler side
// (compiler/pipeline/compiled_step.h) supplies the StepCompiler.
//
// A program keeps its own copy of the Variables it uses (state that persists between
// runs); the Trainer copies them between the program and its Session when it switches
// from one to the other (runtime/trainer/trainer.h), not on every step.
#ifndef TESSERA_RUNTIME_TRAINER_STEP_PROGRAM_H_
#define TESSERA_RUNTIME_TRAINER_STEP_PROGRAM_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/graph.h"
#include "graph/tensor.h"
#include "runtime/data/dataset.h"
#include "runtime/run_metadata.h"

namespace tsr {

class CollectiveGroups;  // runtime/collectives/collective_groups.h

// What to compile.
struct StepProgramSpec {
  const Graph* graph = nullptr;      // the training graph (model, loss, gradients, updates)
  std::vector<std::string> fetches;  // signature outputs returned by Run, in this order
  // The update nodes a training step runs (Session::Run's targets); empty: an evaluation
  // step, which changes no Variable.
  std::vector<std::string> targets;
  int64_t batch = 1;  // the batch dimension the program is compiled for
  int threads = 0;    // 0: one per core
  uint64_t seed = 0;  // random streams: (seed, step) as the Session draws them
  // Current values of the Variables (the program starts with them).
  std::map<std::string, Tensor> variable_values;
  // When `graph` is one device's program of a partitioned step: that device's
  // communicators, for its collective ops (strategies/distributed_step.h).
  std::shared_ptr<CollectiveGroups> collective_groups;
};

class StepProgram {
 public:
  virtual ~StepProgram() = default;

  // One step: `feeds` by input name (feeds the program has no input for are ignored),
  // the random streams keyed by `step`; returns the spec's fetches.
  virtual absl::StatusOr<std::vector<Tensor>> Run(const Batch& feeds, uint64_t step, RunMetadata* metadata) = 0;
  // The Variables the program holds.
  virtual std::vector<std::string> VariableNames() const = 0;
  virtual absl::StatusOr<Tensor> ReadVariable(absl::string_view name) = 0;
  virtual absl::Status AssignVariable(absl::string_view name, const Tensor& value) = 0;
  // One line for progress output: "212 ops -> 41 kernels, compiled in 0.31 s".
  virtual std::string Summary() const = 0;
};

using StepCompiler = std::function<absl::StatusOr<std::unique_ptr<StepProgram>>(const StepProgramSpec&)>;

}  // namespace tsr

#endif  // TESSERA_RUNTIME_TRAINER_STEP_PROGRAM_H_

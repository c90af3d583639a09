// `Trainer`: the training loop. It turns a model graph with a loss into a training
// graph (autodiff + optimizer, graph/builder/optimizers.h), runs it over a Dataset
// epoch by epoch (runtime/data/pipeline.h: shuffled by (seed, epoch)), evaluates on a
// held-out set after each epoch, feeds the learning rate from a schedule, shows a
// progress bar, writes TensorBoard scalars and checkpoints, and resumes from the
// latest checkpoint exactly where it stopped.
//
//   TSR_ASSIGN_OR_RETURN(Graph model, examples::BuildMlp({.training_head = true}));
//   TSR_ASSIGN_OR_RETURN(auto trainer, Trainer::Create(std::move(model), {.epochs = 5}));
//   TSR_ASSIGN_OR_RETURN(TrainResult result, trainer->Fit(train_set, test_set));
//
// The model's signature must have inputs "image" and "labels" and outputs "logits"
// ([N, classes]) and "loss" (a scalar), as the example models build with their
// training head.
//
// Resuming is exact: the checkpoint holds every Variable (weights, optimizer slots,
// global_step) and the position in the data (epoch, batch); the data order of an
// epoch depends only on (seed, epoch) and the learning rate only on the step, so a run
// interrupted and resumed ends with the same weights, bit for bit, as one that was not.
#ifndef TESSERA_RUNTIME_TRAINER_TRAINER_H_
#define TESSERA_RUNTIME_TRAINER_TRAINER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/builder/optimizers.h"
#include "graph/graph.h"
#include "runtime/data/dataset.h"
#include "runtime/session.h"
#include "runtime/trainer/step_program.h"

namespace tsr {

struct TrainerOptions {
  int64_t epochs = 10;
  int64_t batch_size = 64;
  // Stop after this many steps in total (0: run all epochs).
  int64_t max_steps = 0;
  double learning_rate = 0.05;
  std::string schedule = "constant";  // runtime/trainer/lr_schedule.h's text form
  OptimizerOptions optimizer;
  uint64_t seed = 0;  // variable initialization and data order
  int num_threads = 0;
  std::string device = "cpu";
  std::string checkpoint_dir;          // empty: no checkpoints
  int64_t checkpoint_every_steps = 0;  // 0: at the end of each epoch only
  int keep_checkpoints = 3;
  bool resume = true;  // continue from checkpoint_dir's latest checkpoint
  // false: checkpoint_dir is only read (resumed from), never written — the ranks > 0 of a
  // data-parallel job, whose rank 0 writes the checkpoints they all resume from.
  bool write_checkpoints = true;
  std::string logdir;  // TensorBoard event files; empty: none
  int64_t log_every_steps = 20;
  bool progress = true;             // progress bars and per-epoch lines
  std::ostream* out = nullptr;      // default std::cerr
  std::optional<bool> interactive;  // progress bars redrawn in place; default: stderr is a terminal
  // Compiles the training step and the evaluation forward, one program per batch size met
  // (compiler/pipeline/compiled_step.h's CompiledStepCompiler); null: the interpreter
  // (Session) runs them. A step that does not compile runs on the interpreter, with a note
  // — unless fallback_to_interpreter is false (a strategy's partitioned steps, which must
  // not quietly run on one device): then that is the step's error.
  StepCompiler step_compiler;
  bool fallback_to_interpreter = true;
};

struct EvalResult {
  double loss = 0;
  double accuracy = 0;
  int64_t examples = 0;
};

struct EpochResult {
  int64_t epoch = 0;  // 0-based
  double train_loss = 0;
  double train_accuracy = 0;
  EvalResult eval;  // zeros without an evaluation set
  double seconds = 0;
  double examples_per_second = 0;
};

struct TrainResult {
  std::vector<EpochResult> epochs;  // the epochs run by this call
  int64_t steps = 0;                // global steps after training
  int64_t resumed_from_step = -1;   // -1: started fresh
};

class Trainer {
 public:
  static absl::StatusOr<std::unique_ptr<Trainer>> Create(Graph model, TrainerOptions options);

  // Trains on `train`, evaluating on `eval` (may be null) after every epoch.
  absl::StatusOr<TrainResult> Fit(std::shared_ptr<const Dataset> train, std::shared_ptr<const Dataset> eval);
  // Mean loss and accuracy over `data` with the current weights.
  absl::StatusOr<EvalResult> Evaluate(const std::shared_ptr<const Dataset>& data);

  // One training step on `batch` (the model's inputs by name) at `learning_rate`:
  // forward, backward, the optimizer's and the model's own updates (BatchNorm
  // statistics), the step counter. Returns {logits, loss} before the update.
  // `metadata`, when non-null, receives per-op timings.
  absl::StatusOr<std::vector<Tensor>> Step(Batch batch, double learning_rate, RunMetadata* metadata = nullptr);

  // The interpreter session: it runs the steps when nothing is compiled and holds the
  // Variables checkpoints save. When steps run on compiled programs, its Variables are
  // current after SyncVariables() — which Fit and Evaluate call before they return.
  Session& session() { return *session_; }
  // Copies the Variables from the compiled program that last changed them into the
  // session; the next compiled step starts from the session's values (so values set
  // there in between take effect).
  absl::Status SyncVariables();
  // The nodes one training step runs (the optimizer updates and the step counter).
  const std::vector<std::string>& update_nodes() const { return update_nodes_; }
  // The current value of the "global_step" Variable.
  int64_t global_step() const;

 private:
  Trainer() = default;
  absl::StatusOr<std::vector<Tensor>> RunStep(Batch batch, double learning_rate, int64_t step, RunMetadata* metadata);
  // Runs a training (or evaluation) step on `feeds`: on the compiled program for its batch
  // size when there is one, else on the session.
  absl::StatusOr<std::vector<Tensor>> Execute(const Batch& feeds, bool training, uint64_t step, RunMetadata* metadata);
  // The compiled program for (training, batch); null when nothing compiles (it is then
  // compiled at most once, and a failure is noted once).
  // The step's program; null when it runs on the interpreter.
  absl::StatusOr<StepProgram*> ProgramFor(bool training, int64_t batch);
  // Makes `program`'s Variables current: copied from the session, after the session got
  // those of the training program that last ran.
  absl::Status Activate(StepProgram* program, bool training);

  TrainerOptions options_;
  std::unique_ptr<Session> session_;
  std::vector<std::string> update_nodes_;
  DType loss_dtype_ = DType::kF32;
  // The model has nn::TrainingFlag's "training" input: fed true in training steps and
  // false in evaluation.
  bool has_training_flag_ = false;

  struct CompiledStep {
    bool training = false;
    int64_t batch = 0;
    std::unique_ptr<StepProgram> program;  // null: it did not compile
  };
  std::vector<CompiledStep> compiled_;
  // The program whose copies of the Variables are current (null: none is); when
  // `session_current_` is false the session's are stale and `active_` is a training step.
  StepProgram* active_ = nullptr;
  bool session_current_ = true;
};

}  // namespace tsr

#endif  // TESSERA_RUNTIME_TRAINER_TRAINER_H_

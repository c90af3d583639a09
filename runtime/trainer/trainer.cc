// Trainer: training-graph construction, the epoch loop, evaluation, checkpoints,
// TensorBoard scalars and progress output.
#include "runtime/trainer/trainer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "graph/builder/graph_builder.h"
#include "graph/builder/nn.h"
#include "graph/status_macros.h"
#include "runtime/checkpoint/checkpoint_manager.h"
#include "runtime/data/pipeline.h"
#include "runtime/summary/summary_writer.h"
#include "runtime/trainer/lr_schedule.h"
#include "runtime/trainer/progress_bar.h"

namespace tsr {

namespace {

constexpr char kLogits[] = "logits";
constexpr char kLoss[] = "loss";

const SignatureEntry* FindEntry(const std::vector<SignatureEntry>& entries, absl::string_view name) {
  for (const SignatureEntry& e : entries) {
    if (e.name == name) return &e;
  }
  return nullptr;
}

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

// Correct predictions of `logits` [B, C] against `labels` [B].
int64_t CountCorrect(const Tensor& logits, const Tensor& labels) {
  if (logits.shape().rank() != 2 || labels.num_elements() != logits.shape().dim(0)) return 0;
  const int64_t batch = logits.shape().dim(0), classes = logits.shape().dim(1);
  int64_t correct = 0;
  for (int64_t i = 0; i < batch; ++i) {
    int64_t best = 0;
    for (int64_t c = 1; c < classes; ++c) {
      if (logits.GetAsDouble(i * classes + c) > logits.GetAsDouble(i * classes + best)) best = c;
    }
    if (best == labels.GetAsInt64(i)) ++correct;
  }
  return correct;
}

Tensor ScalarOf(DType dtype, double value) {
  Tensor t(dtype, Shape({}));
  if (dtype == DType::kF64) {
    t.flat<double>()[0] = value;
  } else {
    t.flat<float>()[0] = static_cast<float>(value);
  }
  return t;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Trainer>> Trainer::Create(Graph model, TrainerOptions options) {
  if (options.epochs < 1) return absl::InvalidArgumentError(absl::StrCat("epochs is ", options.epochs, "; need >= 1"));
  if (options.batch_size < 1) {
    return absl::InvalidArgumentError(absl::StrCat("batch size is ", options.batch_size, "; need >= 1"));
  }
  for (const char* name : {"image", "labels"}) {
    if (FindEntry(model.inputs(), name) == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("the model has no input '", name,
                                                     "' (it needs inputs 'image' and "
                                                     "'labels' and outputs 'logits' and 'loss')"));
    }
  }
  const SignatureEntry* loss = FindEntry(model.outputs(), kLoss);
  const SignatureEntry* logits = FindEntry(model.outputs(), kLogits);
  if (loss == nullptr || logits == nullptr) {
    return absl::InvalidArgumentError("the model needs outputs 'logits' and 'loss' (build it with its training head)");
  }
  const TensorRef loss_ref = loss->ref;
  auto trainer = std::unique_ptr<Trainer>(new Trainer());
  trainer->options_ = std::move(options);
  if (trainer->options_.out == nullptr) trainer->options_.out = &std::cerr;

  // The model's own variable updates (e.g. BatchNorm's moving statistics) run with
  // every training step, beside the optimizer's.
  std::vector<std::string> model_updates;
  for (const Node* node : model.nodes()) {
    if (node->op_def() != nullptr && !node->op_def()->variable_updates.empty()) model_updates.push_back(node->name());
  }
  const Node* flag = model.FindNode(nn::kTrainingFlagName);
  trainer->has_training_flag_ = flag != nullptr && flag->op() == "Placeholder";
  GraphBuilder b(std::move(model));
  const Output loss_out = b.Wrap(loss_ref);
  trainer->loss_dtype_ = loss_out.dtype();
  TrainingOps train = Minimize(b, loss_out, TrainableVariables(b), trainer->options_.optimizer);
  trainer->update_nodes_ = train.update_nodes;
  trainer->update_nodes_.insert(trainer->update_nodes_.end(), model_updates.begin(), model_updates.end());
  absl::StatusOr<Graph> graph = b.Finish();
  if (!graph.ok()) {
    return absl::Status(graph.status().code(), absl::StrCat("building the training graph: ", graph.status().message()));
  }
  TSR_ASSIGN_OR_RETURN(trainer->session_,
                       Session::Create(*std::move(graph), {.num_threads = trainer->options_.num_threads,
                                                           .device = trainer->options_.device,
                                                           .seed = trainer->options_.seed}));
  return trainer;
}

absl::StatusOr<std::vector<Tensor>> Trainer::Step(Batch batch, double learning_rate, RunMetadata* metadata) {
  return RunStep(std::move(batch), learning_rate, global_step(), metadata);
}

absl::StatusOr<std::vector<Tensor>> Trainer::RunStep(Batch batch, double learning_rate, int64_t step,
                                                     RunMetadata* metadata) {
  batch.push_back({"learning_rate", ScalarOf(loss_dtype_, learning_rate)});
  if (has_training_flag_) batch.push_back({nn::kTrainingFlagName, Tensor::Scalar(true)});
  // Random ops draw by the global step, so a resumed run draws what the uninterrupted
  // one did (the session's own run counter restarts at 0).
  return Execute(batch, /*training=*/true, static_cast<uint64_t>(step), metadata);
}

absl::StatusOr<std::vector<Tensor>> Trainer::Execute(const Batch& feeds, bool training, uint64_t step,
                                                     RunMetadata* metadata) {
  int64_t batch = 0;
  for (const auto& [name, t] : feeds) {
    if (name == "labels") batch = t.num_elements();
  }
  StepProgram* program = nullptr;
  if (options_.step_compiler) {
    TSR_ASSIGN_OR_RETURN(program, ProgramFor(training, batch));
  }
  if (program != nullptr) {
    TSR_RETURN_IF_ERROR(Activate(program, training));
    return program->Run(feeds, step, metadata);
  }
  TSR_RETURN_IF_ERROR(SyncVariables());
  std::vector<std::string> targets;
  if (training) targets = update_nodes_;
  return session_->Run(feeds, {kLogits, kLoss}, {.targets = targets, .step = step, .metadata = metadata});
}

absl::StatusOr<StepProgram*> Trainer::ProgramFor(bool training, int64_t batch) {
  for (const CompiledStep& c : compiled_) {
    if (c.training == training && c.batch == batch) return c.program.get();
  }
  StepProgramSpec spec;
  spec.graph = &session_->graph();
  spec.fetches = {kLogits, kLoss};
  if (training) spec.targets = update_nodes_;
  spec.batch = batch;
  spec.threads = options_.num_threads;
  spec.seed = options_.seed;
  // Starting values only: Activate copies the current ones in before the first run.
  for (const std::string& name : session_->VariableNames()) {
    absl::StatusOr<Tensor> value = session_->GetVariable(name);
    if (value.ok()) spec.variable_values[name] = *std::move(value);
  }
  absl::StatusOr<std::unique_ptr<StepProgram>> program = options_.step_compiler(spec);
  std::ostream& out = *options_.out;
  const char* what = training ? "training step" : "evaluation step";
  if (!program.ok() && !options_.fallback_to_interpreter) {
    return absl::Status(program.status().code(),
                        absl::StrCat("the ", what, " for batch ", batch, ": ", program.status().message()));
  }
  if (program.ok()) {
    if (options_.progress)
      out << "compiled the " << what << " for batch " << batch << ": " << (*program)->Summary() << "\n";
  } else {
    out << "note: the " << what << " for batch " << batch << " does not compile (" << program.status().message()
        << "); the interpreter runs it\n";
  }
  compiled_.push_back({training, batch, program.ok() ? *std::move(program) : nullptr});
  return compiled_.back().program.get();
}

absl::Status Trainer::SyncVariables() {
  if (!session_current_) {
    for (const std::string& name : active_->VariableNames()) {
      TSR_ASSIGN_OR_RETURN(Tensor value, active_->ReadVariable(name));
      TSR_RETURN_IF_ERROR(session_->SetVariable(name, value));
    }
    session_current_ = true;
  }
  active_ = nullptr;
  return absl::OkStatus();
}

absl::Status Trainer::Activate(StepProgram* program, bool training) {
  if (active_ != program) {
    TSR_RETURN_IF_ERROR(SyncVariables());
    for (const std::string& name : program->VariableNames()) {
      TSR_ASSIGN_OR_RETURN(Tensor value, session_->GetVariable(name));
      TSR_RETURN_IF_ERROR(program->AssignVariable(name, value));
    }
    active_ = program;
  }
  // A training step changes the program's Variables: the session's are stale from now.
  if (training) session_current_ = false;
  return absl::OkStatus();
}

int64_t Trainer::global_step() const {
  absl::StatusOr<Tensor> step =
      session_current_ ? session_->GetVariable("global_step") : active_->ReadVariable("global_step");
  return step.ok() ? step->GetAsInt64(0) : 0;
}

absl::StatusOr<EvalResult> Trainer::Evaluate(const std::shared_ptr<const Dataset>& data) {
  TSR_ASSIGN_OR_RETURN(
      Pipeline pipeline,
      Pipeline::Create(data, {.batch_size = options_.batch_size, .shuffle = false, .prefetch_batches = 2}));
  EvalResult result;
  double loss_sum = 0;
  int64_t correct = 0;
  EpochIterator it = pipeline.Epoch(0);
  while (std::optional<Batch> batch = it.Next()) {
    // Grown before `labels` points into it.
    if (has_training_flag_) batch->push_back({nn::kTrainingFlagName, Tensor::Scalar(false)});
    // Unused by the forward pass, but an input of the training graph that a compiled
    // evaluation step is compiled from.
    batch->push_back({"learning_rate", ScalarOf(loss_dtype_, 0.0)});
    const Tensor* labels = nullptr;
    for (const auto& [name, t] : *batch) {
      if (name == "labels") labels = &t;
    }
    if (labels == nullptr) return absl::InvalidArgumentError(absl::StrCat(data->source(), ": no 'labels' feature"));
    const int64_t n = labels->num_elements();
    TSR_ASSIGN_OR_RETURN(std::vector<Tensor> out, Execute(*batch, /*training=*/false, 0, nullptr));
    loss_sum += out[1].GetAsDouble(0) * static_cast<double>(n);
    correct += CountCorrect(out[0], *labels);
    result.examples += n;
  }
  TSR_RETURN_IF_ERROR(SyncVariables());
  if (result.examples > 0) {
    result.loss = loss_sum / static_cast<double>(result.examples);
    result.accuracy = static_cast<double>(correct) / static_cast<double>(result.examples);
  }
  return result;
}

absl::StatusOr<TrainResult> Trainer::Fit(std::shared_ptr<const Dataset> train, std::shared_ptr<const Dataset> eval) {
  const TrainerOptions& o = options_;
  std::ostream& out = *o.out;
  TSR_ASSIGN_OR_RETURN(
      Pipeline pipeline,
      Pipeline::Create(train, {.batch_size = o.batch_size, .shuffle = true, .seed = o.seed, .prefetch_batches = 2}));
  const int64_t per_epoch = pipeline.batches_per_epoch();
  int64_t total_steps = o.epochs * per_epoch;
  if (o.max_steps > 0) total_steps = std::min(total_steps, o.max_steps);
  TSR_ASSIGN_OR_RETURN(LearningRateSchedule schedule,
                       ParseLearningRateSchedule(o.schedule, o.learning_rate, total_steps));

  TrainResult result;
  std::optional<CheckpointManager> checkpoints;
  if (!o.checkpoint_dir.empty()) {
    TSR_ASSIGN_OR_RETURN(CheckpointManager manager,
                         CheckpointManager::Create(o.checkpoint_dir, {.max_to_keep = o.keep_checkpoints}));
    checkpoints.emplace(std::move(manager));
    if (o.resume) {
      absl::StatusOr<RestoredCheckpoint> restored = checkpoints->RestoreLatest(*session_);
      if (restored.ok()) {
        result.resumed_from_step = restored->step;
        if (o.progress) out << "resumed from " << restored->path << " (step " << restored->step << ")\n";
      } else if (!absl::IsNotFound(restored.status())) {
        return restored.status();
      }
    }
  }
  std::unique_ptr<SummaryWriter> summary;
  if (!o.logdir.empty()) {
    TSR_ASSIGN_OR_RETURN(summary, SummaryWriter::Create(o.logdir));
  }
  auto save = [&](int64_t step, int64_t epoch) -> absl::Status {
    if (!checkpoints.has_value()) return absl::OkStatus();
    // Every rank syncs, the ones that do not write too: under a strategy whose Variables
    // are split over the processes, reading them is a collective all ranks take part in.
    TSR_RETURN_IF_ERROR(SyncVariables());
    if (!o.write_checkpoints) return absl::OkStatus();
    return checkpoints->Save(*session_, step, {{"epoch", absl::StrCat(epoch)}, {"schedule", schedule.ToString()}})
        .status();
  };

  // Each step consumes one batch and every epoch has per_epoch batches, so the step
  // alone says where in the data a resumed run continues.
  int64_t step = global_step();
  for (int64_t epoch = step / per_epoch; epoch < o.epochs; ++epoch) {
    if (o.max_steps > 0 && step >= o.max_steps) break;
    const auto start = std::chrono::steady_clock::now();
    EpochIterator it = pipeline.Epoch(epoch);
    for (int64_t skip = step - epoch * per_epoch; skip > 0; --skip) it.Next();
    ProgressBar bar(absl::StrCat("epoch ", epoch + 1, "/", o.epochs), per_epoch,
                    {.out = o.progress ? &out : nullptr, .interactive = o.interactive});
    double loss_sum = 0;
    int64_t correct = 0, examples = 0;
    while (std::optional<Batch> batch = it.Next()) {
      if (o.max_steps > 0 && step >= o.max_steps) break;
      // A handle (sharing the buffer): the batch grows below, which moves its elements.
      Tensor labels;
      for (const auto& [name, t] : *batch) {
        if (name == "labels") labels = t;
      }
      if (!labels.valid()) return absl::InvalidArgumentError(absl::StrCat(train->source(), ": no 'labels' feature"));
      const double lr = schedule.At(step);
      absl::StatusOr<std::vector<Tensor>> fetched = RunStep(*std::move(batch), lr, step, nullptr);
      if (!fetched.ok()) {
        return absl::Status(fetched.status().code(),
                            absl::StrCat("training step ", step, ": ", fetched.status().message()));
      }
      const int64_t n = labels.num_elements();
      const double loss = (*fetched)[1].GetAsDouble(0);
      if (!std::isfinite(loss)) {
        return absl::InvalidArgumentError(
            absl::StrCat("training step ", step, ": the loss is ", loss, " (learning rate ", lr, "); stopping"));
      }
      loss_sum += loss * static_cast<double>(n);
      correct += CountCorrect((*fetched)[0], labels);
      examples += n;
      ++step;
      if (o.progress) {
        bar.Update(it.batches_returned(), examples,
                   {{"loss", loss_sum / static_cast<double>(examples)},
                    {"acc", static_cast<double>(correct) / static_cast<double>(examples)}});
      }
      if (summary != nullptr && step % std::max<int64_t>(o.log_every_steps, 1) == 0) {
        TSR_RETURN_IF_ERROR(summary->AddScalar("train/loss", static_cast<float>(loss), step));
        TSR_RETURN_IF_ERROR(summary->AddScalar("train/learning_rate", static_cast<float>(lr), step));
      }
      if (o.checkpoint_every_steps > 0 && step % o.checkpoint_every_steps == 0) TSR_RETURN_IF_ERROR(save(step, epoch));
    }
    EpochResult er;
    er.epoch = epoch;
    er.seconds = Seconds(start);
    if (examples > 0) {
      er.train_loss = loss_sum / static_cast<double>(examples);
      er.train_accuracy = static_cast<double>(correct) / static_cast<double>(examples);
      er.examples_per_second = static_cast<double>(examples) / std::max(er.seconds, 1e-9);
    }
    if (o.progress) bar.Finish(examples, {{"loss", er.train_loss}, {"acc", er.train_accuracy}});
    if (eval != nullptr) {
      TSR_ASSIGN_OR_RETURN(er.eval, Evaluate(eval));
      if (o.progress) {
        out << absl::StrFormat("epoch %d/%d: test loss %.4f, test accuracy %.4f (%d examples)\n", epoch + 1, o.epochs,
                               er.eval.loss, er.eval.accuracy, er.eval.examples);
      }
    }
    if (summary != nullptr) {
      TSR_RETURN_IF_ERROR(summary->AddScalar("epoch/train_loss", static_cast<float>(er.train_loss), step));
      TSR_RETURN_IF_ERROR(summary->AddScalar("epoch/train_accuracy", static_cast<float>(er.train_accuracy), step));
      TSR_RETURN_IF_ERROR(
          summary->AddScalar("epoch/examples_per_second", static_cast<float>(er.examples_per_second), step));
      if (eval != nullptr) {
        TSR_RETURN_IF_ERROR(summary->AddScalar("epoch/test_loss", static_cast<float>(er.eval.loss), step));
        TSR_RETURN_IF_ERROR(summary->AddScalar("epoch/test_accuracy", static_cast<float>(er.eval.accuracy), step));
      }
      TSR_RETURN_IF_ERROR(summary->Flush());
    }
    result.epochs.push_back(er);
    TSR_RETURN_IF_ERROR(save(step, epoch));
  }
  TSR_RETURN_IF_ERROR(SyncVariables());
  result.steps = step;
  return result;
}

}  // namespace tsr

// PipelineStrategy and the pipelined step (see pipeline.h).
#include "strategies/pipeline.h"

#include <algorithm>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "graph/status_macros.h"
#include "graph/tensor_block.h"
#include "partitioner/pipeline_stages.h"
#include "runtime/device_threads.h"
#include "strategies/pipeline_stage_runner.h"

namespace tsr {

std::string PipelineStrategy::name() const {
  return absl::StrCat("pipeline(", plan_.stages, " stages, ", plan_.microbatches, " micro-batches, ",
                      PipelineScheduleName(plan_.schedule), ")");
}

absl::StatusOr<StrategyPlan> PipelineStrategy::Plan(const Graph&) const {
  if (plan_.stages < 1 || plan_.stages > 64) {
    return absl::InvalidArgumentError(absl::StrCat("a pipeline of ", plan_.stages, " stages (1 to 64)"));
  }
  if (plan_.microbatches < 1 || plan_.microbatches > 4096) {
    return absl::InvalidArgumentError(absl::StrCat(plan_.microbatches, " micro-batches (1 to 4096)"));
  }
  TSR_ASSIGN_OR_RETURN(DeviceMesh mesh, DeviceMesh::Create({MeshAxis{"pipe", plan_.stages}}));
  StrategyPlan plan{std::move(mesh), {}};
  plan.pipeline = plan_;
  return plan;
}

namespace {

// Micro-batch m of `count` over `batch` rows: rows [begin, end), as even as they go.
struct MicrobatchRows {
  int64_t begin, end;
};
MicrobatchRows Microbatch(int64_t batch, int64_t count, int64_t m) {
  return {batch * m / count, batch * (m + 1) / count};
}

// How many micro-batches a batch of `batch` rows is cut into (no empty ones).
int64_t MicrobatchCount(const PipelinePlan& plan, int64_t batch) {
  return batch > 0 ? std::min<int64_t>(plan.microbatches, batch) : 1;
}

// Tensors handed from the task that makes them to the tasks that read them, by (tensor,
// micro-batch); an entry goes when its last reader took it.
class Mailbox {
 public:
  Mailbox(int stages, absl::Duration timeout) : timeout_(timeout), held_(stages, 0), peak_(stages, 0) {}

  void Put(const std::string& tensor, int microbatch, int stage, Tensor value, int readers) {
    std::lock_guard<std::mutex> lock(mu_);
    held_[stage] += static_cast<int64_t>(value.num_bytes());
    peak_[stage] = std::max(peak_[stage], held_[stage]);
    entries_[{tensor, microbatch}] = Entry{std::move(value), readers, stage};
    ready_.notify_all();
  }

  absl::StatusOr<Tensor> Take(const std::string& tensor, int microbatch, int stage) {
    std::unique_lock<std::mutex> lock(mu_);
    const auto key = std::make_pair(tensor, microbatch);
    const bool arrived = ready_.wait_for(lock, absl::ToChronoMilliseconds(timeout_),
                                         [&] { return !failed_.ok() || entries_.contains(key); });
    if (!failed_.ok())
      return absl::AbortedError(absl::StrCat("stage ", stage, ": the pipeline stopped: ", failed_.message()));
    if (!arrived) {
      return absl::DeadlineExceededError(absl::StrCat("pipeline stage ", stage, " waited ",
                                                      absl::FormatDuration(timeout_), " for '", tensor,
                                                      "' of micro-batch ", microbatch));
    }
    Entry& entry = entries_.at(key);
    Tensor value = entry.value;
    if (--entry.readers <= 0) {
      held_[entry.stage] -= static_cast<int64_t>(entry.value.num_bytes());
      entries_.erase(key);
    }
    return value;
  }

  void Fail(const absl::Status& status) {
    std::lock_guard<std::mutex> lock(mu_);
    if (failed_.ok()) failed_ = status;
    ready_.notify_all();
  }

  std::vector<int64_t> peak() const {
    std::lock_guard<std::mutex> lock(mu_);
    return peak_;
  }

 private:
  struct Entry {
    Tensor value;
    int readers = 0;
    int stage = 0;
  };
  const absl::Duration timeout_;
  mutable std::mutex mu_;
  std::condition_variable ready_;
  std::map<std::pair<std::string, int>, Entry> entries_;
  std::vector<int64_t> held_, peak_;
  absl::Status failed_;
};

// acc += weight * g (acc empty: weight * g).
absl::Status Accumulate(Tensor& acc, const Tensor& g, double weight, const std::string& name) {
  if (!acc.valid()) acc = Tensor(g.dtype(), g.shape());
  if (acc.type() != g.type()) {
    return absl::InternalError(absl::StrCat("gradient '", name, "' changed type between micro-batches"));
  }
  if (g.dtype() == DType::kF32) {
    float* a = acc.data<float>();
    const float* x = g.data<float>();
    const float w = static_cast<float>(weight);
    for (int64_t i = 0; i < g.num_elements(); ++i) a[i] += w * x[i];
  } else if (g.dtype() == DType::kF64) {
    double* a = acc.data<double>();
    const double* x = g.data<double>();
    for (int64_t i = 0; i < g.num_elements(); ++i) a[i] += weight * x[i];
  } else {
    return absl::UnimplementedError(
        absl::StrCat("gradient '", name, "' is ", DTypeName(g.dtype()), "; micro-batches accumulate f32 and f64"));
  }
  return absl::OkStatus();
}

class PipelineStep : public StepProgram {
 public:
  PipelineStep(PipelinePlan plan, PipelineProgram program, std::vector<std::unique_ptr<PipelineStageRunner>> stages,
               const StepProgramSpec& spec, PipelineStepOptions options, std::string compile_failure)
      : plan_(std::move(plan)),
        program_(std::move(program)),
        stages_(std::move(stages)),
        stage_threads_(static_cast<int>(stages_.size())),
        fetches_(spec.fetches),
        options_(options),
        tasks_(PipelineTasks(plan_.schedule, plan_.stages, plan_.microbatches)),
        compile_failure_(std::move(compile_failure)) {
    for (const Node* node : spec.graph->nodes()) {
      if (node->op() != "Placeholder") continue;
      const Shape& shape = node->output_type(0).shape;
      if (shape.rank() > 0 && shape.dim(0) == kBatchDim) batch_inputs_.insert(node->name());
    }
    for (const SignatureEntry& e : spec.graph->inputs()) {
      const TensorType* type = spec.graph->TypeOf(e.ref);
      if (type != nullptr && type->shape.rank() > 0 && type->shape.dim(0) == kBatchDim) batch_inputs_.insert(e.name);
    }
    for (const std::string& f : fetches_) {
      for (const SignatureEntry& e : spec.graph->outputs()) {
        if (e.name == f) fetch_types_[f] = *spec.graph->TypeOf(e.ref);
      }
    }
    for (const PipelineTransfer& t : program_.transfers) {
      if (t.kind == PipelineTransfer::Kind::kAccumulated) {
        accumulated_.insert(t.tensor);
      } else {
        ++readers_[t.tensor];
      }
    }
  }

  absl::StatusOr<std::vector<Tensor>> Run(const Batch& feeds, uint64_t step, RunMetadata*) override {
    const int S = plan_.stages;
    int64_t batch = -1;
    for (const auto& [name, tensor] : feeds) {
      if (batch_inputs_.contains(name) && tensor.shape().rank() > 0) batch = tensor.shape().dim(0);
    }
    const int M = static_cast<int>(MicrobatchCount(plan_, batch));
    std::vector<Batch> micro(M);
    std::vector<double> weight(M, 1.0);
    std::vector<int64_t> rows_of(M, 0);
    Batch whole;  // the feeds without a batch dimension
    for (int m = 0; m < M; ++m) {
      const auto [begin, end] = batch > 0 ? Microbatch(batch, M, m) : MicrobatchRows{0, 0};
      if (batch > 0) weight[m] = static_cast<double>(end - begin) / static_cast<double>(batch);
      rows_of[m] = end - begin;
      for (const auto& [name, tensor] : feeds) {
        if (!batch_inputs_.contains(name) || batch <= 0) {
          micro[m].emplace_back(name, tensor);
          continue;
        }
        Shape rows = tensor.shape();
        rows.set_dim(0, end - begin);
        std::vector<int64_t> offset(rows.rank(), 0);
        offset[0] = begin;
        TSR_ASSIGN_OR_RETURN(Tensor share, ExtractBlock(tensor, offset, rows));
        micro[m].emplace_back(name, std::move(share));
      }
    }
    for (const auto& [name, tensor] : feeds) {
      if (!batch_inputs_.contains(name)) whole.emplace_back(name, tensor);
    }

    Mailbox box(S, options_.timeout);
    std::mutex mu;
    std::map<std::string, Tensor> accumulated;
    std::map<std::string, std::vector<Tensor>> fetched;
    for (const std::string& f : fetches_) fetched[f].resize(M);

    auto data_feeds = [&](int s, const Batch& from) {
      Batch out;
      const std::vector<std::string>& inputs = program_.stages[s].data_inputs;
      for (const auto& [name, tensor] : from) {
        if (std::find(inputs.begin(), inputs.end(), name) != inputs.end()) out.emplace_back(name, tensor);
      }
      return out;
    };
    auto task = [&](int s, const PipelineTask& t) -> absl::Status {
      const int m = t.microbatch;
      const bool forward = t.kind == PipelineTask::Kind::kForward;
      const PipelineStageProgram& stage = program_.stages[s];
      Batch in = data_feeds(s, micro[m]);
      for (const PipelineTransfer& x : program_.transfers) {
        if (x.to != s || x.kind == PipelineTransfer::Kind::kAccumulated) continue;
        if ((x.kind == PipelineTransfer::Kind::kActivation) != forward) continue;
        TSR_ASSIGN_OR_RETURN(Tensor value, box.Take(x.tensor, m, s));
        in.emplace_back(x.feed, std::move(value));
      }
      const std::vector<std::string>& names = forward ? stage.forward_fetches : stage.backward_fetches;
      if (names.empty()) return absl::OkStatus();
      absl::StatusOr<std::vector<Tensor>> out =
          stages_[s]->Run(forward ? PipelineCall::kForward : PipelineCall::kBackward, rows_of[m], in, step);
      if (!out.ok()) {
        return absl::Status(out.status().code(),
                            absl::StrCat("pipeline stage ", s, ", ", forward ? "forward" : "backward",
                                         " of micro-batch ", m, ": ", out.status().message()));
      }
      for (size_t i = 0; i < names.size(); ++i) {
        for (const auto& [fetch, where] : program_.fetches) {
          if (where.first == s && where.second == names[i]) fetched[fetch][m] = (*out)[i];
        }
        if (auto r = readers_.find(names[i]); r != readers_.end()) box.Put(names[i], m, s, (*out)[i], r->second);
        if (!forward && accumulated_.contains(names[i])) {
          std::lock_guard<std::mutex> lock(mu);
          TSR_RETURN_IF_ERROR(Accumulate(accumulated[names[i]], (*out)[i], weight[m], names[i]));
        }
      }
      return absl::OkStatus();
    };
    TSR_RETURN_IF_ERROR(stage_threads_.Run([&](int s) -> absl::Status {
      for (const PipelineTask& t : tasks_[s]) {
        if (t.microbatch >= M) continue;
        absl::Status status = task(s, t);
        if (!status.ok()) {
          box.Fail(status);
          return status;
        }
      }
      return absl::OkStatus();
    }));
    stats_.microbatches = M;
    stats_.peak_held_bytes = box.peak();

    // The updates, once, from the gradients accumulated over the micro-batches.
    TSR_RETURN_IF_ERROR(stage_threads_.Run([&](int s) -> absl::Status {
      const PipelineStageProgram& stage = program_.stages[s];
      if (stage.update_targets.empty()) return absl::OkStatus();
      Batch in = data_feeds(s, whole);
      for (const PipelineTransfer& x : program_.transfers) {
        if (x.to != s || x.kind != PipelineTransfer::Kind::kAccumulated) continue;
        auto it = accumulated.find(x.tensor);
        if (it == accumulated.end()) {
          return absl::InternalError(absl::StrCat("pipeline stage ", s, ": no gradient '", x.tensor, "' accumulated"));
        }
        in.emplace_back(x.feed, it->second);
      }
      absl::StatusOr<std::vector<Tensor>> out = stages_[s]->Run(PipelineCall::kUpdate, 0, in, step);
      if (!out.ok()) {
        return absl::Status(out.status().code(),
                            absl::StrCat("pipeline stage ", s, ", update: ", out.status().message()));
      }
      return absl::OkStatus();
    }));
    return Combine(fetched, weight, batch);
  }

  std::vector<std::string> VariableNames() const override {
    std::vector<std::string> names;
    for (const auto& [name, stages] : program_.variable_stages) names.push_back(name);
    return names;
  }
  absl::StatusOr<Tensor> ReadVariable(absl::string_view name) override {
    auto it = program_.variable_stages.find(std::string(name));
    if (it == program_.variable_stages.end()) {
      return absl::NotFoundError(absl::StrCat("the pipeline has no Variable '", name, "'"));
    }
    return stages_[it->second.front()]->ReadVariable(name);
  }
  absl::Status AssignVariable(absl::string_view name, const Tensor& value) override {
    auto it = program_.variable_stages.find(std::string(name));
    if (it == program_.variable_stages.end()) {
      return absl::NotFoundError(absl::StrCat("the pipeline has no Variable '", name, "'"));
    }
    for (int s : it->second) TSR_RETURN_IF_ERROR(stages_[s]->AssignVariable(name, value));
    return absl::OkStatus();
  }
  std::string Summary() const override {
    std::vector<std::string> flops;
    for (const PipelineStageProgram& stage : program_.stages) flops.push_back(absl::StrCat(stage.forward_flops));
    return absl::StrFormat("%s: bubble %.1f%%, forward FLOPs per example by stage %s; stage 0 %s%s",
                           PipelineStrategy(plan_).name(),
                           100.0 * PipelineBubbleFraction(plan_.stages, plan_.microbatches),
                           absl::StrJoin(flops, " / "), stages_.front()->Summary(), compile_failure_);
  }

  const PipelineRunStats& stats() const { return stats_; }

 private:
  // One device's fetches: batch-major ones concatenated, scalars weighted by the shares.
  absl::StatusOr<std::vector<Tensor>> Combine(const std::map<std::string, std::vector<Tensor>>& fetched,
                                              const std::vector<double>& weight, int64_t batch) const {
    std::vector<Tensor> out;
    for (const std::string& f : fetches_) {
      const std::vector<Tensor>& parts = fetched.at(f);
      for (size_t m = 0; m < parts.size(); ++m) {
        if (!parts[m].valid())
          return absl::InternalError(absl::StrCat("output '", f, "' of micro-batch ", m, " is missing"));
      }
      if (parts.size() == 1) {
        out.push_back(parts[0]);
        continue;
      }
      const TensorType& type = fetch_types_.at(f);
      if (type.shape.rank() > 0 && type.shape.dim(0) == kBatchDim) {
        Shape shape = parts[0].shape();
        shape.set_dim(0, batch);
        TSR_ASSIGN_OR_RETURN(Tensor whole, Tensor::Create(parts[0].dtype(), shape));
        int64_t row = 0;
        for (const Tensor& part : parts) {
          std::vector<int64_t> offset(shape.rank(), 0);
          offset[0] = row;
          TSR_RETURN_IF_ERROR(InsertBlock(whole, offset, part));
          row += part.shape().dim(0);
        }
        out.push_back(std::move(whole));
      } else if (type.shape.rank() == 0 && (type.dtype == DType::kF32 || type.dtype == DType::kF64)) {
        double sum = 0;
        for (size_t m = 0; m < parts.size(); ++m) sum += weight[m] * parts[m].GetAsDouble(0);
        out.push_back(type.dtype == DType::kF32 ? Tensor::Scalar<float>(static_cast<float>(sum))
                                                : Tensor::Scalar<double>(sum));
      } else {
        return absl::UnimplementedError(absl::StrCat("output '", f, "' (", type.ToString(),
                                                     ") is neither batch-major nor a scalar mean; micro-batches "
                                                     "cannot be combined into it"));
      }
    }
    return out;
  }

  PipelinePlan plan_;
  PipelineProgram program_;
  std::vector<std::unique_ptr<PipelineStageRunner>> stages_;
  DeviceThreads stage_threads_;  // runs the stages at once, twice a step
  std::vector<std::string> fetches_;
  PipelineStepOptions options_;
  std::vector<std::vector<PipelineTask>> tasks_;
  std::set<std::string> batch_inputs_;
  std::map<std::string, TensorType> fetch_types_;
  std::map<std::string, int> readers_;  // tensors handed to other tasks: how many read each
  std::set<std::string> accumulated_;   // gradients summed over the micro-batches
  PipelineRunStats stats_;
  std::string compile_failure_;  // why the stages are interpreted though a compiler was given
};

}  // namespace

absl::StatusOr<std::unique_ptr<StepProgram>> MakePipelineStep(const PipelinePlan& plan, const StepProgramSpec& spec,
                                                              const PipelineStepOptions& options) {
  if (spec.graph == nullptr) return absl::InvalidArgumentError("no graph to pipeline");
  TSR_ASSIGN_OR_RETURN(PipelineProgram program,
                       SplitPipelineStages(*spec.graph, PipelineSplitOptions{.stages = plan.stages,
                                                                             .cut_points = plan.cut_points,
                                                                             .fetches = spec.fetches,
                                                                             .targets = spec.targets}));
  for (size_t s = 0; s < program.stages.size(); ++s) {
    for (const Node* node : program.stages[s].graph.nodes()) {
      if (node->op() == "Dropout" && plan.microbatches > 1) {
        return absl::UnimplementedError(absl::StrCat("Dropout node '", node->name(),
                                                     "': its masks would be drawn per micro-batch, not as one device "
                                                     "draws them (not yet supported under pipeline parallelism)"));
      }
    }
  }
  // The micro-batch sizes of the spec's batch: one or two.
  std::vector<int64_t> rows;
  const int64_t count = MicrobatchCount(plan, spec.batch);
  for (int64_t m = 0; m < count; ++m) {
    const auto [begin, end] = Microbatch(spec.batch, count, m);
    if (std::find(rows.begin(), rows.end(), end - begin) == rows.end()) rows.push_back(end - begin);
  }
  // Every stage's runner, compiled by `compiler` (or interpreted).
  const auto make_stages =
      [&](const StepCompiler& compiler) -> absl::StatusOr<std::vector<std::unique_ptr<PipelineStageRunner>>> {
    std::vector<std::unique_ptr<PipelineStageRunner>> stages;
    for (size_t s = 0; s < program.stages.size(); ++s) {
      absl::StatusOr<std::unique_ptr<PipelineStageRunner>> stage =
          compiler
              ? CompilePipelineStage(program.stages[s], rows, compiler, options.threads_per_stage, spec.seed,
                                     spec.variable_values)
              : InterpretPipelineStage(program.stages[s], options.threads_per_stage, spec.seed, spec.variable_values);
      if (!stage.ok()) {
        return absl::Status(stage.status().code(), absl::StrCat("pipeline stage ", s, ": ", stage.status().message()));
      }
      stages.push_back(*std::move(stage));
    }
    return stages;
  };
  absl::StatusOr<std::vector<std::unique_ptr<PipelineStageRunner>>> stages = make_stages(options.stage_compiler);
  std::string compile_failure;
  if (!stages.ok() && options.stage_compiler) {
    // A stage the compiler cannot take: the whole pipeline runs on the interpreter.
    compile_failure = absl::StrCat(" (interpreted: ", stages.status().message(), ")");
    stages = make_stages(nullptr);
  }
  if (!stages.ok()) return stages.status();
  return std::make_unique<PipelineStep>(plan, std::move(program), *std::move(stages), spec, options,
                                        std::move(compile_failure));
}

PipelineRunStats LastPipelineRunStats(const StepProgram& program) {
  const auto* step = dynamic_cast<const PipelineStep*>(&program);
  return step != nullptr ? step->stats() : PipelineRunStats{};
}

}  // namespace tsr

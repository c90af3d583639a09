// PipelineStrategy and the pipelined step (see pipeline.h).
#include "strategies/pipeline.h"

#include <algorithm>
#include <condition_variable>
#include <functional>
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
  return absl::StrCat("pipeline(", plan_.stages, " stages, ",
                      plan_.chunks > 1 ? absl::StrCat(plan_.chunks, " chunks each, ") : "",
                      plan_.data > 1 ? absl::StrCat(plan_.data, " data replicas, ") : "", plan_.microbatches,
                      " micro-batches, ", PipelineScheduleName(plan_.schedule), ")");
}

absl::StatusOr<StrategyPlan> PipelineStrategy::Plan(const Graph&) const {
  if (plan_.stages < 1 || plan_.stages > 64) {
    return absl::InvalidArgumentError(absl::StrCat("a pipeline of ", plan_.stages, " stages (1 to 64)"));
  }
  TSR_RETURN_IF_ERROR(CheckPipelineChunks(plan_.schedule, plan_.chunks));
  if (plan_.microbatches < 1 || plan_.microbatches > 4096) {
    return absl::InvalidArgumentError(absl::StrCat(plan_.microbatches, " micro-batches (1 to 4096)"));
  }
  if (plan_.data < 1 || plan_.data > 4096) {
    return absl::InvalidArgumentError(absl::StrCat(plan_.data, " data replicas of the pipeline (1 to 4096)"));
  }
  // Devices row-major over (pipe, data): device = stage x data + replica.
  std::vector<MeshAxis> axes = {MeshAxis{"pipe", plan_.stages}};
  if (plan_.data > 1) axes.push_back(MeshAxis{"data", plan_.data});
  TSR_ASSIGN_OR_RETURN(DeviceMesh mesh, DeviceMesh::Create(std::move(axes)));
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

// Data replica r's rows of a batch of `batch` rows (collectives.h's SplitBegin rule).
int64_t ReplicaRows(int64_t batch, int replicas, int r) {
  return SplitBegin(batch, replicas, r + 1) - SplitBegin(batch, replicas, r);
}

// Rows [begin, begin + rows) of a batch-major tensor.
absl::StatusOr<Tensor> ExtractRows(const Tensor& tensor, int64_t begin, int64_t rows) {
  Shape shape = tensor.shape();
  shape.set_dim(0, rows);
  std::vector<int64_t> offset(shape.rank(), 0);
  offset[0] = begin;
  return ExtractBlock(tensor, offset, shape);
}

// `type`'s shape with its symbolic batch dimension, if any, bound to `rows`.
Shape WithBatch(const TensorType& type, int64_t rows) {
  Shape shape = type.shape;
  if (shape.rank() > 0 && shape.dim(0) == kBatchDim) shape.set_dim(0, rows);
  return shape;
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
  // `stages`: a runner per stage (null for those of other processes); `communicator`: the
  // job's over {"pipe"}, with one stage per process.
  PipelineStep(PipelinePlan plan, PipelineProgram program, std::vector<std::unique_ptr<PipelineStageRunner>> stages,
               const StepProgramSpec& spec, PipelineStepOptions options, std::string compile_failure,
               Collectives* communicator, Collectives* data)
      : plan_(std::move(plan)),
        program_(std::move(program)),
        stages_(std::move(stages)),
        stage_threads_(options.pipe_rank >= 0 ? 1 : plan_.stages),
        fetches_(spec.fetches),
        options_(options),
        tasks_(PipelineTasks(plan_.schedule, plan_.stages, plan_.microbatches, plan_.chunks)),
        compile_failure_(std::move(compile_failure)),
        communicator_(communicator),
        data_(data) {
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
      } else if (Local(t)) {
        ++readers_[t.tensor];
      } else if (Mine(t.from)) {
        send_to_[t.tensor].insert(DeviceOf(t.to));
      } else if (Mine(t.to)) {
        // The Placeholder it feeds here gives its type (its batch dimension the micro-batch's).
        const Node* feed = program_.stages[t.to].graph.FindNode(t.feed);
        if (feed != nullptr) {
          Incoming& incoming = incoming_[{t.from, t.tensor}];
          incoming.type = feed->output_type(0);
          ++incoming.readers;
        }
      }
    }
  }

  absl::StatusOr<std::vector<Tensor>> Run(const Batch& global_feeds, uint64_t step, RunMetadata*) override {
    const int S = static_cast<int>(program_.stages.size());
    int64_t global_batch = -1;
    for (const auto& [name, tensor] : global_feeds) {
      if (batch_inputs_.contains(name) && tensor.shape().rank() > 0) global_batch = tensor.shape().dim(0);
    }
    // A data replica trains on its rows of the batch; its gradients, weighted by their
    // share of the whole batch, are summed over the replicas.
    TSR_ASSIGN_OR_RETURN(const Batch feeds, ReplicaFeeds(global_feeds, global_batch));
    const int64_t batch =
        global_batch > 0 && data_ != nullptr ? ReplicaRows(global_batch, plan_.data, data_->rank()) : global_batch;
    const int M = static_cast<int>(MicrobatchCount(plan_, batch));
    std::vector<Batch> micro(M);
    std::vector<double> weight(M, 1.0);
    std::vector<int64_t> rows_of(M, 0);
    Batch whole;  // the feeds without a batch dimension
    for (int m = 0; m < M; ++m) {
      const auto [begin, end] = batch > 0 ? Microbatch(batch, M, m) : MicrobatchRows{0, 0};
      if (batch > 0) weight[m] = static_cast<double>(end - begin) / static_cast<double>(global_batch);
      rows_of[m] = end - begin;
      for (const auto& [name, tensor] : feeds) {
        if (!batch_inputs_.contains(name) || batch <= 0) {
          micro[m].emplace_back(name, tensor);
          continue;
        }
        TSR_ASSIGN_OR_RETURN(Tensor share, ExtractRows(tensor, begin, end - begin));
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
    // With one stage per process: what the other stages send here, posted up front.
    std::map<std::pair<std::string, int>, Received> received;
    TSR_RETURN_IF_ERROR(PostReceives(M, rows_of, received));
    std::vector<std::pair<Tensor, CollectiveHandle>> sends;  // tensors kept until sent

    auto task = [&](int s, const PipelineTask& t) -> absl::Status {
      const int m = t.microbatch;
      const bool forward = t.kind == PipelineTask::Kind::kForward;
      const PipelineStageProgram& stage = program_.stages[s];
      Batch in = DataFeeds(s, micro[m]);
      for (const PipelineTransfer& x : program_.transfers) {
        if (x.to != s || x.kind == PipelineTransfer::Kind::kAccumulated) continue;
        if ((x.kind == PipelineTransfer::Kind::kActivation) != forward) continue;
        if (Local(x)) {
          TSR_ASSIGN_OR_RETURN(Tensor value, box.Take(x.tensor, m, s));
          in.emplace_back(x.feed, std::move(value));
          continue;
        }
        auto r = received.find({x.tensor, m});
        if (r == received.end()) {
          return absl::InternalError(
              absl::StrCat("pipeline stage ", s, ": no receive of '", x.tensor, "' of micro-batch ", m, " posted"));
        }
        if (absl::Status status = r->second.handle.Wait(); !status.ok()) {
          return absl::Status(status.code(),
                              absl::StrCat("pipeline stage ", s, " receiving '", x.tensor, "' of micro-batch ", m,
                                           " from stage ", x.from, ": ", status.message()));
        }
        in.emplace_back(x.feed, r->second.value);
        if (--r->second.readers == 0) received.erase(r);  // its last reader has it
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
        if (auto to = send_to_.find(names[i]); to != send_to_.end()) {
          for (int peer : to->second) {
            sends.emplace_back((*out)[i], communicator_->Send((*out)[i], peer, Message(names[i], m)));
          }
        }
        if (!forward && accumulated_.contains(names[i])) {
          std::lock_guard<std::mutex> lock(mu);
          TSR_RETURN_IF_ERROR(Accumulate(accumulated[names[i]], (*out)[i], weight[m], names[i]));
        }
      }
      return absl::OkStatus();
    };
    TSR_RETURN_IF_ERROR(RunDevices([&](int d) -> absl::Status {
      for (const PipelineTask& t : tasks_[d]) {
        if (t.microbatch >= M) continue;
        absl::Status status = task(t.stage, t);
        if (!status.ok()) {
          box.Fail(status);
          return status;
        }
      }
      return absl::OkStatus();
    }));
    stats_.microbatches = M;
    stats_.peak_held_bytes = box.peak();
    for (auto& [tensor, handle] : sends) TSR_RETURN_IF_ERROR(handle.Wait());
    TSR_RETURN_IF_ERROR(ExchangeAccumulated(accumulated));
    TSR_RETURN_IF_ERROR(SumOverReplicas(accumulated));

    // The updates, once, from the gradients accumulated over the micro-batches.
    TSR_RETURN_IF_ERROR(RunDevices([&](int d) -> absl::Status {
      for (int s = d; s < S; s += plan_.stages) TSR_RETURN_IF_ERROR(Update(s, whole, accumulated, step));
      return absl::OkStatus();
    }));
    std::vector<Tensor> out;
    for (const std::string& f : fetches_) {
      const int owner = program_.fetches.at(f).first;
      if (!distributed()) {
        TSR_ASSIGN_OR_RETURN(out.emplace_back(), Combine(f, fetched.at(f), weight, batch));
        continue;
      }
      // Computed by one stage's process (of each replica, which combine theirs): it
      // broadcasts the value to the others.
      Tensor value;
      if (Mine(owner)) {
        TSR_ASSIGN_OR_RETURN(value, Combine(f, fetched.at(f), weight, batch));
        TSR_ASSIGN_OR_RETURN(value, CombineReplicas(f, std::move(value), global_batch));
      } else {
        const TensorType& type = fetch_types_.at(f);
        TSR_ASSIGN_OR_RETURN(value, Tensor::Create(type.dtype, WithBatch(type, std::max<int64_t>(global_batch, 0))));
      }
      TSR_RETURN_IF_ERROR(communicator_->Broadcast(value, DeviceOf(owner), absl::StrCat("pipeline fetch ", f)).Wait());
      out.push_back(std::move(value));
    }
    return out;
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
    const int owner = it->second.front();
    if (!distributed()) return stages_[owner]->ReadVariable(name);
    // Held by another process: broadcast from the first stage holding it.
    Tensor value;
    if (Mine(owner)) {
      TSR_ASSIGN_OR_RETURN(value, stages_[owner]->ReadVariable(name));
    } else {
      // Its type from the holding stage's graph (every process has every stage's).
      const Node* variable = program_.stages[owner].graph.FindNode(name);
      if (variable == nullptr) {
        return absl::InternalError(absl::StrCat("pipeline stage ", owner, " has no Variable '", name, "'"));
      }
      TSR_ASSIGN_OR_RETURN(value, Tensor::Create(variable->output_type(0).dtype, variable->output_type(0).shape));
    }
    TSR_RETURN_IF_ERROR(communicator_->Broadcast(value, DeviceOf(owner), absl::StrCat("read ", name)).Wait());
    return value;
  }
  absl::Status AssignVariable(absl::string_view name, const Tensor& value) override {
    auto it = program_.variable_stages.find(std::string(name));
    if (it == program_.variable_stages.end()) {
      return absl::NotFoundError(absl::StrCat("the pipeline has no Variable '", name, "'"));
    }
    for (int s : it->second) {
      if (stages_[s] != nullptr) TSR_RETURN_IF_ERROR(stages_[s]->AssignVariable(name, value));
    }
    return absl::OkStatus();
  }
  std::string Summary() const override {
    std::vector<std::string> flops;
    for (const PipelineStageProgram& stage : program_.stages) flops.push_back(absl::StrCat(stage.forward_flops));
    // The first device's stages (this process's, across processes): one, or one per chunk.
    const int device = distributed() ? options_.pipe_rank : 0;
    std::vector<std::string> shown;
    for (int s = device; s < static_cast<int>(stages_.size()); s += plan_.stages) {
      shown.push_back(absl::StrCat("stage ", s, distributed() ? " (this process) " : " ", stages_[s]->Summary()));
    }
    return absl::StrFormat("%s: bubble %.1f%%, forward FLOPs per example by stage %s; %s%s",
                           PipelineStrategy(plan_).name(),
                           100.0 * PipelineBubbleFraction(plan_.stages, plan_.microbatches, plan_.chunks),
                           absl::StrJoin(flops, " / "), absl::StrJoin(shown, "; "), compile_failure_);
  }

  const PipelineRunStats& stats() const { return stats_; }

 private:
  // A posted receive of a tensor another stage's process sends here.
  struct Received {
    Tensor value;
    CollectiveHandle handle = CollectiveHandle::Ready(absl::OkStatus());
    int readers = 0;  // tasks of this stage still to read it
  };
  // A tensor another stage sends this one: its type (the batch dimension symbolic) and how
  // many of this stage's transfers read it.
  struct Incoming {
    TensorType type;
    int readers = 0;
  };

  bool distributed() const { return options_.pipe_rank >= 0; }
  // The device (thread, or process of the job) running stage s: stage s mod devices, so
  // that with chunks each device holds every `stages`-th stage.
  int DeviceOf(int stage) const { return stage % plan_.stages; }
  // Whether stage s runs in this process.
  bool Mine(int stage) const { return !distributed() || DeviceOf(stage) == options_.pipe_rank; }
  // A transfer between two stages of this process (in-process: every one).
  bool Local(const PipelineTransfer& t) const { return !distributed() || DeviceOf(t.from) == DeviceOf(t.to); }
  // Runs fn for every device of this process: each on its own thread, or the one here.
  absl::Status RunDevices(const std::function<absl::Status(int device)>& fn) {
    if (distributed()) return fn(options_.pipe_rank);
    return stage_threads_.Run(fn);
  }
  // The feeds among `from` that stage s reads from the step's own inputs.
  Batch DataFeeds(int s, const Batch& from) const {
    Batch out;
    const std::vector<std::string>& inputs = program_.stages[s].data_inputs;
    for (const auto& [name, tensor] : from) {
      if (std::find(inputs.begin(), inputs.end(), name) != inputs.end()) out.emplace_back(name, tensor);
    }
    return out;
  }
  // Stage s's optimizer updates, from the gradients accumulated over the micro-batches.
  absl::Status Update(int s, const Batch& whole, const std::map<std::string, Tensor>& accumulated, uint64_t step) {
    const PipelineStageProgram& stage = program_.stages[s];
    if (stage.update_targets.empty()) return absl::OkStatus();
    Batch in = DataFeeds(s, whole);
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
  }
  static std::string Message(absl::string_view tensor, int microbatch) {
    return absl::StrCat(tensor, " of micro-batch ", microbatch);
  }

  // Posts the Recv of everything the other devices' processes send this one in a step of
  // M micro-batches, in the order each sends: its tasks in schedule order, each task's
  // outputs in fetch order (the sender's loop in Run).
  absl::Status PostReceives(int M, const std::vector<int64_t>& rows_of,
                            std::map<std::pair<std::string, int>, Received>& received) {
    if (!distributed()) return absl::OkStatus();
    for (int from = 0; from < plan_.stages; ++from) {
      if (from == options_.pipe_rank) continue;
      for (const PipelineTask& t : tasks_[from]) {
        if (t.microbatch >= M) continue;
        const PipelineStageProgram& stage = program_.stages[t.stage];
        for (const std::string& name :
             t.kind == PipelineTask::Kind::kForward ? stage.forward_fetches : stage.backward_fetches) {
          auto incoming = incoming_.find({t.stage, name});
          if (incoming == incoming_.end()) continue;
          const TensorType& type = incoming->second.type;
          Received& r = received[{name, t.microbatch}];
          r.readers = incoming->second.readers;
          TSR_ASSIGN_OR_RETURN(r.value, Tensor::Create(type.dtype, WithBatch(type, rows_of[t.microbatch])));
          r.handle = communicator_->Recv(r.value, from, Message(name, t.microbatch));
        }
      }
    }
    return absl::OkStatus();
  }

  // With one stage per process: the gradients a stage accumulated for another's update
  // (a Variable used on several stages), sent once per step, in the transfers' order.
  absl::Status ExchangeAccumulated(std::map<std::string, Tensor>& accumulated) {
    if (!distributed()) return absl::OkStatus();
    std::vector<CollectiveHandle> pending;
    for (const PipelineTransfer& x : program_.transfers) {
      if (x.kind != PipelineTransfer::Kind::kAccumulated || Local(x)) continue;
      if (Mine(x.from)) {
        auto it = accumulated.find(x.tensor);
        if (it == accumulated.end()) {
          return absl::InternalError(
              absl::StrCat("pipeline stage ", x.from, ": no gradient '", x.tensor, "' accumulated for stage ", x.to));
        }
        pending.push_back(communicator_->Send(it->second, DeviceOf(x.to), Message(x.tensor, -1)));
      } else if (Mine(x.to)) {
        const Node* feed = program_.stages[x.to].graph.FindNode(x.feed);
        if (feed == nullptr)
          return absl::InternalError(absl::StrCat("pipeline stage ", x.to, " has no '", x.feed, "'"));
        TSR_ASSIGN_OR_RETURN(Tensor value, Tensor::Create(feed->output_type(0).dtype, feed->output_type(0).shape));
        accumulated[x.tensor] = value;
        pending.push_back(communicator_->Recv(accumulated[x.tensor], DeviceOf(x.from), Message(x.tensor, -1)));
      }
    }
    for (CollectiveHandle& handle : pending) TSR_RETURN_IF_ERROR(handle.Wait());
    return absl::OkStatus();
  }

  // This data replica's feeds: its rows of the batch inputs (all of them without replicas).
  absl::StatusOr<Batch> ReplicaFeeds(const Batch& feeds, int64_t global_batch) const {
    if (data_ == nullptr || global_batch <= 0) return feeds;
    if (global_batch < plan_.data) {
      return absl::InvalidArgumentError(absl::StrCat("a batch of ", global_batch, " rows cannot be split over ",
                                                     plan_.data, " data replicas of the pipeline"));
    }
    const int64_t begin = SplitBegin(global_batch, plan_.data, data_->rank());
    const int64_t rows = ReplicaRows(global_batch, plan_.data, data_->rank());
    Batch mine;
    for (const auto& [name, tensor] : feeds) {
      if (!batch_inputs_.contains(name) || tensor.shape().rank() == 0) {
        mine.emplace_back(name, tensor);
        continue;
      }
      TSR_ASSIGN_OR_RETURN(Tensor share, ExtractRows(tensor, begin, rows));
      mine.emplace_back(name, std::move(share));
    }
    return mine;
  }

  // With data replicas: the gradients this stage's update takes, summed over the
  // replicas (each already weighted by its rows' share of the whole batch) -- the f32
  // ones in one all-reduce, in name order on every replica.
  absl::Status SumOverReplicas(std::map<std::string, Tensor>& accumulated) {
    if (data_ == nullptr) return absl::OkStatus();
    std::vector<Tensor*> f32;
    int64_t elements = 0;
    for (auto& [name, g] : accumulated) {
      bool updated_here = false;
      for (const PipelineTransfer& x : program_.transfers) {
        updated_here |= x.kind == PipelineTransfer::Kind::kAccumulated && x.tensor == name && Mine(x.to);
      }
      if (!updated_here) continue;
      if (g.dtype() == DType::kF32) {
        f32.push_back(&g);
        elements += g.num_elements();
      } else {
        TSR_RETURN_IF_ERROR(data_->AllReduce(g, ReduceOp::kSum, absl::StrCat("pipeline gradient ", name)).Wait());
      }
    }
    if (f32.empty()) return absl::OkStatus();
    TSR_ASSIGN_OR_RETURN(Tensor bucket, Tensor::Create(DType::kF32, Shape{elements}));
    float* at = bucket.data<float>();
    for (const Tensor* g : f32) {
      std::copy_n(g->data<float>(), g->num_elements(), at);
      at += g->num_elements();
    }
    TSR_RETURN_IF_ERROR(data_->AllReduce(bucket, ReduceOp::kSum, "pipeline gradients").Wait());
    const float* from = bucket.data<float>();
    for (Tensor* g : f32) {
      // A fresh tensor: the accumulated one may share its buffer with a stage's output.
      Tensor summed(DType::kF32, g->shape());
      std::copy_n(from, g->num_elements(), summed.data<float>());
      from += g->num_elements();
      *g = std::move(summed);
    }
    return absl::OkStatus();
  }

  // With data replicas: fetch `f` of this replica (its rows, or its share of the mean)
  // made the whole batch's -- batch-major ones gathered in replica order, scalar means
  // summed.
  absl::StatusOr<Tensor> CombineReplicas(const std::string& f, Tensor mine, int64_t global_batch) {
    if (data_ == nullptr) return mine;
    const TensorType& type = fetch_types_.at(f);
    if (type.shape.rank() > 0 && type.shape.dim(0) == kBatchDim) {
      Shape shape = mine.shape();
      shape.set_dim(0, global_batch);
      TSR_ASSIGN_OR_RETURN(Tensor whole, Tensor::Create(mine.dtype(), shape));
      TSR_RETURN_IF_ERROR(data_->AllGather(mine, whole, absl::StrCat("pipeline fetch ", f)).Wait());
      return whole;
    }
    Tensor sum = mine.Clone();
    TSR_RETURN_IF_ERROR(data_->AllReduce(sum, ReduceOp::kSum, absl::StrCat("pipeline fetch ", f)).Wait());
    return sum;
  }

  // Fetch `f` over the micro-batches: batch-major parts concatenated, scalars weighted
  // by the micro-batches' shares.
  absl::StatusOr<Tensor> Combine(const std::string& f, const std::vector<Tensor>& parts,
                                 const std::vector<double>& weight, int64_t batch) const {
    for (size_t m = 0; m < parts.size(); ++m) {
      if (!parts[m].valid())
        return absl::InternalError(absl::StrCat("output '", f, "' of micro-batch ", m, " is missing"));
    }
    const TensorType& type = fetch_types_.at(f);
    const bool scalar_mean = type.shape.rank() == 0 && (type.dtype == DType::kF32 || type.dtype == DType::kF64);
    if (parts.size() == 1 && !(scalar_mean && data_ != nullptr)) return parts[0];
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
      return whole;
    }
    if (scalar_mean) {
      double sum = 0;
      for (size_t m = 0; m < parts.size(); ++m) sum += weight[m] * parts[m].GetAsDouble(0);
      return type.dtype == DType::kF32 ? Tensor::Scalar<float>(static_cast<float>(sum)) : Tensor::Scalar<double>(sum);
    }
    return absl::UnimplementedError(absl::StrCat("output '", f, "' (", type.ToString(),
                                                 ") is neither batch-major nor a scalar mean; micro-batches "
                                                 "cannot be combined into it"));
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
  std::map<std::string, int> readers_;  // tensors handed to tasks of this process: how many read each
  std::set<std::string> accumulated_;   // gradients summed over the micro-batches
  PipelineRunStats stats_;
  std::string compile_failure_;  // why the stages are interpreted though a compiler was given
  // With one stage per process: the communicator (rank = stage), the stages each tensor
  // made here is sent to, and the tensors received by (sender, name).
  Collectives* communicator_ = nullptr;
  Collectives* data_ = nullptr;  // over the replicas of this stage (null: one replica)
  std::map<std::string, std::set<int>> send_to_;
  std::map<std::pair<int, std::string>, Incoming> incoming_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<StepProgram>> MakePipelineStep(const PipelinePlan& plan, const StepProgramSpec& spec,
                                                              const PipelineStepOptions& options) {
  if (spec.graph == nullptr) return absl::InvalidArgumentError("no graph to pipeline");
  TSR_RETURN_IF_ERROR(CheckPipelineChunks(plan.schedule, plan.chunks));
  Collectives* communicator = nullptr;
  Collectives* data = nullptr;
  if (options.pipe_rank >= 0) {
    if (options.pipe_rank >= plan.stages || options.process_groups == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("this process is pipeline device ", options.pipe_rank, " of ", plan.stages,
                       options.process_groups == nullptr ? " but has no communicator" : ", which has no such device"));
    }
    TSR_ASSIGN_OR_RETURN(communicator, options.process_groups->ForAxes({"pipe"}));
    if (communicator->world_size() != plan.stages || communicator->rank() != options.pipe_rank) {
      return absl::InvalidArgumentError(absl::StrCat("pipeline device ", options.pipe_rank, " of ", plan.stages,
                                                     " is rank ", communicator->rank(), " of a communicator of ",
                                                     communicator->world_size(), " processes (one device each)"));
    }
    if (plan.data > 1) {
      TSR_ASSIGN_OR_RETURN(data, options.process_groups->ForAxes({"data"}));
      if (data->world_size() != plan.data) {
        return absl::InvalidArgumentError(
            absl::StrCat(plan.data, " data replicas over a communicator of ", data->world_size(), " processes"));
      }
    }
  } else if (plan.data > 1) {
    return absl::UnimplementedError(
        "data replicas of a pipeline run one stage per process (a job of stages x data processes), not in one process");
  }
  TSR_ASSIGN_OR_RETURN(PipelineProgram program,
                       SplitPipelineStages(*spec.graph, PipelineSplitOptions{.stages = plan.stages * plan.chunks,
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
  // The micro-batch sizes of the spec's batch (this replica's rows of it): one or two.
  std::vector<int64_t> rows;
  const int64_t batch =
      data != nullptr && spec.batch >= plan.data ? ReplicaRows(spec.batch, plan.data, data->rank()) : spec.batch;
  const int64_t count = MicrobatchCount(plan, batch);
  for (int64_t m = 0; m < count; ++m) {
    const auto [begin, end] = Microbatch(batch, count, m);
    if (std::find(rows.begin(), rows.end(), end - begin) == rows.end()) rows.push_back(end - begin);
  }
  // Every stage's runner, compiled by `compiler` (or interpreted).
  const auto make_stages =
      [&](const StepCompiler& compiler) -> absl::StatusOr<std::vector<std::unique_ptr<PipelineStageRunner>>> {
    std::vector<std::unique_ptr<PipelineStageRunner>> stages(program.stages.size());
    for (size_t s = 0; s < program.stages.size(); ++s) {
      if (options.pipe_rank >= 0 && static_cast<int>(s) % plan.stages != options.pipe_rank)
        continue;  // another process's
      absl::StatusOr<std::unique_ptr<PipelineStageRunner>> stage =
          compiler
              ? CompilePipelineStage(program.stages[s], rows, compiler, options.threads_per_stage, spec.seed,
                                     spec.variable_values)
              : InterpretPipelineStage(program.stages[s], options.threads_per_stage, spec.seed, spec.variable_values);
      if (!stage.ok()) {
        return absl::Status(stage.status().code(), absl::StrCat("pipeline stage ", s, ": ", stage.status().message()));
      }
      stages[s] = *std::move(stage);
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
                                        std::move(compile_failure), communicator, data);
}

PipelineRunStats LastPipelineRunStats(const StepProgram& program) {
  const auto* step = dynamic_cast<const PipelineStep*>(&program);
  return step != nullptr ? step->stats() : PipelineRunStats{};
}

}  // namespace tsr

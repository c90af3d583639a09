// The interpreted and the compiled pipeline stage (see pipeline_stage_runner.h).
#include "strategies/pipeline_stage_runner.h"

#include <algorithm>
#include <mutex>
#include <set>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "runtime/session.h"

namespace tsr {

namespace {

const char* CallName(PipelineCall call) {
  switch (call) {
    case PipelineCall::kForward:
      return "forward";
    case PipelineCall::kBackward:
      return "backward";
    case PipelineCall::kUpdate:
      return "update";
  }
  return "?";
}

class InterpretedStage : public PipelineStageRunner {
 public:
  InterpretedStage(const PipelineStageProgram& stage, std::unique_ptr<Session> session)
      : forward_fetches_(stage.forward_fetches),
        backward_fetches_(stage.backward_fetches),
        update_targets_(stage.update_targets),
        session_(std::move(session)) {}

  absl::StatusOr<std::vector<Tensor>> Run(PipelineCall call, int64_t, const Batch& feeds, uint64_t step) override {
    if (call == PipelineCall::kUpdate) {
      TSR_RETURN_IF_ERROR(session_->Run(feeds, {}, RunOptions{.targets = update_targets_, .step = step}).status());
      return std::vector<Tensor>{};
    }
    return session_->Run(feeds, call == PipelineCall::kForward ? forward_fetches_ : backward_fetches_,
                         RunOptions{.step = step});
  }
  absl::StatusOr<Tensor> ReadVariable(absl::string_view name) override { return session_->GetVariable(name); }
  absl::Status AssignVariable(absl::string_view name, const Tensor& value) override {
    return session_->SetVariable(name, value);
  }
  std::string Summary() const override { return "interpreted"; }

 private:
  std::vector<std::string> forward_fetches_, backward_fetches_, update_targets_;
  std::unique_ptr<Session> session_;
};

class CompiledStage : public PipelineStageRunner {
 public:
  CompiledStage(const PipelineStageProgram& stage, StepCompiler compiler, int threads, uint64_t seed,
                std::map<std::string, Tensor> variable_values)
      : graph_(stage.graph.Clone()),
        forward_fetches_(stage.forward_fetches),
        backward_fetches_(stage.backward_fetches),
        update_targets_(stage.update_targets),
        compiler_(std::move(compiler)),
        threads_(threads),
        seed_(seed),
        initial_values_(std::move(variable_values)) {}

  // The call's program for `rows`, compiled now if it is not yet.
  absl::StatusOr<StepProgram*> Program(PipelineCall call, int64_t rows) {
    const Key key{call, call == PipelineCall::kUpdate ? 0 : rows};
    if (auto it = programs_.find(key); it != programs_.end()) return it->second.program.get();
    const bool update = call == PipelineCall::kUpdate;
    const std::vector<std::string> fetches = call == PipelineCall::kForward    ? forward_fetches_
                                             : call == PipelineCall::kBackward ? backward_fetches_
                                                                               : std::vector<std::string>{};
    auto fail = [&](const absl::Status& status) {
      return absl::Status(status.code(), absl::StrCat(CallName(call), update ? "" : absl::StrCat(" of ", rows, " rows"),
                                                      ": ", status.message()));
    };
    absl::StatusOr<Graph> graph =
        PipelineCallGraph(graph_, fetches, update ? update_targets_ : std::vector<std::string>{});
    if (!graph.ok()) return fail(graph.status());
    // Stages compile a late size on their own threads; one compile at a time, as the
    // Trainer's other steps are compiled.
    static std::mutex compile_mu;
    std::lock_guard<std::mutex> lock(compile_mu);
    StepProgramSpec spec;
    spec.graph = &*graph;
    spec.fetches = fetches;
    if (update) spec.targets = update_targets_;
    spec.batch = std::max<int64_t>(rows, 1);
    spec.threads = threads_;
    spec.seed = seed_;
    // The values the Variables start with, and for a program made after updates the
    // current ones (it syncs from the update before its first call anyway).
    spec.variable_values = initial_values_;
    absl::StatusOr<std::unique_ptr<StepProgram>> program = compiler_(spec);
    if (!program.ok()) return fail(program.status());
    Compiled& compiled = programs_[key];
    compiled.program = *std::move(program);
    compiled.synced = update ? version_ : -1;
    if (update) {
      update_ = compiled.program.get();
      for (const std::string& name : update_->VariableNames()) update_names_.insert(name);
    }
    if (summary_.empty()) summary_ = compiled.program->Summary();
    return compiled.program.get();
  }

  absl::StatusOr<std::vector<Tensor>> Run(PipelineCall call, int64_t rows, const Batch& feeds, uint64_t step) override {
    TSR_ASSIGN_OR_RETURN(StepProgram * program, Program(call, rows));
    if (call == PipelineCall::kUpdate) {
      TSR_RETURN_IF_ERROR(program->Run(feeds, step, nullptr).status());
      ++version_;
      programs_.at(Key{call, 0}).synced = version_;
      return std::vector<Tensor>{};
    }
    TSR_RETURN_IF_ERROR(Sync(programs_.at(Key{call, rows})));
    return program->Run(feeds, step, nullptr);
  }

  absl::StatusOr<Tensor> ReadVariable(absl::string_view name) override {
    if (update_names_.contains(std::string(name))) return update_->ReadVariable(name);
    for (auto& [key, compiled] : programs_) {
      if (Holds(*compiled.program, name)) {
        TSR_RETURN_IF_ERROR(Sync(compiled));
        return compiled.program->ReadVariable(name);
      }
    }
    auto it = initial_values_.find(std::string(name));
    if (it == initial_values_.end()) return absl::NotFoundError(absl::StrCat("the stage has no Variable '", name, "'"));
    return it->second;
  }

  absl::Status AssignVariable(absl::string_view name, const Tensor& value) override {
    initial_values_[std::string(name)] = value;
    for (auto& [key, compiled] : programs_) {
      if (Holds(*compiled.program, name)) TSR_RETURN_IF_ERROR(compiled.program->AssignVariable(name, value));
    }
    return absl::OkStatus();
  }

  std::string Summary() const override { return absl::StrCat(programs_.size(), " compiled programs; ", summary_); }

 private:
  struct Key {
    PipelineCall call;
    int64_t rows;
    bool operator<(const Key& o) const { return call != o.call ? call < o.call : rows < o.rows; }
  };
  struct Compiled {
    std::unique_ptr<StepProgram> program;
    int64_t synced = -1;  // the update count its Variables reflect
  };

  static bool Holds(const StepProgram& program, absl::string_view name) {
    const std::vector<std::string> names = program.VariableNames();
    return std::find(names.begin(), names.end(), name) != names.end();
  }

  // Gives `compiled` the update's current values of the Variables both hold.
  absl::Status Sync(Compiled& compiled) {
    if (compiled.synced == version_ || update_ == nullptr || compiled.program.get() == update_) {
      compiled.synced = version_;
      return absl::OkStatus();
    }
    for (const std::string& name : compiled.program->VariableNames()) {
      if (!update_names_.contains(name)) continue;
      TSR_ASSIGN_OR_RETURN(Tensor value, update_->ReadVariable(name));
      TSR_RETURN_IF_ERROR(compiled.program->AssignVariable(name, value));
    }
    compiled.synced = version_;
    return absl::OkStatus();
  }

  Graph graph_;  // the stage's, for the calls compiled later
  std::vector<std::string> forward_fetches_, backward_fetches_, update_targets_;
  StepCompiler compiler_;
  int threads_;
  uint64_t seed_;
  std::map<std::string, Tensor> initial_values_;
  std::map<Key, Compiled> programs_;
  StepProgram* update_ = nullptr;
  std::set<std::string> update_names_;  // the Variables update_ holds
  int64_t version_ = 0;                 // updates run so far
  std::string summary_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<PipelineStageRunner>> InterpretPipelineStage(
    const PipelineStageProgram& stage, int threads, uint64_t seed,
    const std::map<std::string, Tensor>& variable_values) {
  TSR_ASSIGN_OR_RETURN(std::unique_ptr<Session> session,
                       Session::Create(stage.graph.Clone(), SessionOptions{.num_threads = threads, .seed = seed}));
  for (const auto& [name, value] : variable_values) {
    if (session->GetVariable(name).ok()) TSR_RETURN_IF_ERROR(session->SetVariable(name, value));
  }
  return std::make_unique<InterpretedStage>(stage, std::move(session));
}

absl::StatusOr<std::unique_ptr<PipelineStageRunner>> CompilePipelineStage(
    const PipelineStageProgram& stage, const std::vector<int64_t>& microbatch_rows, StepCompiler compiler, int threads,
    uint64_t seed, const std::map<std::string, Tensor>& variable_values) {
  // Only the Variables this stage holds.
  std::map<std::string, Tensor> held;
  for (const Node* node : stage.graph.nodes()) {
    if (node->op() != "Variable") continue;
    if (auto it = variable_values.find(node->name()); it != variable_values.end()) held.insert(*it);
  }
  auto runner = std::make_unique<CompiledStage>(stage, std::move(compiler), threads, seed, std::move(held));
  for (int64_t rows : microbatch_rows) {
    if (!stage.forward_fetches.empty()) TSR_RETURN_IF_ERROR(runner->Program(PipelineCall::kForward, rows).status());
    if (!stage.backward_fetches.empty()) TSR_RETURN_IF_ERROR(runner->Program(PipelineCall::kBackward, rows).status());
  }
  if (!stage.update_targets.empty()) TSR_RETURN_IF_ERROR(runner->Program(PipelineCall::kUpdate, 0).status());
  return runner;
}

absl::StatusOr<Graph> PipelineCallGraph(const Graph& graph, const std::vector<std::string>& fetches,
                                        const std::vector<std::string>& targets) {
  // The nodes the fetches and targets need.
  std::vector<char> needed(static_cast<size_t>(graph.num_nodes()), 0);
  std::vector<int> pending;
  std::vector<TensorRef> outputs;
  for (const std::string& fetch : fetches) {
    TSR_ASSIGN_OR_RETURN(TensorRef ref, graph.ParseTensorName(fetch));
    outputs.push_back(ref);
    pending.push_back(ref.node);
  }
  for (const std::string& target : targets) {
    const Node* node = graph.FindNode(target);
    if (node == nullptr) return absl::NotFoundError(absl::StrCat("no target node '", target, "' in the stage"));
    pending.push_back(node->id());
  }
  while (!pending.empty()) {
    const int id = pending.back();
    pending.pop_back();
    if (needed[id]) continue;
    needed[id] = 1;
    for (const TensorRef& in : graph.node(id)->inputs()) {
      if (in.valid()) pending.push_back(in.node);
    }
  }
  TSR_ASSIGN_OR_RETURN(std::vector<const Node*> order, graph.TopologicalOrder());
  Graph call(graph.registry());
  absl::flat_hash_map<int, int> ids;  // node id in `graph` -> in `call`
  for (const Node* node : order) {
    if (!needed[node->id()]) continue;
    std::vector<TensorRef> inputs;
    for (const TensorRef& in : node->inputs()) {
      inputs.push_back(in.valid() ? TensorRef{ids.at(in.node), in.index} : TensorRef::None());
    }
    TSR_ASSIGN_OR_RETURN(Node * copy, call.AddNode(node->name(), node->op(), std::move(inputs), node->attrs()));
    copy->set_output_types(node->output_types());
    ids[node->id()] = copy->id();
    if (node->op() == "Placeholder") TSR_RETURN_IF_ERROR(call.AddInput(node->name(), copy->output(0)));
  }
  for (size_t i = 0; i < fetches.size(); ++i) {
    TSR_RETURN_IF_ERROR(call.AddOutput(fetches[i], TensorRef{ids.at(outputs[i].node), outputs[i].index}));
  }
  return call;
}

}  // namespace tsr

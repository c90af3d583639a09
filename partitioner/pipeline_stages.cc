// SplitPipelineStages (see pipeline_stages.h).
#include "partitioner/pipeline_stages.h"

#include <algorithm>
#include <set>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "graph/builder/model_summary.h"
#include "graph/status_macros.h"

namespace tsr {

namespace {

enum class Phase { kUnneeded, kSource, kForward, kBackward, kUpdate };

const char* TransferKindName(PipelineTransfer::Kind kind) {
  switch (kind) {
    case PipelineTransfer::Kind::kActivation:
      return "activation";
    case PipelineTransfer::Kind::kStash:
      return "stash";
    case PipelineTransfer::Kind::kGradient:
      return "gradient";
    case PipelineTransfer::Kind::kAccumulated:
      return "accumulated";
  }
  return "?";
}

class StageSplitter {
 public:
  StageSplitter(const Graph& g, const PipelineSplitOptions& options) : g_(g), options_(options), S_(options.stages) {}

  absl::StatusOr<PipelineProgram> Run() {
    if (S_ < 1) return absl::InvalidArgumentError(absl::StrCat("a pipeline of ", S_, " stages"));
    TSR_ASSIGN_OR_RETURN(order_, g_.TopologicalOrder());
    const int n = g_.num_nodes();
    phase_.assign(n, Phase::kUnneeded);
    stage_.assign(n, -1);
    update_stages_.assign(n, {});
    TSR_RETURN_IF_ERROR(ClassifyPhases());
    TSR_RETURN_IF_ERROR(AssignForwardStages());
    TSR_RETURN_IF_ERROR(AssignBackwardStages());
    TSR_RETURN_IF_ERROR(AssignVariablesAndUpdates());
    return Build();
  }

 private:
  std::vector<const Node*> ConsumersOf(const Node& node) const {
    std::vector<const Node*> consumers;
    for (int j = 0; j < node.num_outputs(); ++j) {
      for (const auto& [consumer, slot] : g_.Consumers(node.output(j))) {
        if (phase_[consumer->id()] != Phase::kUnneeded) consumers.push_back(consumer);
      }
    }
    return consumers;
  }

  absl::Status ClassifyPhases() {
    const int n = g_.num_nodes();
    std::vector<bool> forward(n, false), needed(n, false);
    std::vector<int> stack;
    auto mark = [&](std::vector<bool>& set, int id) {
      if (id >= 0 && !set[id]) {
        set[id] = true;
        stack.push_back(id);
      }
    };
    auto close = [&](std::vector<bool>& set) {
      while (!stack.empty()) {
        const Node* node = g_.node(stack.back());
        stack.pop_back();
        for (const TensorRef& in : node->inputs()) {
          if (in.valid()) mark(set, in.node);
        }
      }
    };
    for (const std::string& fetch : options_.fetches) {
      bool found = false;
      for (const SignatureEntry& e : g_.outputs()) {
        if (e.name != fetch) continue;
        found = true;
        mark(forward, e.ref.node);
        mark(needed, e.ref.node);
      }
      if (!found) return absl::NotFoundError(absl::StrCat("the graph has no output '", fetch, "' to fetch"));
    }
    close(forward);
    for (int id = 0; id < n; ++id) {
      if (forward[id]) mark(needed, id);
    }
    for (const std::string& target : options_.targets) {
      const Node* node = g_.FindNode(target);
      if (node == nullptr) return absl::NotFoundError(absl::StrCat("target node '", target, "' is not in the graph"));
      mark(needed, node->id());
    }
    close(needed);
    // Whether a node's value depends on the batch.
    std::vector<bool> batch(n, false);
    for (const Node* node : order_) {
      if (node->op() == "Placeholder") {
        const Shape& shape = node->output_type(0).shape;
        batch[node->id()] = shape.rank() > 0 && shape.dim(0) == kBatchDim;
      }
      for (const TensorRef& in : node->inputs())
        batch[node->id()] = batch[node->id()] || (in.valid() && batch[in.node]);
    }
    batch_ = batch;
    for (const Node* node : order_) {
      const int id = node->id();
      if (!needed[id]) continue;
      const bool updates = node->op_def() != nullptr && !node->op_def()->variable_updates.empty();
      if (node->num_inputs() == 0) {
        phase_[id] = Phase::kSource;
      } else if (forward[id]) {
        phase_[id] = Phase::kForward;
      } else if (updates) {
        phase_[id] = Phase::kUpdate;
      } else if (batch[id]) {
        // The backward is autodiff's nodes ("gradients/..."): linear in the loss, so their
        // sums over the micro-batches are the batch's. What the optimizer computes from
        // the gradients (a global norm for clipping) runs once, on the sums.
        phase_[id] = IsAutodiffNode(*node) ? Phase::kBackward : Phase::kUpdate;
      }
    }
    // What is neither (computed from Variables and constants only) runs with its consumers:
    // in the backward when a gradient op reads it, else with the updates.
    for (auto it = order_.rbegin(); it != order_.rend(); ++it) {
      const Node& node = **it;
      if (!needed[node.id()] || phase_[node.id()] != Phase::kUnneeded) continue;
      bool backward = false;
      for (int j = 0; j < node.num_outputs(); ++j) {
        for (const auto& [consumer, slot] : g_.Consumers(node.output(j))) {
          backward = backward || phase_[consumer->id()] == Phase::kBackward;
        }
      }
      phase_[node.id()] = backward ? Phase::kBackward : Phase::kUpdate;
    }
    for (const std::string& target : options_.targets) {
      const Node* node = g_.FindNode(target);
      if (phase_[node->id()] != Phase::kUpdate) {
        return absl::InvalidArgumentError(absl::StrCat("target node '", target, "' (", node->op(),
                                                       ") is not an update: the pipeline runs forward and backward ops "
                                                       "per micro-batch and only updates once per step"));
      }
    }
    return absl::OkStatus();
  }

  bool IsForwardOp(const Node& node) const { return phase_[node.id()] == Phase::kForward; }

  static bool IsAutodiffNode(const Node& node) { return node.name().rfind("gradients", 0) == 0; }

  absl::Status AssignForwardStages() {
    std::vector<const Node*> ops;
    for (const Node* node : order_) {
      if (IsForwardOp(*node)) ops.push_back(node);
    }
    if (static_cast<int>(ops.size()) < S_) {
      return absl::InvalidArgumentError(
          absl::StrCat("a pipeline of ", S_, " stages needs at least as many forward ops; the model has ", ops.size()));
    }
    // The stage each op must at least be on.
    absl::flat_hash_map<int, int> floor;
    if (!options_.cut_points.empty()) {
      if (static_cast<int>(options_.cut_points.size()) != S_ - 1) {
        return absl::InvalidArgumentError(
            absl::StrCat(options_.cut_points.size(), " cut points for ", S_, " stages; stages - 1 are needed"));
      }
      for (size_t k = 0; k < options_.cut_points.size(); ++k) {
        const Node* cut = g_.FindNode(options_.cut_points[k]);
        if (cut == nullptr || !IsForwardOp(*cut)) {
          return absl::InvalidArgumentError(
              absl::StrCat("cut point '", options_.cut_points[k], "' is not a forward op of the model"));
        }
        floor[cut->id()] = static_cast<int>(k) + 1;
      }
    } else {
      // Balanced: the forward order cut into S non-empty runs whose largest cost is least
      // (binary search on that cost; runs packed greedily).
      std::vector<int64_t> cost;
      int64_t total = 0, largest = 0;
      for (const Node* op : ops) {
        cost.push_back(std::max<int64_t>(1, EstimateNodeFlops(g_, *op)));
        total += cost.back();
        largest = std::max(largest, cost.back());
      }
      const auto runs_needed = [&](int64_t cap) {
        int runs = 1;
        int64_t load = 0;
        for (int64_t c : cost) {
          if (load + c > cap) {
            ++runs;
            load = 0;
          }
          load += c;
        }
        return runs;
      };
      int64_t lo = largest, hi = total;
      while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        if (runs_needed(mid) <= S_) {
          hi = mid;
        } else {
          lo = mid + 1;
        }
      }
      int stage = 0;
      int64_t load = 0;
      const int n = static_cast<int>(ops.size());
      for (int i = 0; i < n; ++i) {
        // A new run when this op would overflow it, or when every later stage needs an op.
        if (i > 0 && stage < S_ - 1 && (load + cost[i] > lo || n - i == S_ - 1 - stage)) {
          ++stage;
          load = 0;
        }
        load += cost[i];
        floor[ops[i]->id()] = stage;
      }
    }
    for (const Node* op : ops) {
      int s = floor.contains(op->id()) ? floor[op->id()] : 0;
      for (const TensorRef& in : op->inputs()) {
        if (in.valid() && IsForwardOp(*g_.node(in.node))) s = std::max(s, stage_[in.node]);
      }
      stage_[op->id()] = s;
    }
    std::vector<int> count(S_, 0);
    for (const Node* op : ops) ++count[stage_[op->id()]];
    for (int s = 0; s < S_; ++s) {
      if (count[s] == 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "pipeline stage ", s, " of ", S_, " has no forward op",
            options_.cut_points.empty() ? " (one op dominates the cost; give cut points)" : " (check the cut points)"));
      }
    }
    return absl::OkStatus();
  }

  // The forward op a gradient op differentiates, from its name "gradients/<op>/...".
  const Node* DifferentiatedOp(const Node& node) const {
    std::vector<std::string> parts = absl::StrSplit(node.name(), '/');
    if (parts.size() < 3 || parts[0].rfind("gradients", 0) != 0) return nullptr;
    for (size_t k = parts.size() - 1; k >= 2; --k) {
      const std::string prefix =
          absl::StrJoin(std::vector<std::string>(parts.begin() + 1, parts.begin() + static_cast<long>(k)), "/");
      const Node* op = g_.FindNode(prefix);
      if (op != nullptr && IsForwardOp(*op)) return op;
    }
    return nullptr;
  }

  absl::Status AssignBackwardStages() {
    auto is_backward = [&](const Node& n) { return phase_[n.id()] == Phase::kBackward; };
    for (const Node* node : order_) {
      if (!is_backward(*node)) continue;
      if (const Node* op = DifferentiatedOp(*node)) stage_[node->id()] = stage_[op->id()];
    }
    // Others (sums of gradients, the seed): their gradient inputs' earliest stage, or
    // their consumers'.
    for (const Node* node : order_) {
      if (!is_backward(*node) || stage_[node->id()] >= 0) continue;
      int s = -1;
      bool all = true;
      for (const TensorRef& in : node->inputs()) {
        if (!in.valid() || !is_backward(*g_.node(in.node))) continue;
        if (stage_[in.node] < 0) all = false;
        s = s < 0 ? stage_[in.node] : std::min(s, stage_[in.node]);
      }
      if (all && s >= 0) stage_[node->id()] = s;
    }
    for (auto it = order_.rbegin(); it != order_.rend(); ++it) {
      const Node& node = **it;
      if (!is_backward(node) || stage_[node.id()] >= 0) continue;
      int s = -1;
      for (const Node* consumer : ConsumersOf(node)) {
        if (is_backward(*consumer) && stage_[consumer->id()] >= 0) {
          s = s < 0 ? stage_[consumer->id()] : std::min(s, stage_[consumer->id()]);
        }
      }
      stage_[node.id()] = s >= 0 ? s : S_ - 1;
    }
    for (const Node* node : order_) {
      if (!is_backward(*node)) continue;
      for (const TensorRef& in : node->inputs()) {
        if (!in.valid() || !is_backward(*g_.node(in.node)) || stage_[in.node] >= stage_[node->id()]) continue;
        return absl::UnimplementedError(absl::StrCat("gradient op '", node->name(), "' (stage ", stage_[node->id()],
                                                     ") reads '", g_.TensorName(in), "' of stage ", stage_[in.node],
                                                     ": gradients must flow to earlier stages"));
      }
    }
    return absl::OkStatus();
  }

  absl::Status AssignVariablesAndUpdates() {
    // A Variable lives on the one stage whose forward and backward ops read it.
    for (const Node* node : order_) {
      if (node->op() != "Variable" || phase_[node->id()] == Phase::kUnneeded) continue;
      std::set<int> stages;
      for (const Node* consumer : ConsumersOf(*node)) {
        if (phase_[consumer->id()] == Phase::kForward || phase_[consumer->id()] == Phase::kBackward) {
          stages.insert(stage_[consumer->id()]);
        }
      }
      if (stages.size() > 1) {
        return absl::UnimplementedError(absl::StrCat("Variable '", node->name(), "' is used by pipeline stages ",
                                                     absl::StrJoin(stages, " and "),
                                                     "; weights shared across stages cannot be pipelined yet"));
      }
      if (!stages.empty()) stage_[node->id()] = *stages.begin();
    }
    // An optimizer update goes with its parameter; other updates and update-only state
    // go wherever they are read (replicated).
    for (const Node* node : order_) {
      if (phase_[node->id()] != Phase::kUpdate) continue;
      for (int slot : node->op_def()->variable_updates) {
        const TensorRef v = node->input(slot);
        if (v.valid() && stage_[v.node] >= 0) {
          update_stages_[node->id()].insert(stage_[v.node]);
          break;
        }
      }
    }
    for (int pass = 0; pass < 2; ++pass) {
      for (auto it = order_.rbegin(); it != order_.rend(); ++it) {
        const Node& node = **it;
        const bool state = node.op() == "Variable" && stage_[node.id()] < 0 && phase_[node.id()] == Phase::kSource;
        if (phase_[node.id()] != Phase::kUpdate && !state) continue;
        if (phase_[node.id()] == Phase::kUpdate && UpdatesOwnedVariable(node)) continue;
        std::set<int>& stages = update_stages_[node.id()];
        for (const Node* consumer : ConsumersOf(node)) {
          stages.insert(update_stages_[consumer->id()].begin(), update_stages_[consumer->id()].end());
        }
        if (node.op_def() != nullptr) {
          for (int slot : node.op_def()->variable_updates) {
            const TensorRef v = node.input(slot);
            if (v.valid()) stages.insert(update_stages_[v.node].begin(), update_stages_[v.node].end());
          }
        }
        if (pass == 1 && stages.empty()) stages.insert(0);
      }
    }
    return absl::OkStatus();
  }

  bool UpdatesOwnedVariable(const Node& node) const {
    for (int slot : node.op_def()->variable_updates) {
      const TensorRef v = node.input(slot);
      if (v.valid() && stage_[v.node] >= 0) return true;
    }
    return false;
  }

  // The stages a node's copy is on.
  std::vector<int> StagesOf(const Node& node) const {
    const Phase p = phase_[node.id()];
    if (p == Phase::kForward || p == Phase::kBackward) return {stage_[node.id()]};
    if (p == Phase::kUpdate) return {update_stages_[node.id()].begin(), update_stages_[node.id()].end()};
    return {};
  }

  absl::StatusOr<PipelineProgram> Build() {
    PipelineProgram program;
    program.stages.resize(S_);
    for (int s = 0; s < S_; ++s) program.stages[s].graph = Graph(g_.registry());
    locals_.assign(S_, {});
    placeholders_.assign(S_, {});
    fetched_.assign(S_, {});
    for (const Node* node : order_) {
      const Phase p = phase_[node->id()];
      if (p == Phase::kUnneeded || p == Phase::kSource) continue;
      for (int s : StagesOf(*node)) {
        PipelineStageProgram& stage = program.stages[s];
        std::vector<TensorRef> inputs;
        for (const TensorRef& in : node->inputs()) {
          if (!in.valid()) {
            inputs.push_back(TensorRef::None());
            continue;
          }
          TSR_ASSIGN_OR_RETURN(TensorRef local, Input(program, *node, s, in));
          inputs.push_back(local);
        }
        absl::StatusOr<Node*> added = stage.graph.AddNodeAndInfer(node->name(), node->op(), inputs, node->attrs());
        if (!added.ok()) {
          return absl::Status(added.status().code(),
                              absl::StrCat("pipeline stage ", s, ": ", added.status().message()));
        }
        for (int j = 0; j < node->num_outputs(); ++j) locals_[s][node->output(j)] = (*added)->output(j);
        if (p == Phase::kForward) {
          ++stage.forward_ops;
          stage.forward_flops += EstimateNodeFlops(g_, *node);
        }
        stage.backward_ops += p == Phase::kBackward;
        stage.update_ops += p == Phase::kUpdate;
      }
    }
    for (const std::string& fetch : options_.fetches) {
      for (const SignatureEntry& e : g_.outputs()) {
        if (e.name != fetch) continue;
        const int s = stage_[e.ref.node];
        if (phase_[e.ref.node] != Phase::kForward) {
          return absl::UnimplementedError(absl::StrCat("output '", fetch, "' is not computed by a forward op"));
        }
        program.fetches[fetch] = {s, g_.TensorName(e.ref)};
        Fetch(program, s, /*forward=*/true, g_.TensorName(e.ref));
      }
    }
    for (const std::string& target : options_.targets) {
      const Node* node = g_.FindNode(target);
      for (int s : StagesOf(*node)) program.stages[s].update_targets.push_back(target);
    }
    for (const Node* node : order_) {
      if (node->op() != "Variable") continue;
      for (int s = 0; s < S_; ++s) {
        if (program.stages[s].graph.FindNode(node->name()) != nullptr)
          program.variable_stages[node->name()].push_back(s);
      }
    }
    return program;
  }

  void Fetch(PipelineProgram& program, int stage, bool forward, const std::string& tensor) {
    if (!fetched_[stage].insert(absl::StrCat(forward, tensor)).second) return;
    (forward ? program.stages[stage].forward_fetches : program.stages[stage].backward_fetches).push_back(tensor);
  }

  // The local tensor node `consumer` on stage `s` reads for global input `in`.
  absl::StatusOr<TensorRef> Input(PipelineProgram& program, const Node& consumer, int s, TensorRef in) {
    const Node& producer = *g_.node(in.node);
    const Phase from = phase_[producer.id()], to = phase_[consumer.id()];
    if (from == Phase::kSource) return Source(program, producer, s, in);
    const std::vector<int> producer_stages = StagesOf(producer);
    const bool here = std::find(producer_stages.begin(), producer_stages.end(), s) != producer_stages.end();
    if (from == to && here) return locals_[s].at(in);
    PipelineTransfer transfer;
    if (from == Phase::kForward && to == Phase::kForward) {
      transfer.kind = PipelineTransfer::Kind::kActivation;
    } else if (from == Phase::kForward && to == Phase::kBackward) {
      transfer.kind = PipelineTransfer::Kind::kStash;
    } else if (from == Phase::kBackward && to == Phase::kBackward) {
      transfer.kind = PipelineTransfer::Kind::kGradient;
    } else if (from == Phase::kBackward && to == Phase::kUpdate && batch_[producer.id()]) {
      transfer.kind = PipelineTransfer::Kind::kAccumulated;
    } else {
      return absl::UnimplementedError(
          absl::StrCat("node '", consumer.name(), "' (", consumer.op(), ") reads '", g_.TensorName(in),
                       "', which depends on the micro-batch, once per step (BatchNorm's running statistics "
                       "cannot be pipelined yet)"));
    }
    transfer.tensor = g_.TensorName(in);
    transfer.from = producer_stages.front();
    transfer.to = s;
    transfer.feed = absl::StrCat("pipeline/", TransferKindName(transfer.kind), "/",
                                 absl::StrReplaceAll(transfer.tensor, {{":", "/output_"}}));
    if (auto it = placeholders_[s].find(transfer.feed); it != placeholders_[s].end()) return it->second;
    const TensorType* type = g_.TypeOf(in);
    AttrMap attrs;
    attrs["dtype"] = AttrValue::Type(type->dtype);
    attrs["shape"] = AttrValue::FromShape(type->shape);
    TSR_ASSIGN_OR_RETURN(Node * placeholder,
                         program.stages[s].graph.AddNodeAndInfer(transfer.feed, "Placeholder", {}, std::move(attrs)));
    placeholders_[s][transfer.feed] = placeholder->output(0);
    Fetch(program, transfer.from, from == Phase::kForward, transfer.tensor);
    program.transfers.push_back(transfer);
    return placeholder->output(0);
  }

  absl::StatusOr<TensorRef> Source(PipelineProgram& program, const Node& source, int s, TensorRef in) {
    if (auto it = locals_[s].find(in); it != locals_[s].end()) return it->second;
    if (source.op() == "Variable") {
      const bool owned = stage_[source.id()] >= 0;
      if (owned ? stage_[source.id()] != s : !update_stages_[source.id()].contains(s)) {
        return absl::UnimplementedError(absl::StrCat("Variable '", source.name(), "' of pipeline stage ",
                                                     owned ? stage_[source.id()] : *update_stages_[source.id()].begin(),
                                                     " is read on stage ", s, " too"));
      }
    }
    Graph& graph = program.stages[s].graph;
    TSR_ASSIGN_OR_RETURN(Node * copy, graph.AddNodeAndInfer(source.name(), source.op(), {}, source.attrs()));
    for (int j = 0; j < source.num_outputs(); ++j) locals_[s][source.output(j)] = copy->output(j);
    if (source.op() == "Placeholder") program.stages[s].data_inputs.push_back(source.name());
    return locals_[s].at(in);
  }

  const Graph& g_;
  const PipelineSplitOptions& options_;
  const int S_;
  std::vector<const Node*> order_;
  std::vector<Phase> phase_;
  std::vector<bool> batch_;
  std::vector<int> stage_;
  std::vector<std::set<int>> update_stages_;
  std::vector<absl::flat_hash_map<TensorRef, TensorRef>> locals_;
  std::vector<absl::flat_hash_map<std::string, TensorRef>> placeholders_;
  std::vector<std::set<std::string>> fetched_;
};

}  // namespace

absl::StatusOr<PipelineProgram> SplitPipelineStages(const Graph& graph, const PipelineSplitOptions& options) {
  return StageSplitter(graph, options).Run();
}

std::string PipelineProgram::Explain() const {
  std::string text = absl::StrCat(stages.size(), " pipeline stages\n");
  for (size_t s = 0; s < stages.size(); ++s) {
    const PipelineStageProgram& stage = stages[s];
    absl::StrAppend(&text, "stage ", s, ": ", stage.forward_ops, " forward ops (", stage.forward_flops,
                    " FLOPs per example), ", stage.backward_ops, " gradient ops, ", stage.update_ops,
                    " update ops; Variables ", VariableBytes(stage.graph), " bytes\n");
    for (const PipelineTransfer& t : transfers) {
      if (t.from != static_cast<int>(s)) continue;
      absl::StrAppend(&text, "  sends ", TransferKindName(t.kind), " '", t.tensor, "' to stage ", t.to, "\n");
    }
  }
  return text;
}

}  // namespace tsr

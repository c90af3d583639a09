// Executor: bound-type inference, dependency-driven scheduling, liveness and in-place
// reuse.
#include "runtime/executor.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"

namespace tsr {

namespace {

// Ops that compute output element i from input element i alone (same dtype and
// shape), so their output may take over a dying input's buffer.
bool IsElementwiseUnary(absl::string_view op) {
  static constexpr absl::string_view kOps[] = {"Neg",     "Abs",        "Exp",  "Log",       "Sqrt",
                                               "Rsqrt",   "Reciprocal", "Relu", "LeakyRelu", "Gelu",
                                               "Sigmoid", "Tanh",       "Erf",  "Softplus",  "Silu"};
  for (absl::string_view o : kOps) {
    if (o == op) return true;
  }
  return false;
}

// `s` prefixed with "node 'name' (Op): " unless it already names the node.
absl::Status NameNode(const Node& node, const absl::Status& s) {
  if (s.ok() || absl::StrContains(s.message(), absl::StrCat("'", node.name(), "'"))) return s;
  return absl::Status(s.code(), absl::StrCat("node '", node.name(), "' (", node.op(), "): ", s.message()));
}

int64_t NanosSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

// Everything one Run shares between the threads executing it.
struct Executor::RunState {
  const RunRequest* request = nullptr;
  const BoundTypes* types = nullptr;
  uint64_t step = 0;
  std::vector<bool> needed;
  std::vector<int> offset;                      // node id -> index of its output 0 in `values`
  std::vector<Tensor> values;                   // every output of every node, flat
  std::vector<char> owned;                      // allocated by this run (so it may be overwritten)
  std::unique_ptr<std::atomic<int>[]> uses;     // readers still to come (fetches never finish)
  std::unique_ptr<std::atomic<int>[]> pending;  // per node: producers still to run
  std::vector<std::vector<int>> consumers;      // per node: distinct needed consumers
  std::chrono::steady_clock::time_point start;

  std::mutex mu;
  std::condition_variable cv;
  int inflight = 0;  // chains scheduled or running
  absl::Status error;
  std::atomic<bool> failed{false};
  std::vector<OpTiming> timings;
  std::atomic<int64_t> nodes_run{0};
};

Executor::Executor(const Graph& graph, Device& device, VariableStore& variables, ExecutorOptions options)
    : graph_(graph), device_(device), variables_(variables), options_(options) {
  absl::StatusOr<std::vector<const Node*>> order = graph_.TopologicalOrder();
  if (order.ok()) order_ = *std::move(order);
}

std::vector<bool> Executor::NeededNodes(const std::vector<TensorRef>& fetches, const std::vector<int>& targets) const {
  std::vector<bool> needed(graph_.num_nodes(), false);
  std::vector<int> stack;
  auto need = [&](int id) {
    if (id >= 0 && id < graph_.num_nodes() && !needed[id]) {
      needed[id] = true;
      stack.push_back(id);
    }
  };
  for (const TensorRef& f : fetches) {
    if (f.valid()) need(f.node);
  }
  for (int id : targets) need(id);
  while (!stack.empty()) {
    const Node* n = graph_.node(stack.back());
    stack.pop_back();
    for (const TensorRef& in : n->inputs()) {
      if (in.valid() && !needed[in.node]) {
        needed[in.node] = true;
        stack.push_back(in.node);
      }
    }
  }
  return needed;
}

const Executor::BoundTypes& Executor::TypesFor(std::optional<int64_t> batch) {
  std::lock_guard<std::mutex> lock(types_mu_);
  std::unique_ptr<BoundTypes>& slot = types_by_batch_[batch.value_or(-1)];
  if (slot != nullptr) return *slot;
  slot = std::make_unique<BoundTypes>();
  BoundTypes& bt = *slot;
  bt.types.resize(graph_.num_nodes());
  bt.errors.resize(graph_.num_nodes());
  for (const Node* node : order_) {
    const int id = node->id();
    std::vector<TensorType> out;
    if (node->op() == "Placeholder") {
      out = node->output_types();
    } else {
      std::vector<std::optional<TensorType>> in_types;
      std::vector<const Tensor*> in_values;
      absl::Status input_error;
      for (const TensorRef& ref : node->inputs()) {
        if (!ref.valid()) {
          in_types.push_back(std::nullopt);
          in_values.push_back(nullptr);
          continue;
        }
        if (!bt.errors[ref.node].ok()) {
          input_error = bt.errors[ref.node];
          break;
        }
        in_types.push_back(bt.types[ref.node][ref.index]);
        in_values.push_back(graph_.ConstantValue(ref));
      }
      if (!input_error.ok()) {
        bt.errors[id] = input_error;
        continue;
      }
      absl::StatusOr<std::vector<TensorType>> inferred =
          InferOutputTypes(*node->op_def(), node->name(), node->attrs(), std::move(in_types), std::move(in_values));
      if (!inferred.ok()) {
        bt.errors[id] = absl::Status(inferred.status().code(),
                                     absl::StrCat("with batch size ", batch.has_value() ? absl::StrCat(*batch) : "N",
                                                  ": ", inferred.status().message()));
        continue;
      }
      out = *std::move(inferred);
    }
    // Inference from concrete inputs leaves no N behind, except where a shape comes
    // from attributes alone (a Placeholder): bind it here.
    if (batch.has_value()) {
      for (TensorType& t : out) t.shape = t.shape.BindBatch(*batch);
    }
    bt.types[id] = std::move(out);
  }
  return bt;
}

absl::Status Executor::RunNode(RunState& state, int id) {
  const Node& node = *graph_.node(id);
  const std::vector<TensorType>& types = state.types->types[id];
  const int base = state.offset[id];
  const std::string& op = node.op();
  if (op == "Placeholder") {
    auto it = state.request->feeds.find(id);
    if (it == state.request->feeds.end()) {
      return absl::InvalidArgumentError(absl::StrCat("placeholder '", node.name(), "' is needed but was not fed"));
    }
    state.values[base] = it->second;
    return absl::OkStatus();
  }
  if (op == "Variable") {
    TSR_ASSIGN_OR_RETURN(state.values[base], variables_.Get(node.name()));
    return absl::OkStatus();
  }
  if (op == "Constant") {
    const AttrValue* value = node.FindAttr("value");
    if (value != nullptr && value->type() == AttrType::kTensor && value->tensor().type() == types[0]) {
      state.values[base] = value->tensor();  // shares the attribute's buffer, never written
      return absl::OkStatus();
    }
  }
  std::vector<const Tensor*> inputs;
  inputs.reserve(node.num_inputs());
  for (const TensorRef& ref : node.inputs()) {
    inputs.push_back(ref.valid() ? &state.values[state.offset[ref.node] + ref.index] : nullptr);
  }
  std::vector<Tensor*> outputs;
  for (int i = 0; i < static_cast<int>(types.size()); ++i) {
    Tensor& out = state.values[base + i];
    const TensorRef in0 = node.num_inputs() > 0 ? node.input(0) : TensorRef::None();
    const int in_flat = in0.valid() ? state.offset[in0.node] + in0.index : -1;
    if (i == 0 && options_.inplace && in_flat >= 0 && IsElementwiseUnary(op) && state.owned[in_flat] &&
        state.uses[in_flat].load() == 1 && state.values[in_flat].type() == types[0]) {
      out = state.values[in_flat];  // the input dies here: write over it
    } else {
      TSR_ASSIGN_OR_RETURN(out, device_.allocator().Allocate(types[i].dtype, types[i].shape));
    }
    state.owned[base + i] = 1;
    outputs.push_back(&out);
  }
  const DType dtype = KernelDType(inputs, outputs);
  absl::StatusOr<const KernelFn*> kernel = device_.FindKernel(op, dtype);
  if (!kernel.ok()) return NameNode(node, kernel.status());
  KernelContext ctx(*node.op_def(), node.name(), node.attrs(), std::move(inputs), std::move(outputs));
  ctx.set_parallel_for(device_.thread_pool().AsParallelForFn());
  ctx.set_rng_key(options_.seed, state.step);
  ctx.set_collective_groups(options_.collective_groups);
  // An output no later node reads and no fetch asks for (MaxPool's Indices at
  // inference) need not be computed -- unless it becomes a Variable's value.
  const std::vector<int>& variable_updates = node.op_def()->variable_updates;
  for (int i = 0; i < static_cast<int>(types.size()); ++i) {
    if (state.uses[base + i].load() == 0 && i >= static_cast<int>(variable_updates.size())) {
      ctx.set_output_needed(i, false);
    }
  }
  TSR_RETURN_IF_ERROR(NameNode(node, (**kernel)(ctx)));
  // Optimizer ops: the outputs become the Variables' values. They now belong to the
  // store, so nothing later in this run may overwrite them in place.
  for (int i = 0; i < static_cast<int>(variable_updates.size()) && i < static_cast<int>(types.size()); ++i) {
    const Node* var = graph_.node(node.input(variable_updates[i]).node);
    TSR_RETURN_IF_ERROR(NameNode(node, variables_.Replace(var->name(), state.values[base + i])));
    state.owned[base + i] = 0;
  }
  return absl::OkStatus();
}

void Executor::RunChain(RunState& state, int id) {
  for (;;) {
    if (state.failed.load()) break;
    const Node& node = *graph_.node(id);
    const int64_t t0 = NanosSince(state.start);
    absl::Status s = RunNode(state, id);
    const int64_t t1 = NanosSince(state.start);
    state.nodes_run.fetch_add(1);
    if (!s.ok()) {
      std::lock_guard<std::mutex> lock(state.mu);
      if (state.error.ok()) state.error = s;
      state.failed.store(true);
      break;
    }
    if (state.request->metadata != nullptr) {
      std::lock_guard<std::mutex> lock(state.mu);
      state.timings.push_back(OpTiming{node.name(), node.op(), t0, t1 - t0, device_.thread_pool().CurrentThreadId()});
    }
    // Liveness: inputs whose last reader this was, and outputs nobody reads.
    for (const TensorRef& ref : node.inputs()) {
      if (!ref.valid()) continue;
      const int flat = state.offset[ref.node] + ref.index;
      if (state.uses[flat].fetch_sub(1) == 1) state.values[flat] = Tensor();
    }
    for (int i = 0; i < node.num_outputs(); ++i) {
      if (state.uses[state.offset[id] + i].load() == 0) state.values[state.offset[id] + i] = Tensor();
    }
    std::vector<int> ready;
    for (int c : state.consumers[id]) {
      if (state.pending[c].fetch_sub(1) == 1) ready.push_back(c);
    }
    if (ready.empty()) break;
    // Keep one ready node on this thread; hand the others to the pool.
    if (ready.size() > 1) {
      {
        std::lock_guard<std::mutex> lock(state.mu);
        state.inflight += static_cast<int>(ready.size()) - 1;
      }
      for (size_t i = 1; i < ready.size(); ++i) {
        const int next = ready[i];
        device_.thread_pool().Schedule([this, &state, next] { RunChain(state, next); });
      }
    }
    id = ready[0];
  }
  std::lock_guard<std::mutex> lock(state.mu);
  if (--state.inflight == 0) state.cv.notify_all();
}

absl::StatusOr<std::vector<Tensor>> Executor::Run(const RunRequest& request) {
  if (order_.size() != static_cast<size_t>(graph_.num_nodes())) {
    TSR_RETURN_IF_ERROR(graph_.TopologicalOrder().status());
  }
  for (const TensorRef& f : request.fetches) {
    const Node* n = graph_.node(f.node);
    if (n == nullptr || f.index < 0 || f.index >= n->num_outputs()) {
      return absl::InvalidArgumentError(
          absl::StrCat("fetch refers to output ", f.index, " of node id ", f.node, ", which does not exist"));
    }
  }
  for (int id : request.targets) {
    if (graph_.node(id) == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("target node id ", id, " does not exist"));
    }
  }
  RunState state;
  state.request = &request;
  state.types = &TypesFor(request.batch);
  const uint64_t run_counter = step_.fetch_add(1);
  state.step = request.step.value_or(run_counter);
  state.needed = NeededNodes(request.fetches, request.targets);
  const int num_nodes = graph_.num_nodes();
  state.offset.resize(num_nodes + 1);
  for (int id = 0; id < num_nodes; ++id) {
    state.offset[id + 1] = state.offset[id] + static_cast<int>(state.types->types[id].size());
  }
  const int num_values = state.offset[num_nodes];
  state.values.resize(num_values);
  state.owned.assign(num_values, 0);
  state.uses = std::make_unique<std::atomic<int>[]>(num_values);
  state.pending = std::make_unique<std::atomic<int>[]>(num_nodes);
  state.consumers.resize(num_nodes);
  for (int i = 0; i < num_values; ++i) state.uses[i].store(0);
  for (int id = 0; id < num_nodes; ++id) state.pending[id].store(0);

  std::vector<int> ready;
  // Collective ops run one after another in topological order: every device of a
  // partitioned program must issue its collectives in the same order, which concurrent
  // scheduling would not keep. Each waits for the previous one as if it were an input.
  int previous_collective = -1;
  for (const Node* node : order_) {
    const int id = node->id();
    if (!state.needed[id]) continue;
    if (!state.types->errors[id].ok()) return state.types->errors[id];
    for (int i = 0; i < static_cast<int>(state.types->types[id].size()); ++i) {
      const TensorType& t = state.types->types[id][i];
      if (!t.shape.is_static()) {
        return absl::InvalidArgumentError(absl::StrCat("tensor '", graph_.TensorName(node->output(i)), "' has shape ",
                                                       t.shape.ToString(), " but no feed gives the batch size N"));
      }
    }
    if (node->op() == "Placeholder" && !request.feeds.contains(id)) {
      return absl::InvalidArgumentError(absl::StrCat("placeholder '", node->name(), "' is needed but was not fed"));
    }
    std::vector<int> producers;
    for (const TensorRef& ref : node->inputs()) {
      if (!ref.valid()) continue;
      state.uses[state.offset[ref.node] + ref.index].fetch_add(1);
      if (std::find(producers.begin(), producers.end(), ref.node) == producers.end()) producers.push_back(ref.node);
    }
    if (node->op_def() != nullptr && node->op_def()->collective) {
      if (previous_collective >= 0 &&
          std::find(producers.begin(), producers.end(), previous_collective) == producers.end()) {
        producers.push_back(previous_collective);
      }
      previous_collective = id;
    }
    for (int p : producers) state.consumers[p].push_back(id);
    state.pending[id].store(static_cast<int>(producers.size()));
    if (producers.empty()) ready.push_back(id);
  }
  // Fetched tensors stay alive to the end: their use never finishes.
  for (const TensorRef& f : request.fetches) state.uses[state.offset[f.node] + f.index].fetch_add(1);

  Allocator& allocator = device_.allocator();
  const int64_t bytes_before = allocator.stats().bytes_in_use;
  allocator.ResetPeak();
  state.start = std::chrono::steady_clock::now();
  if (!ready.empty()) {
    state.inflight = static_cast<int>(ready.size());
    // Every chain runs on the pool's workers while the caller waits, so the pool's
    // size is the number of threads running kernels (a caller taking chains too,
    // with its ParallelFors, would be one more). Only a caller that is itself one of
    // the workers runs its first chain inline, or a one-thread pool would deadlock.
    ThreadPool& pool = device_.thread_pool();
    const bool caller_is_worker = pool.CurrentThreadId() != 0;
    for (size_t i = caller_is_worker ? 1 : 0; i < ready.size(); ++i) {
      const int id = ready[i];
      pool.Schedule([this, &state, id] { RunChain(state, id); });
    }
    if (caller_is_worker) RunChain(state, ready[0]);
    std::unique_lock<std::mutex> lock(state.mu);
    state.cv.wait(lock, [&] { return state.inflight == 0; });
  }
  last_run_node_count_.store(state.nodes_run.load());
  if (request.metadata != nullptr) {
    request.metadata->timings = std::move(state.timings);
    request.metadata->peak_bytes = std::max<int64_t>(0, allocator.stats().peak_bytes - bytes_before);
  }
  if (!state.error.ok()) return state.error;

  std::vector<Tensor> results;
  results.reserve(request.fetches.size());
  for (const TensorRef& f : request.fetches) {
    const int flat = state.offset[f.node] + f.index;
    // Variables, optimizer outputs (now Variable values) and Constants share the
    // store's or the attribute's buffer: callers get a copy they may write to.
    const Node& n = *graph_.node(f.node);
    const bool shared =
        n.op() == "Variable" || !n.op_def()->variable_updates.empty() || (n.op() == "Constant" && !state.owned[flat]);
    results.push_back(shared ? state.values[flat].Clone() : state.values[flat]);
  }
  return results;
}

}  // namespace tsr

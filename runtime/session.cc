// Session: feed and fetch resolution and checking, then the executor.
#include "runtime/session.h"

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/status_macros.h"
#include "platform/denormals.h"

namespace tsr {

namespace {

std::string SignatureNames(const std::vector<SignatureEntry>& entries) {
  if (entries.empty()) return "none";
  return absl::StrJoin(entries, ", ", [](std::string* out, const SignatureEntry& e) { out->append(e.name); });
}

// Whether `fed` fits `expected` (kBatchDim dims match anything); the batch dims'
// sizes are appended to `batch_dims`.
bool ShapeFits(const Shape& fed, const Shape& expected, std::vector<int64_t>& batch_dims) {
  if (fed.rank() != expected.rank()) return false;
  for (int i = 0; i < fed.rank(); ++i) {
    if (expected.dim(i) == kBatchDim) {
      batch_dims.push_back(fed.dim(i));
    } else if (expected.dim(i) != fed.dim(i)) {
      return false;
    }
  }
  return true;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Session>> Session::Create(Graph graph, SessionOptions options) {
  TSR_RETURN_IF_ERROR(graph.Verify());
  std::unique_ptr<Session> session(new Session());
  session->options_ = std::move(options);
  session->graph_ = std::make_unique<Graph>(std::move(graph));
  CpuDeviceOptions device_options{.name = session->options_.device, .num_threads = session->options_.num_threads};
  device_options.allocator.poison = session->options_.poison_memory;
  TSR_ASSIGN_OR_RETURN(session->device_, CpuDevice::Create(device_options));
  TSR_ASSIGN_OR_RETURN(VariableStore store, VariableStore::Initialize(*session->graph_, session->options_.seed));
  session->variables_ = std::make_unique<VariableStore>(std::move(store));
  session->executor_ = std::make_unique<Executor>(
      *session->graph_, *session->device_, *session->variables_,
      ExecutorOptions{.seed = session->options_.seed, .collective_groups = session->options_.collective_groups.get()});
  return session;
}

absl::StatusOr<CheckedFeeds> CheckFeeds(const Graph& g, const std::vector<std::pair<std::string, Tensor>>& feeds) {
  CheckedFeeds request;
  // The feed that first gave the batch size, for error messages.
  std::string batch_source;
  for (const auto& [name, value] : feeds) {
    const Node* node = nullptr;
    for (const SignatureEntry& e : g.inputs()) {
      if (e.name == name) node = g.node(e.ref.node);
    }
    if (node == nullptr) node = g.FindNode(name);
    if (node == nullptr || node->op() != "Placeholder") {
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown feed '", name, "': the graph's inputs are ", SignatureNames(g.inputs()),
          node == nullptr ? "" : absl::StrCat(" ('", name, "' is a ", node->op(), ", not a Placeholder)")));
    }
    if (!value.valid()) return absl::InvalidArgumentError(absl::StrCat("feed '", name, "' holds no tensor"));
    const TensorType& expected = node->output_type(0);
    if (value.dtype() != expected.dtype) {
      return absl::InvalidArgumentError(absl::StrCat("feed '", name, "' has dtype ", DTypeName(value.dtype()),
                                                     " but the graph expects ", DTypeName(expected.dtype), " (",
                                                     expected.ToString(), ")"));
    }
    std::vector<int64_t> batch_dims;
    if (!ShapeFits(value.shape(), expected.shape, batch_dims)) {
      return absl::InvalidArgumentError(absl::StrCat("feed '", name, "' has shape ", value.shape().ToString(),
                                                     " but the graph expects ", expected.shape.ToString()));
    }
    for (int64_t b : batch_dims) {
      if (!request.batch.has_value()) {
        request.batch = b;
        batch_source = name;
      } else if (*request.batch != b) {
        return absl::InvalidArgumentError(absl::StrCat("inconsistent batch sizes: feed '", name, "' has shape ",
                                                       value.shape().ToString(), " (batch ", b, ") but feed '",
                                                       batch_source, "' gave batch size ", *request.batch));
      }
    }
    if (!request.by_node.emplace(node->id(), value).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("feed '", name, "' feeds placeholder '", node->name(), "', which another feed already feeds"));
    }
  }
  return request;
}

absl::StatusOr<std::vector<Tensor>> Session::Run(const std::vector<std::pair<std::string, Tensor>>& feeds,
                                                 const std::vector<std::string>& fetches, RunMetadata* metadata) {
  return Run(feeds, fetches, {}, metadata);
}

absl::StatusOr<std::vector<Tensor>> Session::Run(const std::vector<std::pair<std::string, Tensor>>& feeds,
                                                 const std::vector<std::string>& fetches,
                                                 const std::vector<std::string>& targets, RunMetadata* metadata) {
  return Run(feeds, fetches, RunOptions{.targets = targets, .metadata = metadata});
}

absl::StatusOr<std::vector<Tensor>> Session::Run(const std::vector<std::pair<std::string, Tensor>>& feeds,
                                                 const std::vector<std::string>& fetches, const RunOptions& options) {
  const ScopedFlushDenormals flush_denormals;  // on this thread; the pool's workers flush always
  const std::vector<std::string>& targets = options.targets;
  RunMetadata* metadata = options.metadata;
  const Graph& g = *graph_;
  Executor::RunRequest request;
  TSR_ASSIGN_OR_RETURN(CheckedFeeds checked, CheckFeeds(g, feeds));
  request.feeds = std::move(checked.by_node);
  request.batch = checked.batch;
  for (const std::string& name : fetches) {
    std::optional<TensorRef> ref;
    for (const SignatureEntry& e : g.outputs()) {
      if (e.name == name) ref = e.ref;
    }
    if (!ref.has_value()) {
      absl::StatusOr<TensorRef> parsed = g.ParseTensorName(name);
      const Node* n = parsed.ok() ? g.node(parsed->node) : nullptr;
      if (n == nullptr || parsed->index < 0 || parsed->index >= n->num_outputs()) {
        return absl::InvalidArgumentError(absl::StrCat("unknown fetch '", name, "': neither a graph output (",
                                                       SignatureNames(g.outputs()), ") nor a tensor of the graph"));
      }
      ref = *parsed;
    }
    request.fetches.push_back(*ref);
  }
  for (const std::string& name : targets) {
    const Node* n = g.FindNode(name);
    if (n == nullptr) return absl::InvalidArgumentError(absl::StrCat("unknown target node '", name, "'"));
    request.targets.push_back(n->id());
  }
  // Missing feeds, named as the signature names them.
  const std::vector<bool> needed = executor_->NeededNodes(request.fetches, request.targets);
  for (const Node* node : g.nodes()) {
    if (!needed[node->id()] || node->op() != "Placeholder" || request.feeds.contains(node->id())) continue;
    std::string input_name = node->name();
    for (const SignatureEntry& e : g.inputs()) {
      if (e.ref.node == node->id()) input_name = e.name;
    }
    return absl::InvalidArgumentError(
        absl::StrCat("missing feed '", input_name, "' (", node->output_type(0).ToString(), "): the fetches need it"));
  }
  RunMetadata local;
  request.metadata = metadata != nullptr ? metadata : (options_.profile ? &local : nullptr);
  request.step = options.step;
  absl::StatusOr<std::vector<Tensor>> result = executor_->Run(request);
  if (options_.profile) {
    std::lock_guard<std::mutex> lock(metadata_mu_);
    last_metadata_ = *request.metadata;
  }
  return result;
}

absl::StatusOr<Tensor> Session::GetVariable(absl::string_view name) const {
  TSR_ASSIGN_OR_RETURN(Tensor value, variables_->Get(name));
  return value.Clone();
}

absl::Status Session::SetVariable(absl::string_view name, const Tensor& value) { return variables_->Set(name, value); }

std::vector<std::string> Session::VariableNames() const { return variables_->Names(); }

RunMetadata Session::last_run_metadata() const {
  std::lock_guard<std::mutex> lock(metadata_mu_);
  return last_metadata_;
}

}  // namespace tsr

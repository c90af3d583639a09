// `Session`: the CPU runtime's entry point. It owns a verified graph, a device, the
// variables (initialized at creation) and an executor; Run checks feeds against the
// graph's signature, binds the batch size and returns the fetched tensors.
//
//   TSR_ASSIGN_OR_RETURN(auto session, Session::Create(std::move(graph), {.seed = 1}));
//   TSR_ASSIGN_OR_RETURN(std::vector<Tensor> out, session->Run({{"image", batch}}, {"logits"}));
//
// Run may be called from several threads at once.
#ifndef TESSERA_RUNTIME_SESSION_H_
#define TESSERA_RUNTIME_SESSION_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/graph.h"
#include "graph/tensor.h"
#include "runtime/device.h"
#include "runtime/executor.h"
#include "runtime/run_metadata.h"
#include "runtime/variable_store.h"

namespace tsr {

class CollectiveGroups;  // runtime/collectives/collective_groups.h

// Feeds checked against a graph's placeholders (see CheckFeeds).
struct CheckedFeeds {
  absl::flat_hash_map<int, Tensor> by_node;  // Placeholder node id -> value
  std::optional<int64_t> batch;              // the batch size the feeds bind, when one has a batch dim
};

// What Session::Run checks of its feeds, for callers that run a graph another way (the
// compiled path of `tessera run`): each names a Placeholder (by signature name or node
// name) once, with its dtype and a shape that fits (one size for every batch dim N of all
// feeds). InvalidArgument naming the feed otherwise.
absl::StatusOr<CheckedFeeds> CheckFeeds(const Graph& graph, const std::vector<std::pair<std::string, Tensor>>& feeds);

struct SessionOptions {
  int num_threads = 0;         // 0: hardware concurrency
  std::string device = "cpu";  // or "reference" (the oracle kernels only)
  uint64_t seed = 0;           // variable initializers and random ops
  bool profile = false;        // record per-op timings (see last_run_metadata)
  // Debugging: fill every buffer with NaN / all-ones bits before a kernel writes it,
  // so a kernel reading memory it never wrote shows up as NaNs in the results.
  bool poison_memory = false;
  // The communicators of the device this session stands for, when its graph is one
  // device's program of a partitioned graph (it has collective ops); null otherwise.
  std::shared_ptr<CollectiveGroups> collective_groups;
};

// Per-call settings of Session::Run beyond feeds and fetches.
struct RunOptions {
  // Nodes (by name) to run without returning their outputs: a training step fetches
  // the loss and targets the optimizer updates.
  std::vector<std::string> targets;
  // The step random ops (Dropout) key their draws by; default: the session's run
  // counter. A training loop passes its global step, so a resumed run draws the same.
  std::optional<uint64_t> step;
  RunMetadata* metadata = nullptr;  // per-op timings are recorded here when non-null
};

class Session {
 public:
  // Verifies the graph, creates the device and initializes every variable.
  static absl::StatusOr<std::unique_ptr<Session>> Create(Graph graph, SessionOptions options = {});

  // feeds: by signature input name or Placeholder node name; fetches: signature output
  // name or tensor name ("node", "node:1"). Only the nodes the fetches need run.
  absl::StatusOr<std::vector<Tensor>> Run(const std::vector<std::pair<std::string, Tensor>>& feeds,
                                          const std::vector<std::string>& fetches, RunMetadata* metadata = nullptr);
  // Also runs the `targets` (node names) without returning their outputs: a training
  // step fetches the loss and targets the optimizer updates.
  absl::StatusOr<std::vector<Tensor>> Run(const std::vector<std::pair<std::string, Tensor>>& feeds,
                                          const std::vector<std::string>& fetches,
                                          const std::vector<std::string>& targets, RunMetadata* metadata = nullptr);
  absl::StatusOr<std::vector<Tensor>> Run(const std::vector<std::pair<std::string, Tensor>>& feeds,
                                          const std::vector<std::string>& fetches, const RunOptions& options);

  // A copy of the variable's current value.
  absl::StatusOr<Tensor> GetVariable(absl::string_view name) const;
  // dtype and shape must match the variable's.
  absl::Status SetVariable(absl::string_view name, const Tensor& value);
  std::vector<std::string> VariableNames() const;

  const Graph& graph() const { return *graph_; }
  const SessionOptions& options() const { return options_; }
  Device& device() { return *device_; }
  // The metadata of the last Run when options.profile is set (timings and peak bytes).
  RunMetadata last_run_metadata() const;
  // How many nodes the last Run executed.
  int64_t last_run_node_count() const { return executor_->last_run_node_count(); }

 private:
  Session() = default;

  SessionOptions options_;
  std::unique_ptr<Graph> graph_;
  std::unique_ptr<CpuDevice> device_;
  std::unique_ptr<VariableStore> variables_;
  std::unique_ptr<Executor> executor_;
  mutable std::mutex metadata_mu_;
  RunMetadata last_metadata_;
};

}  // namespace tsr

#endif  // TESSERA_RUNTIME_SESSION_H_

// `Executor`: runs a Graph op by op on a Device.
//
// A run binds the symbolic batch to the fed size and re-infers every node's types with
// concrete shapes (cached per batch size), runs only the nodes the fetches need, in
// dependency order, with independent nodes running concurrently on the device's thread
// pool, and frees each output after its last consumer ran. Elementwise unary ops run
// in place when their input buffer dies there and the run allocated it. Placeholders
// read the feeds, Variables the variable store, Constants alias their attribute.
// Optimizer ops (OpDef::variable_updates) replace their Variables' values in the
// store when they finish; the next run reads the new values. Collective ops
// (OpDef::collective) run one at a time in topological order, the same on every device.
//
// It does not check feeds against the graph's signature: Session does that.
#ifndef TESSERA_RUNTIME_EXECUTOR_H_
#define TESSERA_RUNTIME_EXECUTOR_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "graph/tensor.h"
#include "runtime/device.h"
#include "runtime/run_metadata.h"
#include "runtime/variable_store.h"

namespace tsr {

class CollectiveGroups;

struct ExecutorOptions {
  uint64_t seed = 0;    // random ops' key (with the run's step)
  bool inplace = true;  // let elementwise unary ops overwrite a dying input
  // The device's communicators, for the collective ops of partitioned graphs; must
  // outlive the executor (null: none).
  CollectiveGroups* collective_groups = nullptr;
};

class Executor {
 public:
  // `graph`, `device` and `variables` must outlive the executor; `graph` is verified.
  Executor(const Graph& graph, Device& device, VariableStore& variables, ExecutorOptions options = {});

  struct RunRequest {
    absl::flat_hash_map<int, Tensor> feeds;  // Placeholder node id -> value
    std::vector<TensorRef> fetches;
    // Nodes to run (with what they need) whose outputs are not returned: optimizer
    // updates, whose effect is the new values of their Variables.
    std::vector<int> targets;
    std::optional<int64_t> batch;  // the bound batch size, when a feed gave one
    // The step random ops (Dropout) key their draws by; default: this executor's run
    // counter. A trainer passes its global step so that a resumed run draws the same.
    std::optional<uint64_t> step;
    RunMetadata* metadata = nullptr;  // timings are recorded when non-null
  };
  // The fetched tensors, in order. Errors name the failing node.
  absl::StatusOr<std::vector<Tensor>> Run(const RunRequest& request);

  // The fetches' and targets' nodes and their producers, transitively, as a mask by node id.
  std::vector<bool> NeededNodes(const std::vector<TensorRef>& fetches, const std::vector<int>& targets = {}) const;

  // Output types of every node with the batch bound (nullopt: unbound); an error for a
  // node whose inference fails with that batch is returned when the node is needed.
  struct BoundTypes {
    std::vector<std::vector<TensorType>> types;  // by node id
    std::vector<absl::Status> errors;            // by node id
  };
  const BoundTypes& TypesFor(std::optional<int64_t> batch);

  // How many nodes the last Run executed (sources included).
  int64_t last_run_node_count() const { return last_run_node_count_.load(); }

 private:
  struct RunState;
  absl::Status RunNode(RunState& state, int id);
  void RunChain(RunState& state, int id);

  const Graph& graph_;
  Device& device_;
  VariableStore& variables_;
  ExecutorOptions options_;
  std::vector<const Node*> order_;  // topological
  std::mutex types_mu_;
  std::map<int64_t, std::unique_ptr<BoundTypes>> types_by_batch_;  // key -1: unbound
  std::atomic<uint64_t> step_{0};
  std::atomic<int64_t> last_run_node_count_{0};
};

}  // namespace tsr

#endif  // TESSERA_RUNTIME_EXECUTOR_H_

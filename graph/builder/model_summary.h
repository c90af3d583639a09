// `ModelSummary`: what a graph holds and costs, Keras `model.summary()`-style — node
// and op counts, parameters (elements of Variables, trainable or not), constant
// elements, their bytes, estimated FLOPs per example (EstimateFlops with the batch
// bound to 1), the signature, and one row per node. `FormatModelSummary` renders it
// as text; the `tessera inspect` command also renders it as JSON.
#ifndef TESSERA_GRAPH_BUILDER_MODEL_SUMMARY_H_
#define TESSERA_GRAPH_BUILDER_MODEL_SUMMARY_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/graph.h"

namespace tsr {

struct NodeSummary {
  std::string name;
  std::string op;
  std::vector<TensorType> outputs;
  // Elements the node holds: a Variable's or Constant's value, 0 for other ops.
  int64_t params = 0;
  int64_t bytes = 0;
  int64_t flops = 0;  // per example
};

struct SignatureSummary {
  std::string name;
  std::string tensor;  // the tensor name in the graph
  TensorType type;
};

struct ModelSummary {
  int num_nodes = 0;
  // (op, count), most frequent first, ties by name.
  std::vector<std::pair<std::string, int>> op_counts;
  int64_t trainable_params = 0;
  int64_t non_trainable_params = 0;
  int64_t constant_elements = 0;
  int64_t param_bytes = 0;  // of all Variables
  int64_t constant_bytes = 0;
  int64_t flops = 0;  // per example
  std::vector<SignatureSummary> inputs;
  std::vector<SignatureSummary> outputs;
  std::vector<NodeSummary> nodes;  // topological order

  int64_t params() const { return trainable_params + non_trainable_params; }
};

// Summarizes a graph whose types are inferred (a verified graph); fails on a cycle
// or a node without an OpDef.
absl::StatusOr<ModelSummary> SummarizeModel(const Graph& graph);

// The `top` nodes with the most FLOPs (ties: more params first, then graph order);
// every node in topological order when top < 0.
std::vector<const NodeSummary*> HeaviestNodes(const ModelSummary& summary, int top);

// Totals, signature and a per-node table (limited to HeaviestNodes(top)).
std::string FormatModelSummary(const ModelSummary& summary, int top = -1);

// FLOPs of `node` per example from its inputs' types in `graph` (constant inputs
// known); 0 without an estimate.
int64_t EstimateNodeFlops(const Graph& graph, const Node& node);

// Bytes the graph's Variables hold (static shapes).
int64_t VariableBytes(const Graph& graph);

// 269322 -> "269,322".
std::string FormatCount(int64_t n);
// 1077288 -> "1.03 MiB"; below 1 KiB: "123 B".
std::string FormatBytes(int64_t bytes);

}  // namespace tsr

#endif  // TESSERA_GRAPH_BUILDER_MODEL_SUMMARY_H_

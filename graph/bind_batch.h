// Binding the symbolic batch dimension N of a graph to a size: the first step of static
// compilation, after which every tensor of the graph has a static shape.
#ifndef TESSERA_GRAPH_BIND_BATCH_H_
#define TESSERA_GRAPH_BIND_BATCH_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "graph/graph.h"

namespace tsr {

// A copy of `graph` in which every shape attribute (Placeholder and Variable shapes, and any
// other op's) has N replaced by `batch` (>= 1) and every node's types re-inferred. Fails,
// naming the node, when inference fails with this batch or leaves an output shape that is
// not static.
absl::StatusOr<Graph> BindBatch(const Graph& graph, int64_t batch);

}  // namespace tsr

#endif  // TESSERA_GRAPH_BIND_BATCH_H_

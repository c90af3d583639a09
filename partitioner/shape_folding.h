// `FoldShapeComputations`: once the batch is bound every shape is static, so the
// shape arithmetic a graph does at run time (Shape and Size of a tensor, and what is
// computed from them: the element counts a mean gradient divides by, the targets of
// Reshape and Expand) can be done now. The partitioner needs it: in a device's program
// `Shape(x)` would give the device's share of x, while the gradient of a mean over the
// whole batch must divide by the global count — folded, the count is the global one and
// the reshape targets are constants the partitioner can localize.
//
// Replaces Shape and Size nodes with Constants, then every stateless node whose inputs
// are all Constants and whose outputs are small (<= 4096 elements each) with Constants
// computed by the reference kernels. Rewired consumers read the new Constants; the
// folded nodes stay in the graph, unread (nodes are never removed; runs skip them).
#ifndef TESSERA_PARTITIONER_SHAPE_FOLDING_H_
#define TESSERA_PARTITIONER_SHAPE_FOLDING_H_

#include "absl/status/statusor.h"
#include "graph/graph.h"

namespace tsr {

// `graph` must have static shapes (graph/bind_batch.h). Returns how many nodes were
// folded; errors name the node whose kernel failed.
absl::StatusOr<int> FoldShapeComputations(Graph& graph);

}  // namespace tsr

#endif  // TESSERA_PARTITIONER_SHAPE_FOLDING_H_

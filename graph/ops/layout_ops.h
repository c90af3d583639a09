// Layout ops — Transpose, Concat, Split, Slice, Pad, Tile: ops that move elements
// to new positions.
//
// Registered by RegisterShapeOps (graph/ops/register_ops.h), since they belong to
// the shape family; this header declares their registration for shape_ops.cc.
#ifndef TESSERA_GRAPH_OPS_LAYOUT_OPS_H_
#define TESSERA_GRAPH_OPS_LAYOUT_OPS_H_

#include "absl/status/status.h"

namespace tsr {

class OpRegistry;

absl::Status RegisterLayoutOps(OpRegistry& registry);

}  // namespace tsr

#endif  // TESSERA_GRAPH_OPS_LAYOUT_OPS_H_

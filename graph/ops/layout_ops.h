// Layout ops — Transpose, Concat, Split, Slice, Pad, Tile: ops that move elements
// to new positions — and the reader of constant shape-like inputs that they share
// with the shape ops (Reshape's shape, Unsqueeze's axes, ...).
//
// Registered by RegisterShapeOps (graph/ops/register_ops.h); this header exists so
// that the two files of the shape family can share code.
#ifndef TESSERA_GRAPH_OPS_LAYOUT_OPS_H_
#define TESSERA_GRAPH_OPS_LAYOUT_OPS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "graph/op_def.h"

namespace tsr {

class OpRegistry;

absl::Status RegisterLayoutOps(OpRegistry& registry);

// The values of input `i`, a 1-D i32/i64 tensor that must be a known constant
// because it determines an output shape. Errors name the input (by its OpDef name)
// and say what is expected.
absl::StatusOr<std::vector<int64_t>> ReadConstantInts(const InferenceContext& ctx, int i);

// "[1,-1,0]": the values of a shape-like input, for error messages.
std::string IntsToString(const std::vector<int64_t>& values);

}  // namespace tsr

#endif  // TESSERA_GRAPH_OPS_LAYOUT_OPS_H_

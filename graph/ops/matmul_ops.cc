// TODO(ops): MatMul op definitions.
#include "graph/op_registry.h"
#include "graph/ops/register_ops.h"

namespace tsr {

absl::Status RegisterMatMulOps(OpRegistry& registry) { return absl::OkStatus(); }

}  // namespace tsr

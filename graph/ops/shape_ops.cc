// TODO(ops): Shape op definitions.
#include "graph/op_registry.h"
#include "graph/ops/register_ops.h"

namespace tsr {

absl::Status RegisterShapeOps(OpRegistry& registry) { return absl::OkStatus(); }

}  // namespace tsr

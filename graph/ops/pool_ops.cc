// TODO(ops): Pool op definitions.
#include "graph/op_registry.h"
#include "graph/ops/register_ops.h"

namespace tsr {

absl::Status RegisterPoolOps(OpRegistry& registry) { return absl::OkStatus(); }

}  // namespace tsr

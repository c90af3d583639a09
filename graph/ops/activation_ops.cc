// TODO(ops): Activation op definitions.
#include "graph/op_registry.h"
#include "graph/ops/register_ops.h"

namespace tsr {

absl::Status RegisterActivationOps(OpRegistry& registry) { return absl::OkStatus(); }

}  // namespace tsr

// The built-in op set.
#include "graph/ops/register_ops.h"

#include "graph/status_macros.h"

namespace tsr {

absl::Status RegisterBuiltinOps(OpRegistry& registry) {
  TSR_RETURN_IF_ERROR(RegisterSourceOps(registry));
  TSR_RETURN_IF_ERROR(RegisterElementwiseOps(registry));
  TSR_RETURN_IF_ERROR(RegisterActivationOps(registry));
  TSR_RETURN_IF_ERROR(RegisterMathOps(registry));
  TSR_RETURN_IF_ERROR(RegisterReductionOps(registry));
  TSR_RETURN_IF_ERROR(RegisterRandomOps(registry));
  TSR_RETURN_IF_ERROR(RegisterMatMulOps(registry));
  TSR_RETURN_IF_ERROR(RegisterConvOps(registry));
  TSR_RETURN_IF_ERROR(RegisterPoolOps(registry));
  TSR_RETURN_IF_ERROR(RegisterNormalizationOps(registry));
  TSR_RETURN_IF_ERROR(RegisterLossOps(registry));
  TSR_RETURN_IF_ERROR(RegisterEinsumOps(registry));
  TSR_RETURN_IF_ERROR(RegisterShapeOps(registry));
  TSR_RETURN_IF_ERROR(RegisterIndexingOps(registry));
  TSR_RETURN_IF_ERROR(RegisterResizeOps(registry));
  TSR_RETURN_IF_ERROR(RegisterOptimizerOps(registry));
  TSR_RETURN_IF_ERROR(RegisterGradientOps(registry));
  TSR_RETURN_IF_ERROR(RegisterFusedOps(registry));
  TSR_RETURN_IF_ERROR(RegisterAttentionOps(registry));
  TSR_RETURN_IF_ERROR(RegisterBlockedOps(registry));
  TSR_RETURN_IF_ERROR(RegisterCollectiveOps(registry));
  return absl::OkStatus();
}

}  // namespace tsr

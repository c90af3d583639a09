// The built-in kernel set.
#include "kernels/register_kernels.h"

#include "graph/status_macros.h"

namespace tsr {

absl::Status RegisterBuiltinKernels(KernelRegistry& registry) {
  TSR_RETURN_IF_ERROR(RegisterReferenceSourceKernels(registry));
  TSR_RETURN_IF_ERROR(RegisterReferenceElementwiseKernels(registry));
  TSR_RETURN_IF_ERROR(RegisterReferenceActivationKernels(registry));
  TSR_RETURN_IF_ERROR(RegisterReferenceMathKernels(registry));
  TSR_RETURN_IF_ERROR(RegisterReferenceReductionKernels(registry));
  TSR_RETURN_IF_ERROR(RegisterReferenceRandomKernels(registry));
  TSR_RETURN_IF_ERROR(RegisterReferenceMatMulKernels(registry));
  TSR_RETURN_IF_ERROR(RegisterReferenceConvKernels(registry));
  TSR_RETURN_IF_ERROR(RegisterReferencePoolKernels(registry));
  TSR_RETURN_IF_ERROR(RegisterReferenceNormalizationKernels(registry));
  TSR_RETURN_IF_ERROR(RegisterReferenceLossKernels(registry));
  TSR_RETURN_IF_ERROR(RegisterReferenceEinsumKernels(registry));
  TSR_RETURN_IF_ERROR(RegisterReferenceShapeKernels(registry));
  TSR_RETURN_IF_ERROR(RegisterReferenceIndexingKernels(registry));
  TSR_RETURN_IF_ERROR(RegisterReferenceResizeKernels(registry));
  TSR_RETURN_IF_ERROR(RegisterReferenceOptimizerKernels(registry));
  TSR_RETURN_IF_ERROR(RegisterReferenceGradientKernels(registry));
  TSR_RETURN_IF_ERROR(RegisterReferenceFusedKernels(registry));
  TSR_RETURN_IF_ERROR(RegisterReferenceAttentionKernels(registry));
  TSR_RETURN_IF_ERROR(RegisterReferenceBlockedKernels(registry));
  TSR_RETURN_IF_ERROR(RegisterCpuKernels(registry));
  TSR_RETURN_IF_ERROR(RegisterCollectiveKernels(registry));
  return absl::OkStatus();
}

}  // namespace tsr

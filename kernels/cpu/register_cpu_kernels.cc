// The optimized CPU kernel set (f32); ops without one fall back to the reference
// kernels.
#include "graph/status_macros.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/kernel.h"
#include "kernels/register_kernels.h"

namespace tsr {

absl::Status RegisterCpuKernels(KernelRegistry& registry) {
  TSR_RETURN_IF_ERROR(RegisterCpuMatMulKernels(registry));
  TSR_RETURN_IF_ERROR(RegisterCpuConvKernels(registry));
  TSR_RETURN_IF_ERROR(RegisterCpuConvGradKernels(registry));
  TSR_RETURN_IF_ERROR(RegisterCpuConvTransposeKernels(registry));
  TSR_RETURN_IF_ERROR(RegisterCpuPoolGradKernels(registry));
  TSR_RETURN_IF_ERROR(RegisterCpuNormalizationGradKernels(registry));
  TSR_RETURN_IF_ERROR(RegisterCpuIndexingGradKernels(registry));
  TSR_RETURN_IF_ERROR(RegisterCpuOptimizerKernels(registry));
  TSR_RETURN_IF_ERROR(RegisterCpuPoolKernels(registry));
  TSR_RETURN_IF_ERROR(RegisterCpuElementwiseKernels(registry));
  TSR_RETURN_IF_ERROR(RegisterCpuActivationKernels(registry));
  TSR_RETURN_IF_ERROR(RegisterCpuSoftmaxKernels(registry));
  TSR_RETURN_IF_ERROR(RegisterCpuLossKernels(registry));
  TSR_RETURN_IF_ERROR(RegisterCpuReductionKernels(registry));
  TSR_RETURN_IF_ERROR(RegisterCpuNormalizationKernels(registry));
  TSR_RETURN_IF_ERROR(RegisterCpuLayoutKernels(registry));
  TSR_RETURN_IF_ERROR(RegisterCpuIndexingKernels(registry));
  TSR_RETURN_IF_ERROR(RegisterCpuFusedConvKernels(registry));
  TSR_RETURN_IF_ERROR(RegisterCpuFusedMatMulKernels(registry));
  TSR_RETURN_IF_ERROR(RegisterCpuAttentionKernels(registry));
  TSR_RETURN_IF_ERROR(RegisterCpuBlockedKernels(registry));
  return absl::OkStatus();
}

}  // namespace tsr

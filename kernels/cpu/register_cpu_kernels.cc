// The optimized CPU kernel set (f32); ops without one fall back to the reference
// kernels.
#include "graph/status_macros.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/kernel.h"
#include "kernels/register_kernels.h"

namespace tsr {

absl::Status RegisterCpuKernels(KernelRegistry& registry) {
  TSR_RETURN_IF_ERROR(RegisterCpuMatMulKernels(registry));
  return absl::OkStatus();
}

}  // namespace tsr

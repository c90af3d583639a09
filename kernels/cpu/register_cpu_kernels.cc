// Optimized CPU kernels (none yet: the CPU device falls back to reference kernels).
#include "kernels/kernel.h"
#include "kernels/register_kernels.h"

namespace tsr {

absl::Status RegisterCpuKernels(KernelRegistry& registry) { return absl::OkStatus(); }

}  // namespace tsr

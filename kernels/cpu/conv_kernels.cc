// PLACEHOLDER being replaced by its owner this session: the optimized Conv (f32) kernels.
#include "kernels/cpu/cpu_kernels.h"

namespace tsr {

absl::Status RegisterCpuConvKernels(KernelRegistry&) { return absl::OkStatus(); }

}  // namespace tsr

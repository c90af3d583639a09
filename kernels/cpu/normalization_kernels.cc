// PLACEHOLDER being replaced by its owner this session: the optimized LayerNormalization, BatchNormalization (f32) kernels.
#include "kernels/cpu/cpu_kernels.h"

namespace tsr {

absl::Status RegisterCpuNormalizationKernels(KernelRegistry&) { return absl::OkStatus(); }

}  // namespace tsr

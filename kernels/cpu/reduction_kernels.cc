// PLACEHOLDER being replaced by its owner this session: the optimized ReduceSum/Mean/Max/Min/Prod, ArgMax (f32) kernels.
#include "kernels/cpu/cpu_kernels.h"

namespace tsr {

absl::Status RegisterCpuReductionKernels(KernelRegistry&) { return absl::OkStatus(); }

}  // namespace tsr

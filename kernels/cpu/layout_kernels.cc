// PLACEHOLDER being replaced by its owner this session: the optimized Transpose, Concat, Split, Slice, Pad, Tile (all dtypes) kernels.
#include "kernels/cpu/cpu_kernels.h"

namespace tsr {

absl::Status RegisterCpuLayoutKernels(KernelRegistry&) { return absl::OkStatus(); }

}  // namespace tsr

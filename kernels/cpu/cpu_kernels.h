// Registration of the optimized CPU kernel families (kernels/cpu/), one function per
// file; RegisterCpuKernels (kernels/register_kernels.h) calls them all.
#ifndef TESSERA_KERNELS_CPU_CPU_KERNELS_H_
#define TESSERA_KERNELS_CPU_CPU_KERNELS_H_

#include "absl/status/status.h"
#include "kernels/kernel.h"

namespace tsr {

absl::Status RegisterCpuMatMulKernels(KernelRegistry& registry);  // MatMul, Gemm (f32)

}  // namespace tsr

#endif  // TESSERA_KERNELS_CPU_CPU_KERNELS_H_

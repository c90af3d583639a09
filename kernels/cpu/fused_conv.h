// FusedConv on the CPU (f32): y = act(conv(x, w) + bias + residual). The convolution
// is conv_prepared.h's ConvForward (the same algorithm choice and floats as the cpu
// Conv kernel); the residual add and the activation are one pass per output plane
// afterwards (fused_activation.h), with the row functions of the standalone Add and
// activation kernels.
#ifndef TESSERA_KERNELS_CPU_FUSED_CONV_H_
#define TESSERA_KERNELS_CPU_FUSED_CONV_H_

#include <cstdint>

#include "absl/status/status.h"
#include "kernels/cpu/conv_prepared.h"
#include "kernels/cpu/fused_activation.h"
#include "kernels/kernel.h"

namespace tsr {

// y = act(conv(x) + bias + residual) for `batch` images on weights prepared once
// (the compiled runtime prepares constant weights at load time). x, y as for
// ConvForward; residual has y's shape [batch, out_channels, out...] or is null; bias
// [out_channels] or null. parallel_for (null: inline) splits the work; the results
// do not depend on the split. Uses the kernels of ActiveCpuIsa(), which must be the
// ISA `prepared` was made for.
void FusedConvForward(const PreparedConvWeights& prepared, int64_t batch, const float* x, const float* bias,
                      const float* residual, const FusedActivation& activation, float* y,
                      const ParallelForFn& parallel_for);

// Registers the FusedConv f32 cpu kernel.
absl::Status RegisterCpuFusedConvKernels(KernelRegistry& registry);

}  // namespace tsr

#endif  // TESSERA_KERNELS_CPU_FUSED_CONV_H_

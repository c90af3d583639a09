// Registration of the optimized CPU kernel families (kernels/cpu/), one function per
// file; RegisterCpuKernels (kernels/register_kernels.h) calls them all.
#ifndef TESSERA_KERNELS_CPU_CPU_KERNELS_H_
#define TESSERA_KERNELS_CPU_CPU_KERNELS_H_

#include "absl/status/status.h"
#include "kernels/kernel.h"

namespace tsr {

// MatMul, Gemm (f32)
absl::Status RegisterCpuMatMulKernels(KernelRegistry& registry);
// Conv (f32)
absl::Status RegisterCpuConvKernels(KernelRegistry& registry);
absl::Status RegisterCpuConvGradKernels(KernelRegistry& registry);
absl::Status RegisterCpuConvTransposeKernels(KernelRegistry& registry);
absl::Status RegisterCpuPoolGradKernels(KernelRegistry& registry);
absl::Status RegisterCpuNormalizationGradKernels(KernelRegistry& registry);
absl::Status RegisterCpuIndexingGradKernels(KernelRegistry& registry);
absl::Status RegisterCpuOptimizerKernels(KernelRegistry& registry);
// MaxPool, AveragePool, GlobalAveragePool (f32)
absl::Status RegisterCpuPoolKernels(KernelRegistry& registry);
// arithmetic, comparison, unary math, Clip, Where (f32)
absl::Status RegisterCpuElementwiseKernels(KernelRegistry& registry);
// Relu, LeakyRelu, Sigmoid, Tanh, Gelu, Silu, Softplus, Erf (f32)
absl::Status RegisterCpuActivationKernels(KernelRegistry& registry);
// Softmax, LogSoftmax (f32)
absl::Status RegisterCpuSoftmaxKernels(KernelRegistry& registry);
// SoftmaxCrossEntropyLoss (f32)
absl::Status RegisterCpuLossKernels(KernelRegistry& registry);
// ReduceSum/Mean/Max/Min/Prod, ArgMax (f32)
absl::Status RegisterCpuReductionKernels(KernelRegistry& registry);
// LayerNormalization, BatchNormalization (f32)
absl::Status RegisterCpuNormalizationKernels(KernelRegistry& registry);
// Transpose, Concat, Split, Slice, Pad, Tile (all dtypes)
absl::Status RegisterCpuLayoutKernels(KernelRegistry& registry);
// Gather, GatherElements, ScatterElements (all dtypes), OneHot (integer indices, any values)
absl::Status RegisterCpuIndexingKernels(KernelRegistry& registry);
// FusedConv, FusedMatMul (f32; fused_conv.h, fused_matmul.h)
absl::Status RegisterCpuFusedConvKernels(KernelRegistry& registry);
absl::Status RegisterCpuFusedMatMulKernels(KernelRegistry& registry);
// MultiHeadAttention (f32; attention_kernels.cc)
absl::Status RegisterCpuAttentionKernels(KernelRegistry& registry);
// BlockChannels, UnblockChannels, BlockedConv (blocked_layout_kernels.cc)
absl::Status RegisterCpuBlockedKernels(KernelRegistry& registry);

}  // namespace tsr

#endif  // TESSERA_KERNELS_CPU_CPU_KERNELS_H_

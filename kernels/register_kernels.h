// Registration of the built-in kernels, one function per family and device.
#ifndef TESSERA_KERNELS_REGISTER_KERNELS_H_
#define TESSERA_KERNELS_REGISTER_KERNELS_H_

#include "absl/status/status.h"

namespace tsr {

class KernelRegistry;

// Everything below.
absl::Status RegisterBuiltinKernels(KernelRegistry& registry);

// kernels/reference/ — the oracle: one plain implementation per op and dtype.
absl::Status RegisterReferenceSourceKernels(
    KernelRegistry& registry);  // Constant, Identity (Placeholder/Variable are runtime-fed)
absl::Status RegisterReferenceElementwiseKernels(KernelRegistry& registry);  // elementwise_ops.cc's ops
absl::Status RegisterReferenceActivationKernels(KernelRegistry& registry);
absl::Status RegisterReferenceMathKernels(KernelRegistry& registry);  // math_ops.cc's ops
absl::Status RegisterReferenceReductionKernels(KernelRegistry& registry);
absl::Status RegisterReferenceRandomKernels(KernelRegistry& registry);  // Dropout
absl::Status RegisterReferenceMatMulKernels(KernelRegistry& registry);
absl::Status RegisterReferenceConvKernels(KernelRegistry& registry);
absl::Status RegisterReferencePoolKernels(KernelRegistry& registry);
absl::Status RegisterReferenceNormalizationKernels(KernelRegistry& registry);
absl::Status RegisterReferenceLossKernels(KernelRegistry& registry);
absl::Status RegisterReferenceEinsumKernels(KernelRegistry& registry);
absl::Status RegisterReferenceShapeKernels(KernelRegistry& registry);  // shape_ops.cc + layout_ops.cc
absl::Status RegisterReferenceIndexingKernels(KernelRegistry& registry);
absl::Status RegisterReferenceResizeKernels(KernelRegistry& registry);     // Resize, ResizeGrad
absl::Status RegisterReferenceOptimizerKernels(KernelRegistry& registry);  // SGDUpdate, ..., Increment
absl::Status RegisterReferenceGradientKernels(KernelRegistry& registry);   // graph/ops/gradient_ops.cc
absl::Status RegisterReferenceFusedKernels(KernelRegistry& registry);      // FusedConv, FusedMatMul
// MultiHeadAttention (graph/ops/attention_ops.cc)
absl::Status RegisterReferenceAttentionKernels(KernelRegistry& registry);
// BlockChannels, UnblockChannels, BlockedConv (after the fused kernels)
absl::Status RegisterReferenceBlockedKernels(KernelRegistry& registry);

// kernels/cpu/ — optimized f32 kernels.
absl::Status RegisterCpuKernels(KernelRegistry& registry);
// AllReduce, AllGather, ReduceScatter on both devices: they call the communicators of
// KernelContext::collective_groups() (collective_kernels.cc).
absl::Status RegisterCollectiveKernels(KernelRegistry& registry);

}  // namespace tsr

#endif  // TESSERA_KERNELS_REGISTER_KERNELS_H_

// MultiHeadAttention's geometry (graph/ops/attention_geometry.h) read from a kernel's
// inputs and attributes, shared by the reference and CPU kernels so they read the same
// shapes and attributes.
#ifndef TESSERA_KERNELS_ATTENTION_KERNEL_GEOMETRY_H_
#define TESSERA_KERNELS_ATTENTION_KERNEL_GEOMETRY_H_

#include "absl/status/statusor.h"
#include "graph/ops/attention_geometry.h"
#include "kernels/kernel.h"

namespace tsr {

// From Q, K, V and the mask (inputs 0-3; absent ones as absent) and the num_heads and
// scale attributes. Errors are ComputeAttentionGeometry's, without the node's name.
absl::StatusOr<AttentionGeometry> AttentionGeometryOf(const KernelContext& ctx);

}  // namespace tsr

#endif  // TESSERA_KERNELS_ATTENTION_KERNEL_GEOMETRY_H_

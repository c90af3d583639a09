// tsr-fuse-inverted-residuals: MobileNetV2's expand / depthwise / project chains of
// BlockedConv become one BlockedInvertedResidual where the fused kernel pays.
// MLIR-level header (see inverted_residual_fusion.cc).
#ifndef TESSERA_COMPILER_TRANSFORMS_INVERTED_RESIDUAL_FUSION_H_
#define TESSERA_COMPILER_TRANSFORMS_INVERTED_RESIDUAL_FUSION_H_

#include <cstdint>
#include <memory>

#include "mlir/Pass/Pass.h"

namespace tsr {

// The metadata of the FusedLoc that lists the graph ops a BlockedInvertedResidual stands
// for (the stages' own parts: a stage that fused an epilogue counts its ops).
inline constexpr char kInvertedResidualLocMetadata[] = "inverted_residual";

// The least bytes of the depthwise convolution's input per image (the expanded
// activations) for which the pass fuses: measured with the caches evicted as a model's
// weight stream evicts them, MobileNetV2's blocks at 112 x 112 and 56 x 56 (1.2-4.8 MB)
// ran in 0.72-0.79 of the unfused time; at 28 x 28 (0.6 MB), where the expanded
// activations stay in L2 anyway, 0.98-1.04, and smaller ones lost. In the whole model the
// latency gain did not show above this VM's noise (A/B of MobileNetV2, 5 alternations:
// 7.55 -> 7.65 ms at one thread, 4.16 -> 4.46 at two, runs spreading 7.0-9.0 and 3.8-5.9);
// the buffer plan's arena shrinks from 5.74 to 2.30 MiB.
inline constexpr int64_t kMinInvertedResidualBytes = int64_t{1} << 20;

// Runs on func.func, after tsr-activation-layout. A BlockedConv pointwise projection
// (1x1, stride 1, unpadded, group 1) whose X is a depthwise BlockedConv (group ==
// channels, 2-D, no residual) used by it alone -- itself reading either a pointwise
// BlockedConv expansion used by it alone (blocked input, no residual), or any blocked
// value -- with constant weights, whose geometries the fused kernel takes
// (kernels/cpu/conv_blocked_inverted_residual.h) and whose depthwise input holds at least
// kMinInvertedResidualBytes per image, becomes one BlockedInvertedResidual
// (graph/ops/blocked_ops.cc) with the stages' weights, biases and activations and the
// projection's residual. Same floats: the kernel computes every element as the three
// BlockedConvs do.
std::unique_ptr<mlir::Pass> CreateInvertedResidualFusionPass();

// Registers `tsr-fuse-inverted-residuals` for tessera-opt.
void RegisterInvertedResidualFusionPass();

}  // namespace tsr

#endif  // TESSERA_COMPILER_TRANSFORMS_INVERTED_RESIDUAL_FUSION_H_

// MobileNetV2's inverted-residual block in the channel-blocked layout (conv_blocked.h),
// fused: a pointwise expansion (optional), a depthwise convolution and a pointwise
// projection with the residual,
//   E = act_e(expand(X) + b_e)        [N, E/16, H, W, 16]   (E = X when there is no expansion)
//   D = act_d(depthwise(E) + b_d)     [N, E/16, Ho, Wo, 16]
//   Y = act_p(project(D) + b_p + Z)   [N, M/16, Ho, Wo, 16]
// computed band by band of output rows: each band expands the input rows its depthwise
// window needs into a per-thread scratch buffer, runs the depthwise convolution on them
// into a second one and projects that into Y, so that the expanded activations (six times
// the block's input; 4.8 MB at MobileNetV2's 112 x 112) never leave the core's cache. A
// thread that goes on with the next band of the same image keeps the expanded rows the
// two bands share; only a thread starting elsewhere expands them again.
//
// Every element gets the floats of the three BlockedConvForward calls it replaces (the
// kernels' sums are fixed by the geometry, not by the split), whatever the bands and the
// thread split.
//
// Where it pays, measured with the caches evicted between calls as a model's 13 MB weight
// stream evicts them (one thread): MobileNetV2's blocks at 112 x 112 and 56 x 56 run in
// 0.72-0.79 of the three calls' time; from 28 x 28 down, where the expanded activations
// fit in L2 anyway, 0.98-1.10. With warm caches the two are even. The compiler makes
// BlockedInvertedResidual nodes for it (compiler/transforms/inverted_residual_fusion.h).
#ifndef TESSERA_KERNELS_CPU_CONV_BLOCKED_INVERTED_RESIDUAL_H_
#define TESSERA_KERNELS_CPU_CONV_BLOCKED_INVERTED_RESIDUAL_H_

#include <cstdint>
#include <optional>

#include "kernels/cpu/conv_blocked.h"
#include "kernels/cpu/fused_activation.h"
#include "kernels/kernel.h"

namespace tsr {

// One convolution of the block: its prepared weights (null: the block has no such
// stage -- only the expansion may be missing), bias [out_channels] or null, activation.
struct BlockedConvStage {
  const PreparedBlockedConv* conv = nullptr;
  const float* bias = nullptr;
  FusedActivation activation;
};

// Whether the three geometries chain as an inverted-residual block the fused kernel
// takes: expand (may be null) pointwise C -> E, depthwise over E channels (2-D), project
// pointwise E -> M on the depthwise output's pixels.
bool BlockedInvertedResidualApplies(const ConvGeometry* expand, const ConvGeometry& depthwise,
                                    const ConvGeometry& project);

// Y = the block above on X [batch, C/16, H, W, 16] with Z (null, or Y's shape; not Y
// itself, nor X's memory when X is read: rows of X are read after rows of Y are written).
// The stages' geometries must satisfy BlockedInvertedResidualApplies. parallel_for (null:
// inline) splits the bands.
void BlockedInvertedResidualForward(const BlockedConvStage& expand, const BlockedConvStage& depthwise,
                                    const BlockedConvStage& project, int64_t batch, const float* x,
                                    const float* residual, float* y, const ParallelForFn& parallel_for = nullptr);

// A BlockedInvertedResidual node's convolutions (graph/ops/blocked_ops.cc) prepared for the
// kernel -- stages[0] absent without an expansion -- and the stages' activations. The
// compiled runtime prepares one at load; the interpreter's kernel one per call.
struct PreparedInvertedResidual {
  std::optional<PreparedBlockedConv> stages[3];  // expand, depthwise, project
  FusedActivation activations[3];
};

// The node's block prepared, or nullopt where the fused kernel does not take it (callers
// run the reference kernel); an error naming the node when its operands or output do not
// fit together.
absl::StatusOr<std::optional<PreparedInvertedResidual>> PrepareNodeInvertedResidual(KernelContext& ctx);

// Runs `prepared` on the node's operands (X, the biases, Z) into its output.
void RunNodeInvertedResidual(const PreparedInvertedResidual& prepared, KernelContext& ctx);

}  // namespace tsr

#endif  // TESSERA_KERNELS_CPU_CONV_BLOCKED_INVERTED_RESIDUAL_H_

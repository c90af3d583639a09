// tsr-fuse-regions: greedy producer-consumer fusion of elementwise ops and reductions into
// tsr.Fusion ops, each of which the outliner compiles into one kernel. MLIR-level header.
//
// What it fuses (the ops of fusible_ops.h, f32 with static shapes), in one pass over each
// block of a function, consumers joining their producers' groups:
// - elementwise chains into a "loop" fusion;
// - elementwise producers into a reduction or normalization (input fusion: Softmax(x * s + m))
//   and elementwise consumers of its result that keep the result's shape (LayerNorm, then
//   Mul/Add): a "reduction" fusion, with at most one reduction;
// - values used outside a group become results of its fusion (multi-output fusion);
// - a cheap producer (Relu(x), x * scale; see IsCheapToRecompute) whose value is otherwise only
//   read by other fusions is recomputed inside each of them instead of being written out;
// - tsr.Constant operands that are splats or have <= 64 elements are cloned into the fusion;
//   larger ones are its inputs.
// What it leaves alone: every other op (library kernels), groups that would create a cycle
// (an op outside the group that reads a group value and feeds the group), ops on different
// tsr.device, and groups that only move data (a lone Reshape, Identity or Expand).
#ifndef TESSERA_COMPILER_TRANSFORMS_REGION_FUSION_H_
#define TESSERA_COMPILER_TRANSFORMS_REGION_FUSION_H_

#include <memory>

#include "mlir/Pass/Pass.h"

namespace tsr {

// Runs on func.func.
std::unique_ptr<mlir::Pass> CreateRegionFusionPass();

// Registers `tsr-fuse-regions` for tessera-opt.
void RegisterRegionFusionPass();

}  // namespace tsr

#endif  // TESSERA_COMPILER_TRANSFORMS_REGION_FUSION_H_

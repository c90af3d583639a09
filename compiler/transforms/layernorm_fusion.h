// tsr-fuse-layernorm: layer normalization written out as reductions and arithmetic (as
// exporters before ONNX opset 17 write torch.nn.LayerNorm) becomes one LayerNormalization,
// which region fusion then turns into one kernel instead of three. MLIR-level header (see
// layernorm_fusion.cc).
#ifndef TESSERA_COMPILER_TRANSFORMS_LAYERNORM_FUSION_H_
#define TESSERA_COMPILER_TRANSFORMS_LAYERNORM_FUSION_H_

#include <memory>

#include "mlir/Pass/Pass.h"

namespace tsr {

// The metadata of the FusedLoc that lists the graph ops a LayerNormalization stands for.
inline constexpr char kLayerNormLocMetadata[] = "layernorm";

// Runs on func.func, before tsr-fuse-epilogues. Matches, over the last axis of a static f32
// x, every intermediate used only inside the chain:
//   d = Sub(x, ReduceMean(x, last axis))
//   y = Div(d, Sqrt(Add(ReduceMean(Pow(d, 2) or Mul(d, d), last axis), eps)))
//   then optionally Mul(y, gamma) and Add(y, beta), gamma and beta constants of the last
//   dim's size (either operand order)
// and replaces the last op by LayerNormalization(x, gamma or ones, beta) {axis = -1,
// epsilon = eps}. The kernels compute the mean and variance as the chain does (mean of
// squared deviations), so results differ by rounding only.
std::unique_ptr<mlir::Pass> CreateLayerNormFusionPass();

// Registers `tsr-fuse-layernorm` for tessera-opt.
void RegisterLayerNormFusionPass();

}  // namespace tsr

#endif  // TESSERA_COMPILER_TRANSFORMS_LAYERNORM_FUSION_H_

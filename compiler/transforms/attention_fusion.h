// tsr-fuse-attention: the scaled dot-product attention chain a model exports becomes one
// MultiHeadAttention (graph/ops/attention_ops.cc). MLIR-level header (see
// attention_fusion.cc).
#ifndef TESSERA_COMPILER_TRANSFORMS_ATTENTION_FUSION_H_
#define TESSERA_COMPILER_TRANSFORMS_ATTENTION_FUSION_H_

#include <memory>

#include "mlir/Pass/Pass.h"

namespace tsr {

// The metadata of the FusedLoc that lists the graph ops a MultiHeadAttention stands for.
inline constexpr char kAttentionLocMetadata[] = "attention";

// Runs on func.func, before tsr-fuse-regions. Matches, every intermediate used once:
//   qh = Transpose(Reshape(q [B,Sq,H*D] -> [B,Sq,H,D]), perm 0,2,1,3)
//   kt = Transpose(Reshape(k [B,Sk,H*D] -> [B,Sk,H,D]), perm 0,2,3,1)
//   vh = Transpose(Reshape(v [B,Sk,H*Dv] -> [B,Sk,H,Dv]), perm 0,2,1,3)
//   s  = MatMul(qh, kt), then optionally Mul by / Div by a scalar constant, then optionally
//        Where(mask, scalar constant, s) with a bool mask, or Where(keep, s, scalar
//        constant) (the mask the fused op gets is then keep's negation: a constant's
//        values negated, else a Not)
//   y  = Reshape(Transpose(MatMul(Softmax(s, last axis), vh), perm 0,2,1,3) -> [B,Sq,H*Dv])
// and replaces y by MultiHeadAttention(q, k, v, mask) -- or, when q, k and v are the three
// equal parts of one Split along the last axis, by MultiHeadAttention(packed) on the
// Split's input, the Split gone too. Static shapes, f32 or f64. The products run in the
// same order per element (one dot product per score, one per output), so the floats
// differ from the unfused chain only by the kernels' summation order.
std::unique_ptr<mlir::Pass> CreateAttentionFusionPass();

// Registers `tsr-fuse-attention` for tessera-opt.
void RegisterAttentionFusionPass();

}  // namespace tsr

#endif  // TESSERA_COMPILER_TRANSFORMS_ATTENTION_FUSION_H_

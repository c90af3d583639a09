// tsr-fuse-epilogues: Conv / MatMul / Gemm followed by a bias add, a residual add and an
// activation become one tsr.FusedConv / tsr.FusedMatMul (graph/ops/fused_ops.cc):
//   Y = activation(Conv(X, W, B) + Z),  Y = activation(A x op(B) + bias + Z).
// MLIR-level header.
//
// The rewrite grows a fused op one consumer at a time, each step valid alone, always into the
// position of the consumer (so every operand dominates it):
// - Add(y, c), c a constant broadcast per output channel ([M,1,1], [1,M,1,1], a scalar; [N] or
//   [1,N] for a matmul) -> added to the bias (summed with an existing constant bias); for a
//   matmul a non-constant bias of exactly [N] also becomes the bias when there is none;
// - Add(y, t) or Add(t, y), t of exactly y's type -> the residual Z;
// - Relu, LeakyRelu, Clip (constant bounds), Sigmoid, Tanh -> the activation.
// The producer may be Conv, MatMul with a 2-D right operand and a left operand of rank >= 2,
// Gemm with alpha = 1, transA = 0 and a C that is a bias or a residual (beta = 1), or an
// already fused op. Bias and residual adds fold only before the activation (activation
// "None"), a bias add only before the residual; only f32 / f64 ops fuse.
// Left alone: an intermediate value with more than one use (a backward pass or another
// consumer needs it), non-constant or wrongly shaped biases, ops on different tsr.device, a
// Conv / MatMul with nothing to absorb (it stays as it is), and Gelu: the fused kernels apply
// it with the vectorized erf of kernels/cpu/vector_math.h, accuracy-first (3.8 ulp) at ~2 ns
// per element, while tsr-fuse-regions generates it at ~0.6 (a 128 x 3072 FusedMatMul + bias:
// Gelu adds 0.8 ms to its 5.7; the GPT-2 block's written-out GELU region takes 0.22 ms). The
// FusedConv / FusedMatMul ops still take activation "Gelu" for graphs that carry it.
//
// The fused op's location is NameLoc("conv1+add+relu", FusedLoc<"epilogue">[the parts]) so that
// ExportGraph names the node after its parts and the fusion report can count them.
#ifndef TESSERA_COMPILER_TRANSFORMS_EPILOGUE_FUSION_H_
#define TESSERA_COMPILER_TRANSFORMS_EPILOGUE_FUSION_H_

#include <memory>

#include "mlir/Pass/Pass.h"

namespace tsr {

// The metadata of the FusedLoc that lists the graph ops a fused op stands for.
inline constexpr char kEpilogueLocMetadata[] = "epilogue";

// Runs on func.func.
std::unique_ptr<mlir::Pass> CreateEpilogueFusionPass();

// Registers `tsr-fuse-epilogues` for tessera-opt.
void RegisterEpilogueFusionPass();

}  // namespace tsr

#endif  // TESSERA_COMPILER_TRANSFORMS_EPILOGUE_FUSION_H_

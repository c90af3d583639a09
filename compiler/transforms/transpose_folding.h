// tsr-fold-transposes: matrix transposes absorbed into the Gemm that reads them, as XLA's
// TransposeFolding does for its dots. MLIR-level header (see transpose_folding.cc).
#ifndef TESSERA_COMPILER_TRANSFORMS_TRANSPOSE_FOLDING_H_
#define TESSERA_COMPILER_TRANSFORMS_TRANSPOSE_FOLDING_H_

#include <memory>

#include "mlir/Pass/Pass.h"

namespace tsr {

// Runs on func.func. An f32 MatMul or Gemm of matrices (rank 2) whose A or B is a Transpose
// swapping a matrix's two dims reads the Transpose's input instead, with Gemm's transA /
// transB flipped:
//   MatMul(Transpose(x), y) -> Gemm(x, y; transA = 1)     (autodiff's dW = X^T dY)
//   MatMul(x, Transpose(w)) -> Gemm(x, w; transB = 1)     (autodiff's dX = dY W^T)
//   Gemm(Transpose(x), y, C; transA = t, ...) -> Gemm(x, y, C; transA = 1 - t, ...)
// The GEMM reads an operand transposed while it packs it, so the transposed copy is never
// written; a Transpose with no other reader is then dead. The product is the same sum of
// the same terms; the kernels may add them in another order (a Gemm with transB and few rows
// runs as dot products), so results can differ in the last bits. Left alone: batched
// MatMuls (rank > 2; the attention fusion matches those), other element types, and
// transposes of constants (tsr-constant-fold evaluates those first).
std::unique_ptr<mlir::Pass> CreateTransposeFoldingPass();

// Registers `tsr-fold-transposes` for tessera-opt.
void RegisterTransposeFoldingPass();

}  // namespace tsr

#endif  // TESSERA_COMPILER_TRANSFORMS_TRANSPOSE_FOLDING_H_

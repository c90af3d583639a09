// tsr-algebraic-simplify: rewrites of tsr ops that are exact for every input (IEEE floats
// included), beyond the ops' own folders. MLIR-level header (see algebraic_simplify.cc).
#ifndef TESSERA_COMPILER_TRANSFORMS_ALGEBRAIC_SIMPLIFY_H_
#define TESSERA_COMPILER_TRANSFORMS_ALGEBRAIC_SIMPLIFY_H_

#include <memory>

#include "mlir/Pass/Pass.h"

namespace tsr {

// Runs on func.func with the greedy pattern driver (which also applies the ops' folders):
//   x * 1, 1 * x, x + (-0.0), x - (+0.0), x / 1 (integers: x + 0, x - 0) -> x, or
//     Expand(x, shape of the constant) when the constant broadcasts x to a larger shape;
//   Neg(Neg(x)) -> x;
//   Reshape / Squeeze / Unsqueeze / Flatten / Expand / Tile / Cast to x's own type -> x;
//   chains of Reshape / Squeeze / Unsqueeze / Flatten -> one Reshape, and a lone Squeeze /
//     Unsqueeze / Flatten -> Reshape, when the result has at most one batch dim;
//   Transpose chains compose (the op's canonicalization); a Transpose that only moves size-1
//     dims is a Reshape;
//   Cast(Cast(x, wider), x's type) -> x for widenings that are exact (f32 -> f64, ...);
//   Dropout without training (no training_mode, or a constant false; or a constant ratio 0)
//     -> its input, the mask (when used) a constant all-true tensor.
// Left alone on purpose: x * 0 (NaN * 0 and Inf * 0 are NaN), x + (+0.0) and x - (-0.0)
// (-0.0 + 0.0 is +0.0), Transposes of constants (tsr-constant-fold evaluates those).
std::unique_ptr<mlir::Pass> CreateAlgebraicSimplifyPass();

// Registers `tsr-algebraic-simplify` for tessera-opt.
void RegisterAlgebraicSimplifyPass();

}  // namespace tsr

#endif  // TESSERA_COMPILER_TRANSFORMS_ALGEBRAIC_SIMPLIFY_H_

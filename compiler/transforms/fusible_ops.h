// Which tsr ops the region fusion (region_fusion.h) may put inside a tsr.Fusion, and how it
// treats them: the classification the outliner (compiler/lowering/) relies on, kept in one
// place so that both agree. MLIR-level header.
//
// Only f32 ops with static shapes are fusible (the outliner lowers static f32 tensors). An op
// outside the lists of the compiled-path contract (MatMul, Conv, Gather, Transpose, pooling, ...)
// is never fusible and stays a library-kernel step.
#ifndef TESSERA_COMPILER_TRANSFORMS_FUSIBLE_OPS_H_
#define TESSERA_COMPILER_TRANSFORMS_FUSIBLE_OPS_H_

#include "mlir/IR/Operation.h"

namespace tsr {

enum class FusibleClass {
  kNotFusible,
  // Computes a new value per element (Add, Exp, Relu, Where, ...).
  kElementwise,
  // Only moves or broadcasts elements (Reshape, Identity, Expand, Cast f32 -> f32): fusible, but
  // a group made of nothing else computes nothing and is not worth a kernel.
  kDataMovement,
  // Reductions and normalizations: ReduceSum/Mean/Max/Min/SumSquare, Softmax, LogSoftmax,
  // LayerNormalization (when only its output Y is used).
  kReduction,
};

FusibleClass ClassifyFusible(mlir::Operation* op);

// A tsr.Constant small enough to be cloned into every fusion that uses it (a splat, or at most
// 64 elements), so that codegen can inline it instead of loading it.
bool IsSmallConstant(mlir::Operation* op);

// Whether recomputing `op` in another fusion costs less than writing its value to memory and
// reading it back: a cheap elementwise op (no transcendental function) whose only non-constant
// operand is one tensor, e.g. Relu(x), Neg(x), x * scale. Such a producer with users in several
// fusions is duplicated into each of them instead of becoming a fusion result.
bool IsCheapToRecompute(mlir::Operation* op);

}  // namespace tsr

#endif  // TESSERA_COMPILER_TRANSFORMS_FUSIBLE_OPS_H_

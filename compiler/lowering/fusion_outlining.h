// tsr-outline-fusions: every tsr.Fusion in a module becomes a `func.func private
// @fusion_<k>` in linalg / arith / math / tensor on static tensors (the input and calling
// convention of compiler/codegen/codegen.h) and is replaced by a func.call of it.
// MLIR-level header (compiler/ only).
//
// Lowered ops (f32 only): Add Sub Mul Div Max Min Pow (numpy broadcasting), Neg Abs Exp Log
// Sqrt Rsqrt Reciprocal Tanh Sigmoid Relu LeakyRelu Clip Erf Gelu Silu Softplus HardSigmoid
// HardSwish Elu Selu Celu Floor Ceil Sign Identity, Where (i1 condition), Cast (f32 -> f32),
// Expand, Reshape, ReduceSum ReduceMean ReduceMax ReduceMin ReduceSumSquare (constant axes),
// Softmax LogSoftmax, LayerNormalization (output Y only), and tsr.Constant with a dense
// value. Any other op, or an unsupported attribute value or dtype, fails the pass with an
// error on that op saying why.
#ifndef TESSERA_COMPILER_LOWERING_FUSION_OUTLINING_H_
#define TESSERA_COMPILER_LOWERING_FUSION_OUTLINING_H_

#include <memory>
#include <vector>

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Support/LogicalResult.h"

namespace tsr {

// A fusion marked by tsr-tile-fusions (fusion_tiling.h) also gets the function of one of its
// blocks, fusion_<k>_tile (operands cut into T blocks along the marked axis have the block's
// types, the others their own), and its call carries "tsr.tile_callee" (that function) and
// "tsr.tiles" (T): the executable runs the blocks, on several threads, instead of the call.

// Bool (i1) tensors cross the function boundary as i8 tensors, one byte per element as bool
// data is stored: the call site reinterprets them with builtin.unrealized_conversion_cast.
//
// Outlines every tsr.Fusion of `module` (in walk order) and returns the functions created,
// named fusion_0, fusion_1, ... (skipping names the module already uses). On failure an error
// was emitted on the op that could not be lowered, and the module may be partly rewritten.
mlir::FailureOr<std::vector<mlir::func::FuncOp>> OutlineFusions(mlir::ModuleOp module);

// The pass (command-line name tsr-outline-fusions), on a module.
std::unique_ptr<mlir::Pass> CreateOutlineFusionsPass();

// Registers the pass with MLIR's pass registry (for tessera-opt).
void RegisterOutlineFusionsPass();

// The dialects the outlined functions use (arith, func, linalg, math, tensor).
void RegisterOutlinedDialects(mlir::DialectRegistry& registry);

}  // namespace tsr

#endif  // TESSERA_COMPILER_LOWERING_FUSION_OUTLINING_H_

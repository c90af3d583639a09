// Lowering of the reductions and normalizations a tsr.Fusion may hold (ReduceSum,
// ReduceMean, ReduceMax, ReduceMin, ReduceSumSquare with axes/keepdims; Softmax and
// LogSoftmax along one axis; LayerNormalization's output Y) to linalg.generic reductions
// and elementwise ops on static f32 tensors. MLIR-level header.
#ifndef TESSERA_COMPILER_LOWERING_REDUCTION_LOWERING_H_
#define TESSERA_COMPILER_LOWERING_REDUCTION_LOWERING_H_

#include "llvm/ADT/StringRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Operation.h"
#include "mlir/Support/LogicalResult.h"

namespace tsr::lowering {

// Whether LowerReductionOp handles ops named `name` (no dialect prefix).
bool IsLoweredReductionOp(llvm::StringRef name);

// As LowerElementwiseOp (elementwise_lowering.h), for the ops IsLoweredReductionOp accepts.
mlir::LogicalResult LowerReductionOp(mlir::OpBuilder& builder, mlir::Operation* op, mlir::IRMapping& mapping);

}  // namespace tsr::lowering

#endif  // TESSERA_COMPILER_LOWERING_REDUCTION_LOWERING_H_

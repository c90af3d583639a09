// Lowering of the elementwise tsr ops a tsr.Fusion may hold (binary with numpy
// broadcasting, unary math and activations, Where, identity Cast, Expand, Reshape,
// Identity) to linalg.generic / tensor ops on static f32 tensors. MLIR-level header.
#ifndef TESSERA_COMPILER_LOWERING_ELEMENTWISE_LOWERING_H_
#define TESSERA_COMPILER_LOWERING_ELEMENTWISE_LOWERING_H_

#include "llvm/ADT/StringRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Operation.h"
#include "mlir/Support/LogicalResult.h"

namespace tsr::lowering {

// Whether LowerElementwiseOp handles ops named `name` ("Add", "Gelu", ...; no dialect prefix).
bool IsLoweredElementwiseOp(llvm::StringRef name);

// Emits the lowering of `op` at `builder`'s insertion point, reading its operands through
// `mapping` (tsr value -> lowered value) and mapping its result. On failure emits an error
// on `op` saying why (unsupported attribute value, dtype, shape...).
mlir::LogicalResult LowerElementwiseOp(mlir::OpBuilder& builder, mlir::Operation* op, mlir::IRMapping& mapping);

}  // namespace tsr::lowering

#endif  // TESSERA_COMPILER_LOWERING_ELEMENTWISE_LOWERING_H_

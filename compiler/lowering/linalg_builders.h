// Small builders shared by the lowerings of tsr ops to linalg on static tensors: numpy
// broadcasting as indexing maps, elementwise linalg.generic ops, reshapes that keep the
// row-major element order, and f32 scalar constants. MLIR-level header (compiler/ only).
#ifndef TESSERA_COMPILER_LOWERING_LINALG_BUILDERS_H_
#define TESSERA_COMPILER_LOWERING_LINALG_BUILDERS_H_

#include <cstdint>
#include <optional>

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Value.h"
#include "mlir/Support/LogicalResult.h"

namespace tsr::lowering {

// Computes one element of an elementwise op from one scalar per input (in input order).
using ScalarBody = llvm::function_ref<mlir::Value(mlir::OpBuilder&, mlir::Location, mlir::ValueRange)>;

// The indexing map of the loops over `shape` that reads a tensor of `operand_shape`
// broadcast onto `shape` as numpy does: dims aligned from the right, missing leading dims
// dropped, size-1 dims read at index 0. Failure when the shapes do not broadcast.
mlir::FailureOr<mlir::AffineMap> BroadcastMap(llvm::ArrayRef<int64_t> operand_shape, llvm::ArrayRef<int64_t> shape,
                                              mlir::MLIRContext* context);

// A linalg.generic computing `result_type` elementwise from `inputs`, each broadcast onto
// the result's shape. Splat constants among the inputs become scalars in the body (codegen
// then needs no buffer for them). Failure when an input does not broadcast.
mlir::FailureOr<mlir::Value> BuildElementwise(mlir::OpBuilder& builder, mlir::Location loc,
                                              mlir::RankedTensorType result_type, mlir::ValueRange inputs,
                                              ScalarBody body);

// `value` with the static shape of `type` and the same elements in row-major order
// (tensor.collapse_shape / tensor.expand_shape).
mlir::Value ReshapeTo(mlir::OpBuilder& builder, mlir::Location loc, mlir::Value value, mlir::RankedTensorType type);

// A fresh copy of `value` (linalg.copy into a new tensor).
mlir::Value CopyTensor(mlir::OpBuilder& builder, mlir::Location loc, mlir::Value value);

// arith.constant of type f32.
mlir::Value F32(mlir::OpBuilder& builder, mlir::Location loc, double value);

// The value of every element when `value` is a splat float constant.
std::optional<double> SplatFloat(mlir::Value value);

// -rank <= axis < rank gives axis in [0, rank); nullopt when out of range.
std::optional<int64_t> NormalizeAxis(int64_t axis, int64_t rank);

}  // namespace tsr::lowering

#endif  // TESSERA_COMPILER_LOWERING_LINALG_BUILDERS_H_

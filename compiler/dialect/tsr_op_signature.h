// How a graph op's input and output slots (graph/op_def.h ArgDefs: single, optional, variadic)
// map onto the operands and results of its tsr op, shared by the verifier and the conversion
// so that both read an op the same way. MLIR-level header.
#ifndef TESSERA_COMPILER_DIALECT_TSR_OP_SIGNATURE_H_
#define TESSERA_COMPILER_DIALECT_TSR_OP_SIGNATURE_H_

#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/op_def.h"
#include "llvm/ADT/SmallVector.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"

namespace mlir::tsr {

// The op's operands as the graph node's input slots: one per single or optional input (empty
// when an optional input is absent), one per variadic element.
absl::StatusOr<std::vector<std::optional<Value>>> InputSlots(Operation* op, const ::tsr::OpDef& def);

struct OperandLayout {
  llvm::SmallVector<Value> operands;
  // One size per ArgDef: what the operandSegmentSizes attribute holds when the op needs it.
  llvm::SmallVector<int32_t> segment_sizes;
};
// The inverse of InputSlots. Slots past the end count as absent optional inputs.
absl::StatusOr<OperandLayout> OperandsFromSlots(const ::tsr::OpDef& def,
                                                const std::vector<std::optional<Value>>& slots);

// Sizes of the result groups (one per output ArgDef) for `num_results` results: optional
// outputs are present in order as long as results remain, a variadic output takes the rest.
absl::StatusOr<llvm::SmallVector<int32_t>> ResultSegmentSizes(const ::tsr::OpDef& def, int num_results);

// The graph attributes of `op` (the inherent attributes its OpDef declares; absent ones are
// left out so that the registry's defaults apply), as ExportGraph and the compile driver
// read them. Errors name the attribute.
absl::StatusOr<::tsr::AttrMap> NodeAttrs(Operation* op, const ::tsr::OpDef& def);

// Whether the op carries operandSegmentSizes / resultSegmentSizes (more than one optional or
// variadic group), as TsrGeneratedOps.td declares.
bool NeedsSegmentSizes(const std::vector<::tsr::ArgDef>& args);

}  // namespace mlir::tsr

#endif  // TESSERA_COMPILER_DIALECT_TSR_OP_SIGNATURE_H_

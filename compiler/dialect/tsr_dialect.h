// The tsr MLIR dialect: TsrDialect and its ops (ODS: TsrOps.td, TsrGeneratedOps.td). MLIR-level
// header, for passes and the Graph<->tsr conversion; code outside compiler/ uses
// compiler/conversion/graph_tsr_text.h instead.
#ifndef TESSERA_COMPILER_DIALECT_TSR_DIALECT_H_
#define TESSERA_COMPILER_DIALECT_TSR_DIALECT_H_

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::tsr {

// Verifies a registry-generated op against its graph OpDef: converts its operand types and
// attributes to Tessera's, runs the registry's InferOutputTypes (shape function, attribute and
// type-constraint checks) and compares the inferred result types with the op's.
LogicalResult VerifyWithRegistry(Operation* op);

// The ODS trait Tsr_RegistryVerified.
template <typename ConcreteType>
class RegistryVerified : public OpTrait::TraitBase<ConcreteType, RegistryVerified> {
 public:
  static LogicalResult verifyTrait(Operation* op) { return VerifyWithRegistry(op); }
};

// Reserved discardable attributes (documented in TsrBase.td).
inline constexpr char kDeviceAttrName[] = "tsr.device";
inline constexpr char kShardingAttrName[] = "tsr.sharding";
// Fusion tiling (compiler/lowering/fusion_tiling.h, fusion_outlining.h): on a tsr.Fusion, the
// number of blocks (an integer >= 2) and the axis of its results they cut (>= 0); on the
// func.call of an outlined fusion, the blocks and the function of one block (a symbol).
inline constexpr char kTilesAttrName[] = "tsr.tiles";
inline constexpr char kTileAxisAttrName[] = "tsr.tile_axis";
inline constexpr char kTileCalleeAttrName[] = "tsr.tile_callee";
// On function arguments and results: the graph signature name.
inline constexpr char kNameAttrName[] = "tsr.name";

}  // namespace mlir::tsr

#include "compiler/dialect/TsrDialect.h.inc"

#define GET_OP_CLASSES
#include "compiler/dialect/TsrOps.h.inc"

namespace mlir::tsr {
// Defined by the op-definition shards (mlir-tblgen -op-shard-count).
void registerTsrDialectOperations(TsrDialect* dialect);
void registerTsrDialectOperations0(TsrDialect* dialect);
void registerTsrDialectOperations1(TsrDialect* dialect);
void registerTsrDialectOperations2(TsrDialect* dialect);
void registerTsrDialectOperations3(TsrDialect* dialect);
}  // namespace mlir::tsr

#endif  // TESSERA_COMPILER_DIALECT_TSR_DIALECT_H_

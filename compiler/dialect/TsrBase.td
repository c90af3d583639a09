// The tsr dialect: its declaration, the base class of its ops, and the RegistryVerified trait
// through which every registry-generated op is verified by the graph op registry.
#ifndef TSR_BASE
#define TSR_BASE

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Tsr_Dialect : Dialect {
  let name = "tsr";
  let cppNamespace = "::mlir::tsr";
  let summary = "Tessera's graph ops: tensor semantics, one op per registered graph op.";
  let description = [{
    Each op `tsr.<Op>` mirrors the graph op `<Op>` of Tessera's OpRegistry (graph/ops/):
    the same operands (absent optional inputs are absent operands), attributes (same names)
    and results. Tensors are ranked; a dynamic dimension stands for Tessera's symbolic batch
    dimension N, every other dimension is static. Element types: f32 f64 f16 bf16, i8 (signed),
    ui8, i32, i64 and i1 (bool).

    Reserved discardable attributes, for the partitioner and device placement; the dialect
    verifies them wherever they appear on a tsr op:
    - `tsr.device = "cpu:0"`: the device an op runs on, `<kind>:<index>` with kind one of
      cpu, gpu.
    - `tsr.sharding = [array<i64: ...>, ...]`: one dense i64 array per result, with one entry
      per dimension of that result: -1 keeps the dimension whole (replicated), k >= 0 splits
      it along axis k of the device mesh; a mesh axis splits at most one dimension.
    And for fusion tiling (compiler/lowering/fusion_tiling.h): `tsr.tiles` (an integer >= 2,
    the blocks) and `tsr.tile_axis` (>= 0, the axis they cut) on a tsr.Fusion, and
    `tsr.tiles` with `tsr.tile_callee` (the function of one block) on its outlined call.
    Function arguments and results carry `tsr.name` (a string): the graph's signature name.
  }];
  let hasConstantMaterializer = 1;
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
}

// Verifies the op against its OpDef: attributes, type constraints (type variables bind one
// dtype), and result types equal to what the registry's shape function infers.
def Tsr_RegistryVerified : NativeOpTrait<"RegistryVerified"> {
  let cppNamespace = "::mlir::tsr";
}

class Tsr_Op<string mnemonic, list<Trait> traits = []> : Op<Tsr_Dialect, mnemonic, traits>;

// A tensor shape attribute: static dims, -1 for the batch dim N.
def Tsr_ShapeAttr : DenseArrayAttrBase<"DenseI64ArrayAttr", "int64_t", "i64"> {
  let summary = "tensor shape (i64 dims, -1 = batch dim N)";
}

def Tsr_Tensor : RankedTensorOf<[F32, F64, F16, BF16, I8, UI8, I32, I64, I1]>;

#endif  // TSR_BASE

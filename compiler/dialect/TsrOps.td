// The tsr ops: the hand-written ones here, then every other registered graph op from
// TsrGeneratedOps.td (produced by tsr_ods_gen.cc from the op registry).
#ifndef TSR_OPS
#define TSR_OPS

include "compiler/dialect/TsrBase.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

def Tsr_ConstantOp : Tsr_Op<"Constant", [ConstantLike, Pure, InferTypeOpAdaptor]> {
  let summary = "A tensor given by the attribute 'value'.";
  let description = [{
    The graph op Constant. Its value is any ElementsAttr (dense, or a dense resource for
    large weights); the result type is the value's type.
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Tsr_Tensor:$output);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
}

include "compiler/dialect/TsrGeneratedOps.td"

#endif  // TSR_OPS

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

def Tsr_FusionOp : Tsr_Op<"Fusion", [IsolatedFromAbove, RecursiveMemoryEffects]> {
  let summary = "A fused region: ops that compile into one kernel.";
  let description = [{
    Made by the region fusion pass (compiler/transforms/region_fusion.h): the region's one
    block takes the fusion's inputs as arguments, computes with tsr ops and yields the
    fusion's results. `kind` is "loop" (elementwise ops only: one loop nest over the output)
    or "reduction" (elementwise ops around reductions or normalizations). The outliner
    (compiler/lowering/) turns each fusion into a function compiled to machine code.

    ```mlir
    %r = tsr.Fusion "loop" (%a, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> {
    ^bb0(%x: tensor<4x8xf32>, %y: tensor<8xf32>):
      %s = tsr.Add %x, %y : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
      %t = tsr.Relu %s : (tensor<4x8xf32>) -> tensor<4x8xf32>
      tsr.Yield %t : tensor<4x8xf32>
    }
    ```
  }];
  let arguments = (ins StrAttr:$kind, Variadic<Tsr_Tensor>:$inputs);
  let results = (outs Variadic<Tsr_Tensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$kind `(` $inputs `)` attr-dict `:` functional-type($inputs, $results) $body";
  let hasVerifier = 1;
  let skipDefaultBuilders = 1;
  let builders = [
    // An empty body block with one argument per input; the caller fills it and adds the Yield.
    OpBuilder<(ins "::llvm::StringRef":$kind, "::mlir::ValueRange":$inputs, "::mlir::TypeRange":$resultTypes)>
  ];
}

def Tsr_YieldOp : Tsr_Op<"Yield", [Pure, Terminator, HasParent<"FusionOp">]> {
  let summary = "The results of a tsr.Fusion region.";
  let arguments = (ins Variadic<Tsr_Tensor>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
}

include "compiler/dialect/TsrGeneratedOps.td"

#endif  // TSR_OPS

// A tsr.Fusion has no side effects of its own (RecursiveMemoryEffects): unused ones are dead.
// RUN: tessera-opt %s -canonicalize | FileCheck %s

// CHECK-LABEL: func.func @unused
// CHECK-NEXT: return
func.func @unused(%a: tensor<4xf32>) {
  %r = tsr.Fusion "loop" (%a) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    %e = tsr.Exp %x : (tensor<4xf32>) -> tensor<4xf32>
    tsr.Yield %e : tensor<4xf32>
  }
  return
}


// tsr.Fusion / tsr.Yield: the printed form round-trips, and the verifier ties the body to the
// inputs and results.
// RUN: tessera-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// CHECK-LABEL: func.func @loop
// CHECK: %[[R:.*]]:2 = tsr.Fusion "loop"(%arg0, %arg1) : (tensor<4x8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
// CHECK-NEXT: ^bb0(%[[X:.*]]: tensor<4x8xf32>, %[[Y:.*]]: tensor<8xf32>):
// CHECK-NEXT:   %[[S:.*]] = tsr.Add %[[X]], %[[Y]]
// CHECK-NEXT:   %[[T:.*]] = tsr.Relu %[[S]]
// CHECK-NEXT:   tsr.Yield %[[S]], %[[T]] : tensor<4x8xf32>, tensor<4x8xf32>
// CHECK: return %[[R]]#1
func.func @loop(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %r:2 = tsr.Fusion "loop" (%a, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  ^bb0(%x: tensor<4x8xf32>, %y: tensor<8xf32>):
    %s = tsr.Add %x, %y : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    %t = tsr.Relu %s : (tensor<4x8xf32>) -> tensor<4x8xf32>
    tsr.Yield %s, %t : tensor<4x8xf32>, tensor<4x8xf32>
  }
  return %r#1 : tensor<4x8xf32>
}

// -----

func.func @bad_kind(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'tsr.Fusion' op kind must be "loop" or "reduction", got "tile"}}
  %r = tsr.Fusion "tile" (%a) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    tsr.Yield %x : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

func.func @argument_type(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'tsr.Fusion' op body argument #0 has type 'tensor<5xf32>' but input #0 is 'tensor<4xf32>'}}
  %r = tsr.Fusion "loop" (%a) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<5xf32>):
    %e = tsr.Exp %x : (tensor<5xf32>) -> tensor<5xf32>
    tsr.Yield %e : tensor<5xf32>
  }
  return %r : tensor<4xf32>
}

// -----

func.func @yield_types(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'tsr.Fusion' op yields 2 values of types}}
  %r = tsr.Fusion "loop" (%a) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    tsr.Yield %x, %x : tensor<4xf32>, tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

func.func @isolated(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  // expected-note @+1 {{required by region isolation constraints}}
  %r = tsr.Fusion "loop" (%a) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    // expected-error @+1 {{using value defined outside the region}}
    %s = tsr.Add %x, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    tsr.Yield %s : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

func.func @foreign_op(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = tsr.Fusion "loop" (%a) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    // expected-error @+1 {{'func.call' op inside tsr.Fusion: only tsr ops may be fused}}
    %s = func.call @f(%x) : (tensor<4xf32>) -> tensor<4xf32>
    tsr.Yield %s : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
func.func private @f(tensor<4xf32>) -> tensor<4xf32>

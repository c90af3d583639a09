// CSE merges identical pure tsr ops; ops the registry marks stateful (here Variable) are
// never merged: without Pure they have unknown side effects.
// RUN: tessera-opt %s --cse | FileCheck %s

// CHECK-LABEL: func.func @pure_and_stateful
// CHECK-COUNT-1: tsr.Relu
// CHECK-COUNT-2: tsr.Variable
func.func @pure_and_stateful(%a: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %r1 = tsr.Relu %a : (tensor<4xf32>) -> tensor<4xf32>
  %r2 = tsr.Relu %a : (tensor<4xf32>) -> tensor<4xf32>
  %v1 = tsr.Variable {dtype = f32, shape = array<i64: 4>} : () -> tensor<4xf32>
  %v2 = tsr.Variable {dtype = f32, shape = array<i64: 4>} : () -> tensor<4xf32>
  return %r1, %r2, %v1, %v2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

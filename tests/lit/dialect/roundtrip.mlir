// Parse, verify and print tsr ops; the printed form parses again to the same module.
// RUN: tessera-opt %s | FileCheck %s
// RUN: tessera-opt %s | tessera-opt | FileCheck %s
// RUN: tessera-opt %s --mlir-print-op-generic | tessera-opt | FileCheck %s

// CHECK-LABEL: func.func @mlp
// CHECK-SAME: (%{{.*}}: tensor<?x784xf32> {tsr.name = "x"}) -> (tensor<?x10xf32> {tsr.name = "probs"})
func.func @mlp(%x: tensor<?x784xf32> {tsr.name = "x"}) -> (tensor<?x10xf32> {tsr.name = "probs"}) {
  // Attributes equal to their registry default (trainable = true) are elided.
  // CHECK: %[[W:.*]] = tsr.Variable {dtype = f32, initializer = "glorot_uniform", shape = array<i64: 784, 10>} : () -> tensor<784x10xf32>
  %w = tsr.Variable {dtype = f32, shape = array<i64: 784, 10>, initializer = "glorot_uniform", trainable = true} : () -> tensor<784x10xf32>
  // CHECK: %[[B:.*]] = tsr.Constant dense<1.000000e-01> : tensor<10xf32>
  %b = tsr.Constant dense<0.1> : tensor<10xf32>
  // CHECK: %[[Y:.*]] = tsr.MatMul %{{.*}}, %[[W]] : (tensor<?x784xf32>, tensor<784x10xf32>) -> tensor<?x10xf32>
  %y = tsr.MatMul %x, %w : (tensor<?x784xf32>, tensor<784x10xf32>) -> tensor<?x10xf32>
  // CHECK: tsr.Add %[[Y]], %[[B]] : (tensor<?x10xf32>, tensor<10xf32>) -> tensor<?x10xf32>
  %z = tsr.Add %y, %b : (tensor<?x10xf32>, tensor<10xf32>) -> tensor<?x10xf32>
  // CHECK: tsr.Softmax %{{.*}} {axis = 1 : i64}
  %p = tsr.Softmax %z {axis = 1 : i64} : (tensor<?x10xf32>) -> tensor<?x10xf32>
  return %p : tensor<?x10xf32>
}

// Optional and variadic operands: Concat is variadic, Dropout has two optional inputs (generic
// form with operandSegmentSizes) and an optional second result.
// CHECK-LABEL: func.func @groups
func.func @groups(%a: tensor<2x3xf32>, %b: tensor<2x5xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xi1>) {
  // CHECK: tsr.Concat %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
  %c = tsr.Concat %a, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
  // CHECK: "tsr.Dropout"(%{{.*}}) <{element_offset = 0 : i64, operandSegmentSizes = array<i32: 1, 0, 0>}> : (tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xi1>)
  %d:2 = "tsr.Dropout"(%c) <{operandSegmentSizes = array<i32: 1, 0, 0>}> : (tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xi1>)
  return %c, %d#0, %d#1 : tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xi1>
}

// Reserved attributes for placement and sharding.
// CHECK-LABEL: func.func @placed
func.func @placed(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // CHECK: tsr.Relu %{{.*}} {tsr.device = "gpu:1", tsr.sharding = [array<i64: 0, -1>]}
  %r = tsr.Relu %a {tsr.device = "gpu:1", tsr.sharding = [array<i64: 0, -1>]} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// tsr-fold-transposes: matrix transposes read by a MatMul or Gemm become its transA / transB,
// and the cases that must stay.
// RUN: tessera-opt %s --tsr-fold-transposes --canonicalize --split-input-file | FileCheck %s

// Autodiff's weight gradient X^T dY and input gradient dY W^T: no transposed copy is left.
// CHECK-LABEL: func.func @matmul_grads
// CHECK-SAME: (%[[X:.*]]: tensor<?x6xf32>, %[[DY:.*]]: tensor<?x4xf32>, %[[W:.*]]: tensor<6x4xf32>)
// CHECK-NOT: tsr.Transpose
// CHECK-DAG: %[[DW:.*]] = tsr.Gemm %[[X]], %[[DY]] {transA = 1 : i64} : (tensor<?x6xf32>, tensor<?x4xf32>) -> tensor<6x4xf32>
// CHECK-DAG: %[[DX:.*]] = tsr.Gemm %[[DY]], %[[W]] {transB = 1 : i64} : (tensor<?x4xf32>, tensor<6x4xf32>) -> tensor<?x6xf32>
// CHECK-NOT: tsr.MatMul
// CHECK: return %[[DW]], %[[DX]]
func.func @matmul_grads(%x: tensor<?x6xf32>, %dy: tensor<?x4xf32>, %w: tensor<6x4xf32>) -> (tensor<6x4xf32>, tensor<?x6xf32>) {
  %xt = tsr.Transpose %x {perm = array<i64: 1, 0>} : (tensor<?x6xf32>) -> tensor<6x?xf32>
  %dw = tsr.MatMul %xt, %dy : (tensor<6x?xf32>, tensor<?x4xf32>) -> tensor<6x4xf32>
  %wt = tsr.Transpose %w : (tensor<6x4xf32>) -> tensor<4x6xf32>
  %dx = tsr.MatMul %dy, %wt : (tensor<?x4xf32>, tensor<4x6xf32>) -> tensor<?x6xf32>
  return %dw, %dx : tensor<6x4xf32>, tensor<?x6xf32>
}

// -----

// Both operands at once; a Gemm's flags flip (transA 1 -> 0) and its C, alpha and beta stay.
// A Transpose with another reader stays for that reader.
// CHECK-LABEL: func.func @both_and_gemm
// CHECK-SAME: (%[[A:.*]]: tensor<3x5xf32>, %[[B:.*]]: tensor<2x3xf32>, %[[C:.*]]: tensor<2xf32>)
// CHECK: %[[T:.*]] = tsr.Transpose %[[A]]
// CHECK: %[[P:.*]] = tsr.Gemm %[[A]], %[[B]] {transA = 1 : i64, transB = 1 : i64} : (tensor<3x5xf32>, tensor<2x3xf32>) -> tensor<5x2xf32>
// CHECK: %[[G:.*]] = tsr.Gemm %[[A]], %[[B]], %[[C]] {alpha = 5.000000e-01 : f64, beta = 2.000000e+00 : f64, transA = 1 : i64, transB = 1 : i64}
// CHECK: return %[[P]], %[[G]], %[[T]]
func.func @both_and_gemm(%a: tensor<3x5xf32>, %b: tensor<2x3xf32>, %c: tensor<2xf32>) -> (tensor<5x2xf32>, tensor<5x2xf32>, tensor<5x3xf32>) {
  %at = tsr.Transpose %a {perm = array<i64: 1, 0>} : (tensor<3x5xf32>) -> tensor<5x3xf32>
  %bt = tsr.Transpose %b {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %p = tsr.MatMul %at, %bt : (tensor<5x3xf32>, tensor<3x2xf32>) -> tensor<5x2xf32>
  %g = tsr.Gemm %at, %b, %c {alpha = 0.5 : f64, beta = 2.0 : f64, transB = 1 : i64} : (tensor<5x3xf32>, tensor<2x3xf32>, tensor<2xf32>) -> tensor<5x2xf32>
  return %p, %g, %at : tensor<5x2xf32>, tensor<5x2xf32>, tensor<5x3xf32>
}

// -----

// Kept: batched MatMuls (the attention fusion matches them), other element types, and a
// plain product.
// CHECK-LABEL: func.func @kept
// CHECK: tsr.Transpose {{.*}}perm = array<i64: 0, 2, 1>
// CHECK: tsr.MatMul
// CHECK: tsr.Transpose {{.*}}tensor<3x2xf64>
// CHECK: tsr.MatMul
// CHECK: tsr.MatMul
// CHECK-NOT: tsr.Gemm
func.func @kept(%q: tensor<2x4x3xf32>, %k: tensor<2x4x3xf32>, %x: tensor<3x3xf32>, %d: tensor<3x2xf64>, %e: tensor<3x3xf64>) -> (tensor<2x4x4xf32>, tensor<2x3xf64>, tensor<3x3xf32>) {
  %kt = tsr.Transpose %k {perm = array<i64: 0, 2, 1>} : (tensor<2x4x3xf32>) -> tensor<2x3x4xf32>
  %s = tsr.MatMul %q, %kt : (tensor<2x4x3xf32>, tensor<2x3x4xf32>) -> tensor<2x4x4xf32>
  %dt = tsr.Transpose %d {perm = array<i64: 1, 0>} : (tensor<3x2xf64>) -> tensor<2x3xf64>
  %de = tsr.MatMul %dt, %e : (tensor<2x3xf64>, tensor<3x3xf64>) -> tensor<2x3xf64>
  %plain = tsr.MatMul %x, %x : (tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x3xf32>
  return %s, %de, %plain : tensor<2x4x4xf32>, tensor<2x3xf64>, tensor<3x3xf32>
}

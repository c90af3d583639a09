// tsr-weight-layout: constant transposed GEMM weights become row-major constants.
// RUN: tessera-opt %s --tsr-weight-layout --split-input-file | FileCheck %s

// B [3, 2] with transpose_b = 1 becomes B^T [2, 3] with transpose_b = 0; the old constant
// has no other user and goes.
// CHECK-LABEL: func.func @fused_matmul
// CHECK: %[[W:.*]] = tsr.Constant dense<{{\[\[}}1.000000e+00, 3.000000e+00, 5.000000e+00], [2.000000e+00, 4.000000e+00, 6.000000e+00]]> : tensor<2x3xf32>
// CHECK-NOT: tensor<3x2xf32>
// CHECK: "tsr.FusedMatMul"(%{{.*}}, %[[W]]
// CHECK-SAME: transpose_b = 0
func.func @fused_matmul(%a: tensor<4x2xf32>) -> tensor<4x3xf32> {
  %w = tsr.Constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>
  %y = "tsr.FusedMatMul"(%a, %w) <{activation = "Relu", operandSegmentSizes = array<i32: 1, 1, 0, 0>, transpose_b = 1 : i64}> : (tensor<4x2xf32>, tensor<3x2xf32>) -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}

// -----

// A Gemm's transB; the old constant stays for its other user.
// CHECK-LABEL: func.func @gemm_shared
// CHECK-DAG: %[[OLD:.*]] = tsr.Constant dense<{{.*}}> : tensor<3x2xf32>
// CHECK-DAG: %[[NEW:.*]] = tsr.Constant dense<{{.*}}> : tensor<2x3xf32>
// CHECK: tsr.Gemm %{{.*}}, %[[NEW]] : (tensor<4x2xf32>, tensor<2x3xf32>)
// CHECK: tsr.Relu %[[OLD]]
func.func @gemm_shared(%a: tensor<4x2xf32>) -> (tensor<4x3xf32>, tensor<3x2xf32>) {
  %w = tsr.Constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>
  %y = tsr.Gemm %a, %w {transB = 1 : i64} : (tensor<4x2xf32>, tensor<3x2xf32>) -> tensor<4x3xf32>
  %r = tsr.Relu %w : (tensor<3x2xf32>) -> tensor<3x2xf32>
  return %y, %r : tensor<4x3xf32>, tensor<3x2xf32>
}

// -----

// Not a constant, or not transposed: left alone.
// CHECK-LABEL: func.func @left_alone
// CHECK: tsr.Gemm %{{.*}}, %{{.*}} {transB = 1 : i64}
// CHECK: tsr.Gemm %{{.*}}, %{{.*}} : (tensor<4x2xf32>, tensor<2x3xf32>)
func.func @left_alone(%a: tensor<4x2xf32>, %b: tensor<3x2xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>) {
  %y = tsr.Gemm %a, %b {transB = 1 : i64} : (tensor<4x2xf32>, tensor<3x2xf32>) -> tensor<4x3xf32>
  %w = tsr.Constant dense<1.0> : tensor<2x3xf32>
  %z = tsr.Gemm %a, %w : (tensor<4x2xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  return %y, %z : tensor<4x3xf32>, tensor<4x3xf32>
}

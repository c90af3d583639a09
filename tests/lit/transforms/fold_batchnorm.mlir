// tsr-fold-batchnorm: inference BatchNormalization folds into the constant weights of the Conv,
// Gemm or MatMul before it, else (standalone=true, the default) into Mul + Add.
// RUN: tessera-opt %s --tsr-fold-batchnorm --split-input-file | FileCheck %s
// RUN: tessera-opt %s --tsr-fold-batchnorm=standalone=false --split-input-file | FileCheck %s --check-prefix=KEEP

// a = scale / sqrt(var + eps) = [1, 1, 2]: W' = W * a per output channel,
// bias' = (bias - mean) * a + B = [0.5, 0.5, -1]. The batch dim stays.
// CHECK-LABEL: func.func @conv_bn
// CHECK-SAME: (%[[X:.*]]: tensor<?x2x4x4xf32>)
// CHECK-DAG: %[[W:.*]] = tsr.Constant dense<{{.*}}1.000000e+00{{.*}}2.000000e+00{{.*}}3.000000e+00{{.*}}4.000000e+00{{.*}}1.000000e+01{{.*}}1.200000e+01{{.*}}> : tensor<3x2x1x1xf32>
// CHECK-DAG: %[[B:.*]] = tsr.Constant dense<[5.000000e-01, 5.000000e-01, -1.000000e+00]> : tensor<3xf32>
// CHECK: %[[Y:.*]] = tsr.Conv %[[X]], %[[W]], %[[B]] : (tensor<?x2x4x4xf32>, tensor<3x2x1x1xf32>, tensor<3xf32>) -> tensor<?x3x4x4xf32>
// CHECK-NOT: tsr.BatchNormalization
// CHECK: return %[[Y]]
// KEEP-LABEL: func.func @conv_bn
// KEEP-NOT: tsr.BatchNormalization
func.func @conv_bn(%x: tensor<?x2x4x4xf32>) -> tensor<?x3x4x4xf32> {
  %w = tsr.Constant dense<[[[[1.0]], [[2.0]]], [[[3.0]], [[4.0]]], [[[5.0]], [[6.0]]]]> : tensor<3x2x1x1xf32>
  %cb = tsr.Constant dense<1.0> : tensor<3xf32>
  %y = tsr.Conv %x, %w, %cb : (tensor<?x2x4x4xf32>, tensor<3x2x1x1xf32>, tensor<3xf32>) -> tensor<?x3x4x4xf32>
  %scale = tsr.Constant dense<[2.0, 1.0, 1.0]> : tensor<3xf32>
  %bias = tsr.Constant dense<[0.0, 0.5, 1.0]> : tensor<3xf32>
  %mean = tsr.Constant dense<[0.5, 1.0, 2.0]> : tensor<3xf32>
  %var = tsr.Constant dense<[3.99, 0.99, 0.24]> : tensor<3xf32>
  %z = "tsr.BatchNormalization"(%y, %scale, %bias, %mean, %var) <{epsilon = 1.000000e-02 : f64, resultSegmentSizes = array<i32: 1, 0, 0>}> : (tensor<?x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<?x3x4x4xf32>
  return %z : tensor<?x3x4x4xf32>
}

// -----

// Without a Conv bias, bias' = B - mean * a.
// CHECK-LABEL: func.func @conv_bn_no_bias
// CHECK-DAG: %[[B:.*]] = tsr.Constant dense<[-5.000000e-01, -5.000000e-01, -3.000000e+00]> : tensor<3xf32>
// CHECK: tsr.Conv %{{.*}}, %{{.*}}, %[[B]]
// CHECK-NOT: tsr.BatchNormalization
func.func @conv_bn_no_bias(%x: tensor<?x2x4x4xf32>) -> tensor<?x3x4x4xf32> {
  %w = tsr.Constant dense<[[[[1.0]], [[2.0]]], [[[3.0]], [[4.0]]], [[[5.0]], [[6.0]]]]> : tensor<3x2x1x1xf32>
  %y = tsr.Conv %x, %w : (tensor<?x2x4x4xf32>, tensor<3x2x1x1xf32>) -> tensor<?x3x4x4xf32>
  %scale = tsr.Constant dense<[2.0, 1.0, 1.0]> : tensor<3xf32>
  %bias = tsr.Constant dense<[0.0, 0.5, 1.0]> : tensor<3xf32>
  %mean = tsr.Constant dense<[0.5, 1.0, 2.0]> : tensor<3xf32>
  %var = tsr.Constant dense<[3.99, 0.99, 0.24]> : tensor<3xf32>
  %z = "tsr.BatchNormalization"(%y, %scale, %bias, %mean, %var) <{epsilon = 1.000000e-02 : f64, resultSegmentSizes = array<i32: 1, 0, 0>}> : (tensor<?x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<?x3x4x4xf32>
  return %z : tensor<?x3x4x4xf32>
}

// -----

// Gemm with transB = 1, alpha 2, beta 0.5: a = [3, 0.5] scales the rows of B ([N, K]),
// C' = (beta * C - mean) * a + B_bn = [1.5, 1], beta' = 1 (the default, not printed), alpha kept.
// CHECK-LABEL: func.func @gemm_bn
// CHECK-SAME: (%[[A:.*]]: tensor<?x2xf32>)
// CHECK-DAG: %[[W:.*]] = tsr.Constant dense<{{\[\[}}3.000000e+00, 6.000000e+00], [1.500000e+00, 2.000000e+00]]> : tensor<2x2xf32>
// CHECK-DAG: %[[C:.*]] = tsr.Constant dense<[1.500000e+00, 1.000000e+00]> : tensor<2xf32>
// CHECK: %[[Y:.*]] = tsr.Gemm %[[A]], %[[W]], %[[C]] {alpha = 2.000000e+00 : f64, transB = 1 : i64}
// CHECK-NOT: tsr.BatchNormalization
// CHECK: return %[[Y]]
func.func @gemm_bn(%a: tensor<?x2xf32>) -> tensor<?x2xf32> {
  %w = tsr.Constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %c = tsr.Constant dense<[1.0, 2.0]> : tensor<2xf32>
  %y = tsr.Gemm %a, %w, %c {alpha = 2.0 : f64, beta = 0.5 : f64, transB = 1 : i64} : (tensor<?x2xf32>, tensor<2x2xf32>, tensor<2xf32>) -> tensor<?x2xf32>
  %scale = tsr.Constant dense<[3.0, 1.0]> : tensor<2xf32>
  %bias = tsr.Constant dense<[0.0, 1.0]> : tensor<2xf32>
  %mean = tsr.Constant dense<[0.0, 1.0]> : tensor<2xf32>
  %var = tsr.Constant dense<[0.99, 3.99]> : tensor<2xf32>
  %z = "tsr.BatchNormalization"(%y, %scale, %bias, %mean, %var) <{epsilon = 1.000000e-02 : f64, resultSegmentSizes = array<i32: 1, 0, 0>}> : (tensor<?x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<?x2xf32>
  return %z : tensor<?x2xf32>
}

// -----

// A MatMul with a constant [K, N] weight and a 2-D output becomes a Gemm with the columns of
// the weight scaled and C' = B_bn - mean * a = [0, 0.5].
// CHECK-LABEL: func.func @matmul_bn
// CHECK-SAME: (%[[A:.*]]: tensor<?x3xf32>)
// CHECK-DAG: %[[W:.*]] = tsr.Constant dense<{{\[\[}}3.000000e+00, 1.000000e+00], [9.000000e+00, 2.000000e+00], [1.500000e+01, 3.000000e+00]]> : tensor<3x2xf32>
// CHECK-DAG: %[[C:.*]] = tsr.Constant dense<[0.000000e+00, 5.000000e-01]> : tensor<2xf32>
// CHECK: %[[Y:.*]] = tsr.Gemm %[[A]], %[[W]], %[[C]] : (tensor<?x3xf32>, tensor<3x2xf32>, tensor<2xf32>) -> tensor<?x2xf32>
// CHECK-NOT: tsr.MatMul
// CHECK-NOT: tsr.BatchNormalization
// CHECK: return %[[Y]]
func.func @matmul_bn(%a: tensor<?x3xf32>) -> tensor<?x2xf32> {
  %w = tsr.Constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>
  %y = tsr.MatMul %a, %w : (tensor<?x3xf32>, tensor<3x2xf32>) -> tensor<?x2xf32>
  %scale = tsr.Constant dense<[3.0, 1.0]> : tensor<2xf32>
  %bias = tsr.Constant dense<[0.0, 1.0]> : tensor<2xf32>
  %mean = tsr.Constant dense<[0.0, 1.0]> : tensor<2xf32>
  %var = tsr.Constant dense<[0.99, 3.99]> : tensor<2xf32>
  %z = "tsr.BatchNormalization"(%y, %scale, %bias, %mean, %var) <{epsilon = 1.000000e-02 : f64, resultSegmentSizes = array<i32: 1, 0, 0>}> : (tensor<?x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<?x2xf32>
  return %z : tensor<?x2xf32>
}

// -----

// A 3-D MatMul output normalizes axis 1, the rows of A: no weight change can do that, so the
// MatMul stays; the BatchNormalization becomes Mul + Add (with standalone=false it stays).
// CHECK-LABEL: func.func @matmul_3d_bn
// CHECK: %[[Y:.*]] = tsr.MatMul
// CHECK: %[[M:.*]] = tsr.Mul %[[Y]], %{{.*}} : (tensor<2x4x2xf32>, tensor<4x1xf32>) -> tensor<2x4x2xf32>
// CHECK: tsr.Add %[[M]], %{{.*}} : (tensor<2x4x2xf32>, tensor<4x1xf32>) -> tensor<2x4x2xf32>
// CHECK-NOT: tsr.BatchNormalization
// KEEP-LABEL: func.func @matmul_3d_bn
// KEEP: tsr.MatMul
// KEEP: tsr.BatchNormalization
func.func @matmul_3d_bn(%a: tensor<2x4x3xf32>) -> tensor<2x4x2xf32> {
  %w = tsr.Constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>
  %y = tsr.MatMul %a, %w : (tensor<2x4x3xf32>, tensor<3x2xf32>) -> tensor<2x4x2xf32>
  %p = tsr.Constant dense<1.0> : tensor<4xf32>
  %z = "tsr.BatchNormalization"(%y, %p, %p, %p, %p) <{resultSegmentSizes = array<i32: 1, 0, 0>}> : (tensor<2x4x2xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x2xf32>
  return %z : tensor<2x4x2xf32>
}

// -----

// Standalone: Y = X * a + (B - mean * a) with [C, 1, 1] constants (a = [1, 2], shift = [-1, 1]).
// A Conv whose result has another user keeps its weights.
// CHECK-LABEL: func.func @standalone
// CHECK-SAME: (%[[X:.*]]: tensor<?x2x3x3xf32>, %[[W:.*]]: tensor<2x2x1x1xf32>)
// CHECK-DAG: %[[S:.*]] = tsr.Constant dense<{{\[\[\[}}1.000000e+00]], {{\[\[}}2.000000e+00]]]> : tensor<2x1x1xf32>
// CHECK-DAG: %[[T:.*]] = tsr.Constant dense<{{\[\[\[}}-1.000000e+00]], {{\[\[}}1.000000e+00]]]> : tensor<2x1x1xf32>
// CHECK: %[[M:.*]] = tsr.Mul %[[X]], %[[S]]
// CHECK: %[[Y:.*]] = tsr.Add %[[M]], %[[T]]
// CHECK: %[[C:.*]] = tsr.Conv %[[X]], %{{.*}} :
// CHECK: %[[M2:.*]] = tsr.Mul %[[C]], %{{.*}} : (tensor<?x2x3x3xf32>, tensor<2x1x1xf32>)
// CHECK: %[[Y2:.*]] = tsr.Add %[[M2]], %{{.*}} : (tensor<?x2x3x3xf32>, tensor<2x1x1xf32>)
// CHECK-NOT: tsr.BatchNormalization
// CHECK: return %[[Y]], %[[Y2]], %[[C]]
// KEEP-LABEL: func.func @standalone
// KEEP: tsr.BatchNormalization
// KEEP: tsr.BatchNormalization
func.func @standalone(%x: tensor<?x2x3x3xf32>, %w: tensor<2x2x1x1xf32>) -> (tensor<?x2x3x3xf32>, tensor<?x2x3x3xf32>, tensor<?x2x3x3xf32>) {
  %scale = tsr.Constant dense<[1.0, 1.0]> : tensor<2xf32>
  %bias = tsr.Constant dense<[0.0, 1.0]> : tensor<2xf32>
  %mean = tsr.Constant dense<[1.0, 0.0]> : tensor<2xf32>
  %var = tsr.Constant dense<[0.99, 0.24]> : tensor<2xf32>
  %y = "tsr.BatchNormalization"(%x, %scale, %bias, %mean, %var) <{epsilon = 1.000000e-02 : f64, resultSegmentSizes = array<i32: 1, 0, 0>}> : (tensor<?x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<?x2x3x3xf32>
  %cw = tsr.Constant dense<1.0> : tensor<2x2x1x1xf32>
  %c = tsr.Conv %x, %cw : (tensor<?x2x3x3xf32>, tensor<2x2x1x1xf32>) -> tensor<?x2x3x3xf32>
  %y2 = "tsr.BatchNormalization"(%c, %scale, %bias, %mean, %var) <{epsilon = 1.000000e-02 : f64, resultSegmentSizes = array<i32: 1, 0, 0>}> : (tensor<?x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<?x2x3x3xf32>
  return %y, %y2, %c : tensor<?x2x3x3xf32>, tensor<?x2x3x3xf32>, tensor<?x2x3x3xf32>
}

// -----

// Left alone: training mode, and statistics that are not constants.
// CHECK-LABEL: func.func @not_foldable
// CHECK: tsr.BatchNormalization
// CHECK: tsr.BatchNormalization
func.func @not_foldable(%x: tensor<4x2xf32>, %mean: tensor<2xf32>) -> (tensor<4x2xf32>, tensor<4x2xf32>) {
  %p = tsr.Constant dense<1.0> : tensor<2xf32>
  %a:3 = "tsr.BatchNormalization"(%x, %p, %p, %p, %p) <{training_mode = 1 : i64, resultSegmentSizes = array<i32: 1, 1, 1>}> : (tensor<4x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<4x2xf32>, tensor<2xf32>, tensor<2xf32>)
  %b = "tsr.BatchNormalization"(%x, %p, %p, %mean, %p) <{resultSegmentSizes = array<i32: 1, 0, 0>}> : (tensor<4x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  return %a#0, %b : tensor<4x2xf32>, tensor<4x2xf32>
}

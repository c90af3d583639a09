// tsr-fuse-layernorm: layer normalization written out over the last axis becomes one
// LayerNormalization with the chain's epsilon, gamma and beta.
// RUN: tessera-opt %s --tsr-fuse-layernorm --split-input-file | FileCheck %s

// torch.nn.LayerNorm as exported before opset 17: mean, deviation, Pow 2, mean, + eps, Sqrt,
// Div, * gamma, + beta.
// CHECK-LABEL: func.func @layernorm
// CHECK: %[[Y:.*]], %{{.*}}, %{{.*}} = tsr.LayerNormalization %arg0, %arg1, %arg2 {epsilon = 9.9999997473787516E-6 : f64}
// CHECK-SAME: -> (tensor<2x3x8xf32>, tensor<2x3x1xf32>, tensor<2x3x1xf32>)
// CHECK-NOT: tsr.ReduceMean
// CHECK: return %[[Y]]
func.func @layernorm(%x: tensor<2x3x8xf32>, %gamma: tensor<8xf32>, %beta: tensor<8xf32>) -> tensor<2x3x8xf32> {
  %axes = tsr.Constant dense<-1> : tensor<1xi64>
  %two = tsr.Constant dense<2.0> : tensor<f32>
  %eps = tsr.Constant dense<1.0e-5> : tensor<f32>
  %mean = tsr.ReduceMean %x, %axes : (tensor<2x3x8xf32>, tensor<1xi64>) -> tensor<2x3x1xf32>
  %d = tsr.Sub %x, %mean : (tensor<2x3x8xf32>, tensor<2x3x1xf32>) -> tensor<2x3x8xf32>
  %sq = tsr.Pow %d, %two : (tensor<2x3x8xf32>, tensor<f32>) -> tensor<2x3x8xf32>
  %var = tsr.ReduceMean %sq, %axes : (tensor<2x3x8xf32>, tensor<1xi64>) -> tensor<2x3x1xf32>
  %ve = tsr.Add %var, %eps : (tensor<2x3x1xf32>, tensor<f32>) -> tensor<2x3x1xf32>
  %sd = tsr.Sqrt %ve : (tensor<2x3x1xf32>) -> tensor<2x3x1xf32>
  %n = tsr.Div %d, %sd : (tensor<2x3x8xf32>, tensor<2x3x1xf32>) -> tensor<2x3x8xf32>
  %g = tsr.Mul %gamma, %n : (tensor<8xf32>, tensor<2x3x8xf32>) -> tensor<2x3x8xf32>
  %y = tsr.Add %g, %beta : (tensor<2x3x8xf32>, tensor<8xf32>) -> tensor<2x3x8xf32>
  return %y : tensor<2x3x8xf32>
}

// -----

// The square as Mul(d, d), no gamma (simplified away when it was all ones) and no beta:
// gamma becomes a constant of ones.
// CHECK-LABEL: func.func @no_affine
// CHECK: %[[G:.*]] = tsr.Constant dense<1.000000e+00> : tensor<8xf32>
// CHECK: tsr.LayerNormalization %arg0, %[[G]] {epsilon = 0.0010000000474974513 : f64}
func.func @no_affine(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %axes = tsr.Constant dense<1> : tensor<1xi64>
  %eps = tsr.Constant dense<1.0e-3> : tensor<1xf32>
  %mean = tsr.ReduceMean %x, %axes : (tensor<4x8xf32>, tensor<1xi64>) -> tensor<4x1xf32>
  %d = tsr.Sub %x, %mean : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %sq = tsr.Mul %d, %d : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %var = tsr.ReduceMean %sq, %axes : (tensor<4x8xf32>, tensor<1xi64>) -> tensor<4x1xf32>
  %ve = tsr.Add %eps, %var : (tensor<1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %sd = tsr.Sqrt %ve : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %n = tsr.Div %d, %sd : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  return %n : tensor<4x8xf32>
}

// -----

// Not over the last axis, or with the deviation used elsewhere: nothing is fused.
// CHECK-LABEL: func.func @not_layernorm
// CHECK-NOT: tsr.LayerNormalization
func.func @not_layernorm(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %axes0 = tsr.Constant dense<0> : tensor<1xi64>
  %axes1 = tsr.Constant dense<1> : tensor<1xi64>
  %eps = tsr.Constant dense<1.0e-3> : tensor<f32>
  %mean = tsr.ReduceMean %x, %axes0 : (tensor<4x8xf32>, tensor<1xi64>) -> tensor<1x8xf32>
  %d = tsr.Sub %x, %mean : (tensor<4x8xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  %sq = tsr.Mul %d, %d : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %var = tsr.ReduceMean %sq, %axes0 : (tensor<4x8xf32>, tensor<1xi64>) -> tensor<1x8xf32>
  %ve = tsr.Add %var, %eps : (tensor<1x8xf32>, tensor<f32>) -> tensor<1x8xf32>
  %sd = tsr.Sqrt %ve : (tensor<1x8xf32>) -> tensor<1x8xf32>
  %n = tsr.Div %d, %sd : (tensor<4x8xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  %mean1 = tsr.ReduceMean %x, %axes1 : (tensor<4x8xf32>, tensor<1xi64>) -> tensor<4x1xf32>
  %d1 = tsr.Sub %x, %mean1 : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %sq1 = tsr.Mul %d1, %d1 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %var1 = tsr.ReduceMean %sq1, %axes1 : (tensor<4x8xf32>, tensor<1xi64>) -> tensor<4x1xf32>
  %ve1 = tsr.Add %var1, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %sd1 = tsr.Sqrt %ve1 : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %n1 = tsr.Div %d1, %sd1 : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  return %n, %n1, %d1 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

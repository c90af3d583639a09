// tsr-fuse-attention: the attention chain a model exports (heads split off q, k and v,
// MatMul, scale, mask, Softmax, MatMul with v, heads merged) becomes one MultiHeadAttention.
// RUN: tessera-opt %s --tsr-fuse-attention --split-input-file | FileCheck %s

// GPT-2's form: q, k and v cut from one projection by a Split, a scale by Mul, a causal
// mask by Where: the fused op reads the packed projection; the Split goes too.
// CHECK-LABEL: func.func @packed
// CHECK: %[[M:.*]] = tsr.Constant dense<true> : tensor<1x1x4x4xi1>
// CHECK: %[[Y:.*]] = "tsr.MultiHeadAttention"(%arg0, %[[M]])
// CHECK-SAME: mask_value = 0xFFF0000000000000 : f64, num_heads = 2 : i64, operandSegmentSizes = array<i32: 1, 0, 0, 1>, scale = 1.250000e-01 : f64
// CHECK-SAME: (tensor<1x4x12xf32>, tensor<1x1x4x4xi1>) -> tensor<1x4x4xf32>
// CHECK-NOT: tsr.Split
// CHECK-NOT: tsr.Softmax
// CHECK-NOT: tsr.MatMul
// CHECK: return %[[Y]]
func.func @packed(%qkv: tensor<1x4x12xf32>) -> tensor<1x4x4xf32> {
  %sizes = tsr.Constant dense<4> : tensor<3xi64>
  %heads = tsr.Constant dense<[1, 4, 2, 2]> : tensor<4xi64>
  %flat = tsr.Constant dense<[1, 4, 4]> : tensor<3xi64>
  %scale = tsr.Constant dense<0.125> : tensor<f32>
  %ninf = tsr.Constant dense<0xFF800000> : tensor<f32>
  %mask = tsr.Constant dense<true> : tensor<1x1x4x4xi1>
  %p:3 = tsr.Split %qkv, %sizes {axis = 2 : i64} : (tensor<1x4x12xf32>, tensor<3xi64>) -> (tensor<1x4x4xf32>, tensor<1x4x4xf32>, tensor<1x4x4xf32>)
  %q4 = tsr.Reshape %p#0, %heads : (tensor<1x4x4xf32>, tensor<4xi64>) -> tensor<1x4x2x2xf32>
  %q = tsr.Transpose %q4 {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x4x2x2xf32>) -> tensor<1x2x4x2xf32>
  %k4 = tsr.Reshape %p#1, %heads : (tensor<1x4x4xf32>, tensor<4xi64>) -> tensor<1x4x2x2xf32>
  %kt = tsr.Transpose %k4 {perm = array<i64: 0, 2, 3, 1>} : (tensor<1x4x2x2xf32>) -> tensor<1x2x2x4xf32>
  %v4 = tsr.Reshape %p#2, %heads : (tensor<1x4x4xf32>, tensor<4xi64>) -> tensor<1x4x2x2xf32>
  %v = tsr.Transpose %v4 {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x4x2x2xf32>) -> tensor<1x2x4x2xf32>
  %s = tsr.MatMul %q, %kt : (tensor<1x2x4x2xf32>, tensor<1x2x2x4xf32>) -> tensor<1x2x4x4xf32>
  %ss = tsr.Mul %s, %scale : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %sm = tsr.Where %mask, %ninf, %ss : (tensor<1x1x4x4xi1>, tensor<f32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %pr = tsr.Softmax %sm : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %c = tsr.MatMul %pr, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x2xf32>) -> tensor<1x2x4x2xf32>
  %ct = tsr.Transpose %c {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x2x4x2xf32>) -> tensor<1x4x2x2xf32>
  %y = tsr.Reshape %ct, %flat : (tensor<1x4x2x2xf32>, tensor<3xi64>) -> tensor<1x4x4xf32>
  return %y : tensor<1x4x4xf32>
}

// -----

// Separate q, k and v projections (BERT's form), the scale a Div, no mask, and a value head
// size other than the query's: three operands, scale 1 / 4.
// CHECK-LABEL: func.func @separate
// CHECK: %[[Y:.*]] = "tsr.MultiHeadAttention"(%arg0, %arg1, %arg2)
// CHECK-SAME: num_heads = 2 : i64, operandSegmentSizes = array<i32: 1, 1, 1, 0>, scale = 2.500000e-01 : f64
// CHECK-SAME: (tensor<2x3x8xf32>, tensor<2x5x8xf32>, tensor<2x5x6xf32>) -> tensor<2x3x6xf32>
// CHECK-NOT: tsr.Softmax
// CHECK: return %[[Y]]
func.func @separate(%q3: tensor<2x3x8xf32>, %k3: tensor<2x5x8xf32>, %v3: tensor<2x5x6xf32>) -> tensor<2x3x6xf32> {
  %qh = tsr.Constant dense<[2, 3, 2, 4]> : tensor<4xi64>
  %kh = tsr.Constant dense<[2, 5, 2, 4]> : tensor<4xi64>
  %vh = tsr.Constant dense<[2, 5, 2, 3]> : tensor<4xi64>
  %flat = tsr.Constant dense<[2, 3, 6]> : tensor<3xi64>
  %four = tsr.Constant dense<4.0> : tensor<f32>
  %q4 = tsr.Reshape %q3, %qh : (tensor<2x3x8xf32>, tensor<4xi64>) -> tensor<2x3x2x4xf32>
  %q = tsr.Transpose %q4 {perm = array<i64: 0, 2, 1, 3>} : (tensor<2x3x2x4xf32>) -> tensor<2x2x3x4xf32>
  %k4 = tsr.Reshape %k3, %kh : (tensor<2x5x8xf32>, tensor<4xi64>) -> tensor<2x5x2x4xf32>
  %kt = tsr.Transpose %k4 {perm = array<i64: 0, 2, 3, 1>} : (tensor<2x5x2x4xf32>) -> tensor<2x2x4x5xf32>
  %v4 = tsr.Reshape %v3, %vh : (tensor<2x5x6xf32>, tensor<4xi64>) -> tensor<2x5x2x3xf32>
  %v = tsr.Transpose %v4 {perm = array<i64: 0, 2, 1, 3>} : (tensor<2x5x2x3xf32>) -> tensor<2x2x5x3xf32>
  %s = tsr.MatMul %q, %kt : (tensor<2x2x3x4xf32>, tensor<2x2x4x5xf32>) -> tensor<2x2x3x5xf32>
  %ss = tsr.Div %s, %four : (tensor<2x2x3x5xf32>, tensor<f32>) -> tensor<2x2x3x5xf32>
  %pr = tsr.Softmax %ss {axis = 3 : i64} : (tensor<2x2x3x5xf32>) -> tensor<2x2x3x5xf32>
  %c = tsr.MatMul %pr, %v : (tensor<2x2x3x5xf32>, tensor<2x2x5x3xf32>) -> tensor<2x2x3x3xf32>
  %ct = tsr.Transpose %c {perm = array<i64: 0, 2, 1, 3>} : (tensor<2x2x3x3xf32>) -> tensor<2x3x2x3xf32>
  %y = tsr.Reshape %ct, %flat : (tensor<2x3x2x3xf32>, tensor<3xi64>) -> tensor<2x3x6xf32>
  return %y : tensor<2x3x6xf32>
}

// -----

// The probabilities are also returned (as a training graph's backward pass would read
// them): nothing is fused.
// CHECK-LABEL: func.func @probabilities_used
// CHECK: tsr.Softmax
// CHECK-NOT: tsr.MultiHeadAttention
func.func @probabilities_used(%q3: tensor<1x3x4xf32>, %k3: tensor<1x3x4xf32>, %v3: tensor<1x3x4xf32>) -> (tensor<1x3x4xf32>, tensor<1x1x3x3xf32>) {
  %h = tsr.Constant dense<[1, 3, 1, 4]> : tensor<4xi64>
  %flat = tsr.Constant dense<[1, 3, 4]> : tensor<3xi64>
  %q4 = tsr.Reshape %q3, %h : (tensor<1x3x4xf32>, tensor<4xi64>) -> tensor<1x3x1x4xf32>
  %q = tsr.Transpose %q4 {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x3x1x4xf32>) -> tensor<1x1x3x4xf32>
  %k4 = tsr.Reshape %k3, %h : (tensor<1x3x4xf32>, tensor<4xi64>) -> tensor<1x3x1x4xf32>
  %kt = tsr.Transpose %k4 {perm = array<i64: 0, 2, 3, 1>} : (tensor<1x3x1x4xf32>) -> tensor<1x1x4x3xf32>
  %v4 = tsr.Reshape %v3, %h : (tensor<1x3x4xf32>, tensor<4xi64>) -> tensor<1x3x1x4xf32>
  %v = tsr.Transpose %v4 {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x3x1x4xf32>) -> tensor<1x1x3x4xf32>
  %s = tsr.MatMul %q, %kt : (tensor<1x1x3x4xf32>, tensor<1x1x4x3xf32>) -> tensor<1x1x3x3xf32>
  %pr = tsr.Softmax %s : (tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf32>
  %c = tsr.MatMul %pr, %v : (tensor<1x1x3x3xf32>, tensor<1x1x3x4xf32>) -> tensor<1x1x3x4xf32>
  %ct = tsr.Transpose %c {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x1x3x4xf32>) -> tensor<1x3x1x4xf32>
  %y = tsr.Reshape %ct, %flat : (tensor<1x3x1x4xf32>, tensor<3xi64>) -> tensor<1x3x4xf32>
  return %y, %pr : tensor<1x3x4xf32>, tensor<1x1x3x3xf32>
}

// -----

// The keys are not transposed into [B, H, D, S] (perm 0, 2, 1, 3 multiplies q by k's
// [S, D] rows -- not attention's Q K^T): nothing is fused.
// CHECK-LABEL: func.func @keys_not_transposed
// CHECK-NOT: tsr.MultiHeadAttention
func.func @keys_not_transposed(%q3: tensor<1x4x4xf32>, %k3: tensor<1x4x4xf32>, %v3: tensor<1x4x4xf32>) -> tensor<1x4x4xf32> {
  %h = tsr.Constant dense<[1, 4, 1, 4]> : tensor<4xi64>
  %flat = tsr.Constant dense<[1, 4, 4]> : tensor<3xi64>
  %q4 = tsr.Reshape %q3, %h : (tensor<1x4x4xf32>, tensor<4xi64>) -> tensor<1x4x1x4xf32>
  %q = tsr.Transpose %q4 {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x4x1x4xf32>) -> tensor<1x1x4x4xf32>
  %k4 = tsr.Reshape %k3, %h : (tensor<1x4x4xf32>, tensor<4xi64>) -> tensor<1x4x1x4xf32>
  %k = tsr.Transpose %k4 {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x4x1x4xf32>) -> tensor<1x1x4x4xf32>
  %v4 = tsr.Reshape %v3, %h : (tensor<1x4x4xf32>, tensor<4xi64>) -> tensor<1x4x1x4xf32>
  %v = tsr.Transpose %v4 {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x4x1x4xf32>) -> tensor<1x1x4x4xf32>
  %s = tsr.MatMul %q, %k : (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  %pr = tsr.Softmax %s : (tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  %c = tsr.MatMul %pr, %v : (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  %ct = tsr.Transpose %c {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x1x4x4xf32>) -> tensor<1x4x1x4xf32>
  %y = tsr.Reshape %ct, %flat : (tensor<1x4x1x4xf32>, tensor<3xi64>) -> tensor<1x4x4xf32>
  return %y : tensor<1x4x4xf32>
}

// -----

// HuggingFace's form, Where(keep, scores, fill): the fused op's mask is keep negated -- a
// constant's values negated, a computed mask through a Not.
// CHECK-LABEL: func.func @keep_masks
// CHECK: %[[M:.*]] = tsr.Constant dense<{{\[\[}}[false, true], [false, false]]]> : tensor<1x2x2xi1>
// CHECK: "tsr.MultiHeadAttention"(%arg0, %arg1, %arg2, %[[M]])
// CHECK-SAME: mask_value = -1.000000e+04 : f64
// CHECK: %[[N:.*]] = tsr.Not %arg3
// CHECK: "tsr.MultiHeadAttention"(%arg0, %arg1, %arg2, %[[N]])
// CHECK-NOT: tsr.Where
func.func @keep_masks(%q3: tensor<1x2x4xf32>, %k3: tensor<1x2x4xf32>, %v3: tensor<1x2x4xf32>, %keep: tensor<2x2xi1>) -> (tensor<1x2x4xf32>, tensor<1x2x4xf32>) {
  %h = tsr.Constant dense<[1, 2, 1, 4]> : tensor<4xi64>
  %flat = tsr.Constant dense<[1, 2, 4]> : tensor<3xi64>
  %fill = tsr.Constant dense<-10000.0> : tensor<f32>
  %causal = tsr.Constant dense<[[[true, false], [true, true]]]> : tensor<1x2x2xi1>
  %q4 = tsr.Reshape %q3, %h : (tensor<1x2x4xf32>, tensor<4xi64>) -> tensor<1x2x1x4xf32>
  %q = tsr.Transpose %q4 {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x2x1x4xf32>) -> tensor<1x1x2x4xf32>
  %k4 = tsr.Reshape %k3, %h : (tensor<1x2x4xf32>, tensor<4xi64>) -> tensor<1x2x1x4xf32>
  %kt = tsr.Transpose %k4 {perm = array<i64: 0, 2, 3, 1>} : (tensor<1x2x1x4xf32>) -> tensor<1x1x4x2xf32>
  %v4 = tsr.Reshape %v3, %h : (tensor<1x2x4xf32>, tensor<4xi64>) -> tensor<1x2x1x4xf32>
  %v = tsr.Transpose %v4 {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x2x1x4xf32>) -> tensor<1x1x2x4xf32>
  %s = tsr.MatMul %q, %kt : (tensor<1x1x2x4xf32>, tensor<1x1x4x2xf32>) -> tensor<1x1x2x2xf32>
  %sm = tsr.Where %causal, %s, %fill : (tensor<1x2x2xi1>, tensor<1x1x2x2xf32>, tensor<f32>) -> tensor<1x1x2x2xf32>
  %pr = tsr.Softmax %sm : (tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  %c = tsr.MatMul %pr, %v : (tensor<1x1x2x2xf32>, tensor<1x1x2x4xf32>) -> tensor<1x1x2x4xf32>
  %ct = tsr.Transpose %c {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x1x2x4xf32>) -> tensor<1x2x1x4xf32>
  %y = tsr.Reshape %ct, %flat : (tensor<1x2x1x4xf32>, tensor<3xi64>) -> tensor<1x2x4xf32>
  %q4b = tsr.Reshape %q3, %h : (tensor<1x2x4xf32>, tensor<4xi64>) -> tensor<1x2x1x4xf32>
  %qb = tsr.Transpose %q4b {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x2x1x4xf32>) -> tensor<1x1x2x4xf32>
  %k4b = tsr.Reshape %k3, %h : (tensor<1x2x4xf32>, tensor<4xi64>) -> tensor<1x2x1x4xf32>
  %ktb = tsr.Transpose %k4b {perm = array<i64: 0, 2, 3, 1>} : (tensor<1x2x1x4xf32>) -> tensor<1x1x4x2xf32>
  %v4b = tsr.Reshape %v3, %h : (tensor<1x2x4xf32>, tensor<4xi64>) -> tensor<1x2x1x4xf32>
  %vb = tsr.Transpose %v4b {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x2x1x4xf32>) -> tensor<1x1x2x4xf32>
  %sb = tsr.MatMul %qb, %ktb : (tensor<1x1x2x4xf32>, tensor<1x1x4x2xf32>) -> tensor<1x1x2x2xf32>
  %smb = tsr.Where %keep, %sb, %fill : (tensor<2x2xi1>, tensor<1x1x2x2xf32>, tensor<f32>) -> tensor<1x1x2x2xf32>
  %prb = tsr.Softmax %smb : (tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  %cb = tsr.MatMul %prb, %vb : (tensor<1x1x2x2xf32>, tensor<1x1x2x4xf32>) -> tensor<1x1x2x4xf32>
  %ctb = tsr.Transpose %cb {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x1x2x4xf32>) -> tensor<1x2x1x4xf32>
  %yb = tsr.Reshape %ctb, %flat : (tensor<1x2x1x4xf32>, tensor<3xi64>) -> tensor<1x2x4xf32>
  return %y, %yb : tensor<1x2x4xf32>, tensor<1x2x4xf32>
}

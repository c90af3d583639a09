// Folders and canonicalization patterns of the tsr ops.
// RUN: tessera-opt %s --canonicalize --split-input-file | FileCheck %s

// CHECK-LABEL: func.func @identity
// CHECK-SAME: (%[[A:.*]]: tensor<4xf32>)
// CHECK-NEXT: return %[[A]]
func.func @identity(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = tsr.Identity %a : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// x + -0.0 and x * 1 fold (either side); x + +0.0 does not (-0.0 + +0.0 is +0.0).
// CHECK-LABEL: func.func @neutral_elements
// CHECK-SAME: (%[[A:.*]]: tensor<2x3xf32>)
// CHECK: %[[PZ:.*]] = tsr.Constant dense<0.000000e+00>
// CHECK: %[[S:.*]] = tsr.Add %[[A]], %[[PZ]]
// CHECK: return %[[A]], %[[A]], %[[S]]
func.func @neutral_elements(%a: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %nz = tsr.Constant dense<-0.0> : tensor<3xf32>
  %pz = tsr.Constant dense<0.0> : tensor<3xf32>
  %one = tsr.Constant dense<1.0> : tensor<2x3xf32>
  %x = tsr.Add %a, %nz : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %y = tsr.Mul %one, %a : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %z = tsr.Add %a, %pz : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %x, %y, %z : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// A neutral operand that broadcasts the other one to a larger shape must stay.
// CHECK-LABEL: func.func @broadcasting_neutral
// CHECK: tsr.Mul
func.func @broadcasting_neutral(%a: tensor<3xi32>) -> tensor<2x3xi32> {
  %one = tsr.Constant dense<1> : tensor<2x3xi32>
  %y = tsr.Mul %a, %one : (tensor<3xi32>, tensor<2x3xi32>) -> tensor<2x3xi32>
  return %y : tensor<2x3xi32>
}

// -----

// CHECK-LABEL: func.func @integer_zero
// CHECK-SAME: (%[[A:.*]]: tensor<5xi64>)
// CHECK-NEXT: return %[[A]]
func.func @integer_zero(%a: tensor<5xi64>) -> tensor<5xi64> {
  %zero = tsr.Constant dense<0> : tensor<5xi64>
  %x = tsr.Add %zero, %a : (tensor<5xi64>, tensor<5xi64>) -> tensor<5xi64>
  return %x : tensor<5xi64>
}

// -----

// CHECK-LABEL: func.func @transpose_chain
// CHECK-SAME: (%[[A:.*]]: tensor<2x3x4xf32>)
// CHECK-NEXT: %[[T:.*]] = tsr.Transpose %[[A]] {perm = array<i64: 1, 0, 2>} : (tensor<2x3x4xf32>) -> tensor<3x2x4xf32>
// CHECK-NEXT: return %[[A]], %[[T]]
func.func @transpose_chain(%a: tensor<2x3x4xf32>) -> (tensor<2x3x4xf32>, tensor<3x2x4xf32>) {
  // Reversing twice is the identity.
  %r = tsr.Transpose %a : (tensor<2x3x4xf32>) -> tensor<4x3x2xf32>
  %rr = tsr.Transpose %r : (tensor<4x3x2xf32>) -> tensor<2x3x4xf32>
  // [1,2,0] then [1,0,2]: output dim i is input dim p[q[i]] = [2,1,0][...] -> [1,0,2].
  %p = tsr.Transpose %a {perm = array<i64: 2, 1, 0>} : (tensor<2x3x4xf32>) -> tensor<4x3x2xf32>
  %q = tsr.Transpose %p {perm = array<i64: 1, 2, 0>} : (tensor<4x3x2xf32>) -> tensor<3x2x4xf32>
  return %rr, %q : tensor<2x3x4xf32>, tensor<3x2x4xf32>
}

// -----

// CHECK-LABEL: func.func @identity_transpose
// CHECK-SAME: (%[[A:.*]]: tensor<2x3xf32>)
// CHECK-NEXT: return %[[A]]
func.func @identity_transpose(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %t = tsr.Transpose %a {perm = array<i64: 0, 1>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %t : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @reshape_chain
// CHECK-SAME: (%[[A:.*]]: tensor<2x3x4xf32>)
// CHECK: %[[S:.*]] = tsr.Constant dense<[4, 6]> : tensor<2xi64>
// CHECK-NEXT: %[[R:.*]] = tsr.Reshape %[[A]], %[[S]] : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<4x6xf32>
// CHECK-NEXT: return %[[A]], %[[R]]
func.func @reshape_chain(%a: tensor<2x3x4xf32>) -> (tensor<2x3x4xf32>, tensor<4x6xf32>) {
  %s1 = tsr.Constant dense<[6, 4]> : tensor<2xi64>
  %s2 = tsr.Constant dense<[4, 6]> : tensor<2xi64>
  %s3 = tsr.Constant dense<[2, 3, 4]> : tensor<3xi64>
  %r1 = tsr.Reshape %a, %s1 : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<6x4xf32>
  %r2 = tsr.Reshape %r1, %s2 : (tensor<6x4xf32>, tensor<2xi64>) -> tensor<4x6xf32>
  // Back to the input's type: folds to the input.
  %r3 = tsr.Reshape %r1, %s3 : (tensor<6x4xf32>, tensor<3xi64>) -> tensor<2x3x4xf32>
  return %r3, %r2 : tensor<2x3x4xf32>, tensor<4x6xf32>
}

// -----

// A 0 in the outer shape copies a dimension of the inner result (6 here, 2 in %a): not rewritten.
// CHECK-LABEL: func.func @reshape_chain_copying_dim
// CHECK: %[[R1:.*]] = tsr.Reshape %{{.*}}, %{{.*}} : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<6x4xf32>
// CHECK: tsr.Reshape %[[R1]], %{{.*}} : (tensor<6x4xf32>, tensor<3xi64>) -> tensor<6x2x2xf32>
func.func @reshape_chain_copying_dim(%a: tensor<2x3x4xf32>) -> tensor<6x2x2xf32> {
  %s1 = tsr.Constant dense<[6, 4]> : tensor<2xi64>
  %s2 = tsr.Constant dense<[0, 2, 2]> : tensor<3xi64>
  %r1 = tsr.Reshape %a, %s1 : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<6x4xf32>
  %r2 = tsr.Reshape %r1, %s2 : (tensor<6x4xf32>, tensor<3xi64>) -> tensor<6x2x2xf32>
  return %r2 : tensor<6x2x2xf32>
}

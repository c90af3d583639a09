// tsr-algebraic-simplify: exact rewrites (neutral elements, identity reshapes / broadcasts /
// casts, view chains, inference Dropout), and the cases that must stay.
// RUN: tessera-opt %s --tsr-algebraic-simplify --split-input-file | FileCheck %s

// x * 1 (either side), x / 1, x - (+0.0), x + (-0.0) are x; on a batch dim too.
// CHECK-LABEL: func.func @float_neutral
// CHECK-SAME: (%[[X:.*]]: tensor<?x3xf32>)
// CHECK-NOT: tsr.Mul
// CHECK-NOT: tsr.Div
// CHECK-NOT: tsr.Sub
// CHECK-NOT: tsr.Add
// CHECK: return %[[X]], %[[X]], %[[X]], %[[X]], %[[X]]
func.func @float_neutral(%x: tensor<?x3xf32>) -> (tensor<?x3xf32>, tensor<?x3xf32>, tensor<?x3xf32>, tensor<?x3xf32>, tensor<?x3xf32>) {
  %one = tsr.Constant dense<1.0> : tensor<1x3xf32>
  %pz = tsr.Constant dense<0.0> : tensor<3xf32>
  %nz = tsr.Constant dense<-0.0> : tensor<f32>
  %a = tsr.Mul %x, %one : (tensor<?x3xf32>, tensor<1x3xf32>) -> tensor<?x3xf32>
  %b = tsr.Mul %one, %x : (tensor<1x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
  %c = tsr.Div %x, %one : (tensor<?x3xf32>, tensor<1x3xf32>) -> tensor<?x3xf32>
  %d = tsr.Sub %x, %pz : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  %e = tsr.Add %nz, %x : (tensor<f32>, tensor<?x3xf32>) -> tensor<?x3xf32>
  return %a, %b, %c, %d, %e : tensor<?x3xf32>, tensor<?x3xf32>, tensor<?x3xf32>, tensor<?x3xf32>, tensor<?x3xf32>
}

// -----

// Not exact, so kept: x + (+0.0) and x - (-0.0) turn -0.0 into +0.0; x * 0 is NaN for NaN or
// Inf; 1 / x and 0 - x are not neutral forms; a non-splat constant is not a neutral element.
// CHECK-LABEL: func.func @float_not_neutral
// CHECK: tsr.Add
// CHECK: tsr.Sub
// CHECK: tsr.Mul
// CHECK: tsr.Div
// CHECK: tsr.Sub
// CHECK: tsr.Mul
func.func @float_not_neutral(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) {
  %pz = tsr.Constant dense<0.0> : tensor<3xf32>
  %nz = tsr.Constant dense<-0.0> : tensor<3xf32>
  %one = tsr.Constant dense<1.0> : tensor<3xf32>
  %mixed = tsr.Constant dense<[1.0, 1.0, 2.0]> : tensor<3xf32>
  %a = tsr.Add %x, %pz : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %b = tsr.Sub %x, %nz : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %c = tsr.Mul %x, %pz : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %d = tsr.Div %one, %x : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %e = tsr.Sub %pz, %x : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %f = tsr.Mul %x, %mixed : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %a, %b, %c, %d, %e, %f : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
}

// -----

// Integers: 0 is neutral for + and -, 1 for * and /.
// CHECK-LABEL: func.func @integer_neutral
// CHECK-SAME: (%[[X:.*]]: tensor<4xi32>)
// CHECK-NEXT: return %[[X]], %[[X]], %[[X]]
func.func @integer_neutral(%x: tensor<4xi32>) -> (tensor<4xi32>, tensor<4xi32>, tensor<4xi32>) {
  %zero = tsr.Constant dense<0> : tensor<4xi32>
  %one = tsr.Constant dense<1> : tensor<i32>
  %a = tsr.Add %x, %zero : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %b = tsr.Sub %x, %zero : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %c = tsr.Div %x, %one : (tensor<4xi32>, tensor<i32>) -> tensor<4xi32>
  return %a, %b, %c : tensor<4xi32>, tensor<4xi32>, tensor<4xi32>
}

// -----

// A neutral constant that broadcasts x to a larger shape becomes an Expand to its shape.
// CHECK-LABEL: func.func @broadcasting_neutral
// CHECK-SAME: (%[[X:.*]]: tensor<3xf32>)
// CHECK: %[[S:.*]] = tsr.Constant dense<[2, 3]> : tensor<2xi64>
// CHECK: %[[E:.*]] = tsr.Expand %[[X]], %[[S]] : (tensor<3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
// CHECK-NOT: tsr.Mul
// CHECK: return %[[E]]
func.func @broadcasting_neutral(%x: tensor<3xf32>) -> tensor<2x3xf32> {
  %one = tsr.Constant dense<1.0> : tensor<2x3xf32>
  %y = tsr.Mul %x, %one : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @neg_neg
// CHECK-SAME: (%[[X:.*]]: tensor<?x2xf32>)
// CHECK-NEXT: %[[N:.*]] = tsr.Neg %[[X]]
// CHECK-NEXT: return %[[X]], %[[N]]
func.func @neg_neg(%x: tensor<?x2xf32>) -> (tensor<?x2xf32>, tensor<?x2xf32>) {
  %n = tsr.Neg %x : (tensor<?x2xf32>) -> tensor<?x2xf32>
  %nn = tsr.Neg %n : (tensor<?x2xf32>) -> tensor<?x2xf32>
  return %nn, %n : tensor<?x2xf32>, tensor<?x2xf32>
}

// -----

// Reshape / Expand / Tile / Cast / Identity to the operand's own type are the operand; with a
// batch dim too (it is one size N, so equal types are equal shapes).
// CHECK-LABEL: func.func @same_type
// CHECK-SAME: (%[[X:.*]]: tensor<?x4xf32>, %[[Y:.*]]: tensor<2x3xi64>)
// CHECK-NEXT: return %[[X]], %[[X]], %[[Y]], %[[X]], %[[X]]
func.func @same_type(%x: tensor<?x4xf32>, %y: tensor<2x3xi64>) -> (tensor<?x4xf32>, tensor<?x4xf32>, tensor<2x3xi64>, tensor<?x4xf32>, tensor<?x4xf32>) {
  %shape = tsr.Constant dense<[-1, 4]> : tensor<2xi64>
  %r = tsr.Reshape %x, %shape : (tensor<?x4xf32>, tensor<2xi64>) -> tensor<?x4xf32>
  %eshape = tsr.Constant dense<[1, 4]> : tensor<2xi64>
  %e = tsr.Expand %x, %eshape : (tensor<?x4xf32>, tensor<2xi64>) -> tensor<?x4xf32>
  %reps = tsr.Constant dense<[1, 1]> : tensor<2xi64>
  %t = tsr.Tile %y, %reps : (tensor<2x3xi64>, tensor<2xi64>) -> tensor<2x3xi64>
  %c = tsr.Cast %x {to = f32} : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %i = tsr.Identity %x : (tensor<?x4xf32>) -> tensor<?x4xf32>
  return %r, %e, %t, %c, %i : tensor<?x4xf32>, tensor<?x4xf32>, tensor<2x3xi64>, tensor<?x4xf32>, tensor<?x4xf32>
}

// -----

// Broadcasts and tiles that change the shape stay.
// CHECK-LABEL: func.func @real_broadcast
// CHECK: tsr.Expand
// CHECK: tsr.Tile
func.func @real_broadcast(%x: tensor<1x4xf32>) -> (tensor<3x4xf32>, tensor<2x4xf32>) {
  %s = tsr.Constant dense<[3, 4]> : tensor<2xi64>
  %e = tsr.Expand %x, %s : (tensor<1x4xf32>, tensor<2xi64>) -> tensor<3x4xf32>
  %reps = tsr.Constant dense<[2, 1]> : tensor<2xi64>
  %t = tsr.Tile %x, %reps : (tensor<1x4xf32>, tensor<2xi64>) -> tensor<2x4xf32>
  return %e, %t : tensor<3x4xf32>, tensor<2x4xf32>
}

// -----

// View chains collapse into one Reshape of the chain's source (a -1 for the batch dim); a chain
// that ends at the source's own type disappears.
// CHECK-LABEL: func.func @view_chains
// CHECK-SAME: (%[[X:.*]]: tensor<?x3x4xf32>)
// CHECK: %[[S:.*]] = tsr.Constant dense<[-1, 12]> : tensor<2xi64>
// CHECK: %[[R:.*]] = tsr.Reshape %[[X]], %[[S]] : (tensor<?x3x4xf32>, tensor<2xi64>) -> tensor<?x12xf32>
// CHECK-NOT: tsr.Unsqueeze
// CHECK-NOT: tsr.Squeeze
// CHECK-NOT: tsr.Flatten
// CHECK: return %[[R]], %[[X]]
func.func @view_chains(%x: tensor<?x3x4xf32>) -> (tensor<?x12xf32>, tensor<?x3x4xf32>) {
  %axes = tsr.Constant dense<[1]> : tensor<1xi64>
  %u = tsr.Unsqueeze %x, %axes : (tensor<?x3x4xf32>, tensor<1xi64>) -> tensor<?x1x3x4xf32>
  %f = tsr.Flatten %u {axis = 1 : i64} : (tensor<?x1x3x4xf32>) -> tensor<?x12xf32>
  %s = tsr.Squeeze %u, %axes : (tensor<?x1x3x4xf32>, tensor<1xi64>) -> tensor<?x3x4xf32>
  return %f, %s : tensor<?x12xf32>, tensor<?x3x4xf32>
}

// -----

// A lone static Squeeze is a Reshape. With two batch dims no constant shape can say the result
// (one -1 at most): the Unsqueeze stays.
// CHECK-LABEL: func.func @lone_views
// CHECK: %[[S:.*]] = tsr.Constant dense<6> : tensor<1xi64>
// CHECK: tsr.Reshape %{{.*}}, %[[S]] : (tensor<1x6x1xf32>, tensor<1xi64>) -> tensor<6xf32>
// CHECK: tsr.Unsqueeze
func.func @lone_views(%x: tensor<1x6x1xf32>, %y: tensor<?x?xf32>) -> (tensor<6xf32>, tensor<?x1x?xf32>) {
  %s = tsr.Squeeze %x : (tensor<1x6x1xf32>) -> tensor<6xf32>
  %axes = tsr.Constant dense<[1]> : tensor<1xi64>
  %u = tsr.Unsqueeze %y, %axes : (tensor<?x?xf32>, tensor<1xi64>) -> tensor<?x1x?xf32>
  return %s, %u : tensor<6xf32>, tensor<?x1x?xf32>
}

// -----

// A Transpose that only moves size-1 dims is a Reshape; one that reorders data stays; chains
// compose; a Transpose of a constant is left to tsr-constant-fold.
// CHECK-LABEL: func.func @transposes
// CHECK-SAME: (%[[X:.*]]: tensor<?x1x8xf32>, %[[Y:.*]]: tensor<2x3x4xf32>)
// CHECK: %[[S:.*]] = tsr.Constant dense<[-1, 8, 1]> : tensor<3xi64>
// CHECK: %[[R:.*]] = tsr.Reshape %[[X]], %[[S]] : (tensor<?x1x8xf32>, tensor<3xi64>) -> tensor<?x8x1xf32>
// CHECK: %[[T:.*]] = tsr.Transpose %[[Y]] {perm = array<i64: 1, 0, 2>} : (tensor<2x3x4xf32>) -> tensor<3x2x4xf32>
// CHECK: %[[C:.*]] = tsr.Transpose %{{.*}} : (tensor<2x3xf32>) -> tensor<3x2xf32>
// CHECK: return %[[R]], %[[T]], %[[C]]
func.func @transposes(%x: tensor<?x1x8xf32>, %y: tensor<2x3x4xf32>) -> (tensor<?x8x1xf32>, tensor<3x2x4xf32>, tensor<3x2xf32>) {
  %r = tsr.Transpose %x {perm = array<i64: 0, 2, 1>} : (tensor<?x1x8xf32>) -> tensor<?x8x1xf32>
  %p = tsr.Transpose %y {perm = array<i64: 2, 1, 0>} : (tensor<2x3x4xf32>) -> tensor<4x3x2xf32>
  %q = tsr.Transpose %p {perm = array<i64: 1, 2, 0>} : (tensor<4x3x2xf32>) -> tensor<3x2x4xf32>
  %w = tsr.Constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %c = tsr.Transpose %w : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %r, %q, %c : tensor<?x8x1xf32>, tensor<3x2x4xf32>, tensor<3x2xf32>
}

// -----

// Casting to an exactly wider type and back is the identity; narrowing first is not.
// CHECK-LABEL: func.func @cast_round_trips
// CHECK-SAME: (%[[X:.*]]: tensor<?xf32>, %[[Y:.*]]: tensor<?xf64>)
// CHECK: %[[N:.*]] = tsr.Cast %[[Y]] {to = f32}
// CHECK: %[[B:.*]] = tsr.Cast %[[N]] {to = f64}
// CHECK: return %[[X]], %[[B]]
func.func @cast_round_trips(%x: tensor<?xf32>, %y: tensor<?xf64>) -> (tensor<?xf32>, tensor<?xf64>) {
  %w = tsr.Cast %x {to = f64} : (tensor<?xf32>) -> tensor<?xf64>
  %a = tsr.Cast %w {to = f32} : (tensor<?xf64>) -> tensor<?xf32>
  %n = tsr.Cast %y {to = f32} : (tensor<?xf64>) -> tensor<?xf32>
  %b = tsr.Cast %n {to = f64} : (tensor<?xf32>) -> tensor<?xf64>
  return %a, %b : tensor<?xf32>, tensor<?xf64>
}

// -----

// Dropout without training (no training_mode, or false), or with ratio 0, is the identity; a
// used mask becomes a constant all-true tensor when its shape is static.
// CHECK-LABEL: func.func @dropout_identity
// CHECK-SAME: (%[[X:.*]]: tensor<?x8xf32>, %[[Y:.*]]: tensor<2x8xf32>)
// CHECK-NOT: tsr.Dropout
// CHECK: %[[M:.*]] = tsr.Constant dense<true> : tensor<2x8xi1>
// CHECK-NOT: tsr.Dropout
// CHECK: return %[[X]], %[[Y]], %[[M]], %[[Y]]
func.func @dropout_identity(%x: tensor<?x8xf32>, %y: tensor<2x8xf32>) -> (tensor<?x8xf32>, tensor<2x8xf32>, tensor<2x8xi1>, tensor<2x8xf32>) {
  %a:2 = "tsr.Dropout"(%x) <{operandSegmentSizes = array<i32: 1, 0, 0>}> : (tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<?x8xi1>)
  %ratio = tsr.Constant dense<0.5> : tensor<f32>
  %false = tsr.Constant dense<false> : tensor<i1>
  %b:2 = "tsr.Dropout"(%y, %ratio, %false) <{operandSegmentSizes = array<i32: 1, 1, 1>}> : (tensor<2x8xf32>, tensor<f32>, tensor<i1>) -> (tensor<2x8xf32>, tensor<2x8xi1>)
  %zero = tsr.Constant dense<0.0> : tensor<f32>
  %true = tsr.Constant dense<true> : tensor<i1>
  %c:2 = "tsr.Dropout"(%y, %zero, %true) <{operandSegmentSizes = array<i32: 1, 1, 1>}> : (tensor<2x8xf32>, tensor<f32>, tensor<i1>) -> (tensor<2x8xf32>, tensor<2x8xi1>)
  return %a#0, %b#0, %b#1, %c#0 : tensor<?x8xf32>, tensor<2x8xf32>, tensor<2x8xi1>, tensor<2x8xf32>
}

// -----

// Training Dropout stays, and so does an inference Dropout whose mask, used, has the batch dim.
// CHECK-LABEL: func.func @dropout_kept
// CHECK: "tsr.Dropout"
// CHECK: "tsr.Dropout"
func.func @dropout_kept(%x: tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xi1>) {
  %ratio = tsr.Constant dense<0.5> : tensor<f32>
  %true = tsr.Constant dense<true> : tensor<i1>
  %a:2 = "tsr.Dropout"(%x, %ratio, %true) <{operandSegmentSizes = array<i32: 1, 1, 1>}> : (tensor<?x8xf32>, tensor<f32>, tensor<i1>) -> (tensor<?x8xf32>, tensor<?x8xi1>)
  %b:2 = "tsr.Dropout"(%x) <{operandSegmentSizes = array<i32: 1, 0, 0>}> : (tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<?x8xi1>)
  return %a#0, %b#0, %b#1 : tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xi1>
}

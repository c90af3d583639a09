// tsr-constant-fold: ops whose operands are all constants are evaluated with the reference
// kernels; Shape and Size fold from static types.
// RUN: tessera-opt %s --tsr-constant-fold --split-input-file | FileCheck %s
// RUN: tessera-opt %s --tsr-constant-fold=max-elements=4 --split-input-file | FileCheck %s --check-prefix=LIMIT

// ONNX-style shape arithmetic on an input with a batch dim: the dims after the batch are static,
// so Shape(x)[1:] folds and the whole chain becomes one constant. Shape(x) itself reads the
// batch dim and Size(x) counts it: both stay.
// CHECK-LABEL: func.func @shape_arithmetic
// CHECK-SAME: (%[[X:.*]]: tensor<?x3x4xf32>)
// CHECK-DAG: %[[C:.*]] = tsr.Constant dense<[-1, 12]> : tensor<2xi64>
// CHECK-DAG: %[[FULL:.*]] = tsr.Shape %[[X]] : (tensor<?x3x4xf32>) -> tensor<3xi64>
// CHECK-DAG: %[[SIZE:.*]] = tsr.Size %[[X]]
// CHECK-NOT: tsr.Gather
// CHECK-NOT: tsr.Concat
// CHECK: return %[[C]], %[[FULL]], %[[SIZE]]
func.func @shape_arithmetic(%x: tensor<?x3x4xf32>) -> (tensor<2xi64>, tensor<3xi64>, tensor<i64>) {
  %s = tsr.Shape %x {start = 1 : i64} : (tensor<?x3x4xf32>) -> tensor<2xi64>
  %i0 = tsr.Constant dense<[0]> : tensor<1xi64>
  %i1 = tsr.Constant dense<[1]> : tensor<1xi64>
  %a = tsr.Gather %s, %i0 {axis = 0 : i64} : (tensor<2xi64>, tensor<1xi64>) -> tensor<1xi64>
  %b = tsr.Gather %s, %i1 {axis = 0 : i64} : (tensor<2xi64>, tensor<1xi64>) -> tensor<1xi64>
  %m = tsr.Mul %a, %b : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
  %neg = tsr.Constant dense<[-1]> : tensor<1xi64>
  %cat = tsr.Concat %neg, %m {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  %full = tsr.Shape %x : (tensor<?x3x4xf32>) -> tensor<3xi64>
  %n = tsr.Size %x : (tensor<?x3x4xf32>) -> tensor<i64>
  return %cat, %full, %n : tensor<2xi64>, tensor<3xi64>, tensor<i64>
}

// -----

// Size of a static tensor folds (the tensor is not read).
// CHECK-LABEL: func.func @static_size
// CHECK-NEXT: %[[N:.*]] = tsr.Constant dense<6> : tensor<i64>
// CHECK-NEXT: return %[[N]]
func.func @static_size(%x: tensor<2x3xf32>) -> tensor<i64> {
  %n = tsr.Size %x : (tensor<2x3xf32>) -> tensor<i64>
  return %n : tensor<i64>
}

// -----

// BatchNorm parameters: sqrt(var + eps) folds; the unused inputs disappear with it.
// CHECK-LABEL: func.func @batchnorm_std
// CHECK-NEXT: %[[S:.*]] = tsr.Constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK-NEXT: return %[[S]]
func.func @batchnorm_std() -> tensor<2xf32> {
  %var = tsr.Constant dense<[0.99, 3.99]> : tensor<2xf32>
  %eps = tsr.Constant dense<0.01> : tensor<f32>
  %sum = tsr.Add %var, %eps : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
  %std = tsr.Sqrt %sum : (tensor<2xf32>) -> tensor<2xf32>
  return %std : tensor<2xf32>
}

// -----

// A weight transpose and a cast fold; the MatMul reading a function argument stays.
// With max-elements=4 the transposed weight (6 elements) is left alone, while the 2-element
// cast still folds.
// CHECK-LABEL: func.func @weight_transpose
// CHECK-SAME: (%[[X:.*]]: tensor<?x3xf32>)
// CHECK: %[[WT:.*]] = tsr.Constant dense<{{\[\[}}1.000000e+00, 4.000000e+00], [2.000000e+00, 5.000000e+00], [3.000000e+00, 6.000000e+00]]> : tensor<3x2xf32>
// CHECK: %[[Y:.*]] = tsr.MatMul %[[X]], %[[WT]]
// CHECK: %[[C:.*]] = tsr.Constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK: tsr.Add %[[Y]], %[[C]]
// LIMIT-LABEL: func.func @weight_transpose
// LIMIT: tsr.Transpose
// LIMIT-NOT: tsr.Cast
func.func @weight_transpose(%x: tensor<?x3xf32>) -> tensor<?x2xf32> {
  %w = tsr.Constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %wt = tsr.Transpose %w : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %y = tsr.MatMul %x, %wt : (tensor<?x3xf32>, tensor<3x2xf32>) -> tensor<?x2xf32>
  %bi = tsr.Constant dense<[1, 2]> : tensor<2xi64>
  %b = tsr.Cast %bi {to = f32} : (tensor<2xi64>) -> tensor<2xf32>
  %z = tsr.Add %y, %b : (tensor<?x2xf32>, tensor<2xf32>) -> tensor<?x2xf32>
  return %z : tensor<?x2xf32>
}

// -----

// An op with several results folds into one constant each.
// CHECK-LABEL: func.func @top_k
// CHECK-DAG: %[[V:.*]] = tsr.Constant dense<[5.000000e+00, 4.000000e+00]> : tensor<2xf32>
// CHECK-DAG: %[[I:.*]] = tsr.Constant dense<[2, 0]> : tensor<2xi64>
// CHECK-NOT: tsr.TopK
// CHECK: return %[[V]], %[[I]]
func.func @top_k() -> (tensor<2xf32>, tensor<2xi64>) {
  %x = tsr.Constant dense<[4.0, 1.0, 5.0, 3.0]> : tensor<4xf32>
  %k = tsr.Constant dense<[2]> : tensor<1xi64>
  %v, %i = tsr.TopK %x, %k : (tensor<4xf32>, tensor<1xi64>) -> (tensor<2xf32>, tensor<2xi64>)
  return %v, %i : tensor<2xf32>, tensor<2xi64>
}

// -----

// Not folded: an operand that is not a constant, a stateful op (Dropout draws randomness; it
// is not Pure), and a Variable (state).
// CHECK-LABEL: func.func @not_foldable
// CHECK: tsr.Add
// CHECK: tsr.Variable
// CHECK: "tsr.Dropout"
func.func @not_foldable(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) {
  %c = tsr.Constant dense<[1.0, 2.0]> : tensor<2xf32>
  %a = tsr.Add %x, %c : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %v = tsr.Variable {dtype = f32, shape = array<i64: 2>, initializer = "zeros"} : () -> tensor<2xf32>
  %ratio = tsr.Constant dense<0.5> : tensor<f32>
  %train = tsr.Constant dense<true> : tensor<i1>
  %d:2 = "tsr.Dropout"(%c, %ratio, %train) <{operandSegmentSizes = array<i32: 1, 1, 1>}> : (tensor<2xf32>, tensor<f32>, tensor<i1>) -> (tensor<2xf32>, tensor<2xi1>)
  return %a, %v, %d#0 : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
}

// -----

// A kernel that fails (an index out of range, which the shape function cannot see) leaves the
// op alone: folding is never an error.
// CHECK-LABEL: func.func @kernel_error
// CHECK: tsr.Gather
func.func @kernel_error() -> tensor<1xf32> {
  %x = tsr.Constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %i = tsr.Constant dense<[7]> : tensor<1xi64>
  %g = tsr.Gather %x, %i {axis = 0 : i64} : (tensor<3xf32>, tensor<1xi64>) -> tensor<1xf32>
  return %g : tensor<1xf32>
}

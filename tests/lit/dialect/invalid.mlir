// The verifier: ODS type constraints, then the registry's shape function through the shared
// verifier, and the reserved attributes.
// RUN: tessera-opt %s -split-input-file -verify-diagnostics

func.func @wrong_result_shape(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x5xf32> {
  // expected-error @+1 {{'tsr.MatMul' op result 0 has type 'tensor<2x5xf32>' but the op registry infers 'tensor<2x4xf32>' (f32[2,4])}}
  %c = tsr.MatMul %a, %b : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x5xf32>
  return %c : tensor<2x5xf32>
}

// -----

func.func @mismatched_operands(%a: tensor<2x3xf32>, %b: tensor<4x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{'tsr.MatMul' op node 'MatMul' (MatMul): A [2,3] and B [4,4] cannot be multiplied: the contraction dimension is 3 in A but 4 in B}}
  %c = tsr.MatMul %a, %b : (tensor<2x3xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  return %c : tensor<2x4xf32>
}

// -----

func.func @dtype_outside_constraint(%a: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{'tsr.Sqrt' op operand #0 must be ranked tensor of 32-bit float or 64-bit float or 16-bit float or bfloat16 type values}}
  %r = tsr.Sqrt %a : (tensor<4xi32>) -> tensor<4xi32>
  return %r : tensor<4xi32>
}

// -----

func.func @type_variable_binds_one_dtype(%a: tensor<4xf32>, %b: tensor<4xf64>) -> tensor<4xf32> {
  // expected-error @+1 {{'tsr.Add' op}}
  %r = tsr.Add %a, %b : (tensor<4xf32>, tensor<4xf64>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

func.func @bad_attribute_value(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'tsr.Softmax' op}}
  %r = tsr.Softmax %a {axis = 5 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// -----

func.func @bad_device(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'tsr.device' must be a string "<cpu|gpu>:<index>"}}
  %r = tsr.Relu %a {tsr.device = "tpu"} : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

func.func @bad_sharding(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{splits two dimensions along mesh axis 0}}
  %r = tsr.Relu %a {tsr.sharding = [array<i64: 0, 0>]} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

func.func @unknown_op(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{custom op 'tsr.NoSuchOp' is unknown}}
  %r = tsr.NoSuchOp %a : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

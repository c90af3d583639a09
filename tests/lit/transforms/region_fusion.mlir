// tsr-fuse-regions: elementwise chains and reductions with their elementwise producers and
// consumers become tsr.Fusion ops; everything else stays a library kernel.
// RUN: tessera-opt %s --tsr-fuse-regions --split-input-file | FileCheck %s

// A chain of elementwise ops is one loop fusion; the splat constant is cloned inside, the
// function arguments are its inputs.
// CHECK-LABEL: func.func @elementwise_chain
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<8xf32>)
// CHECK-NEXT: %[[F:.*]] = tsr.Fusion "loop"(%[[X]], %[[B]]) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT: ^bb0(%[[A0:.*]]: tensor<4x8xf32>, %[[A1:.*]]: tensor<8xf32>):
// CHECK-NEXT: %[[C:.*]] = tsr.Constant dense<2.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[S:.*]] = tsr.Add %[[A0]], %[[A1]]
// CHECK-NEXT: %[[R:.*]] = tsr.Relu %[[S]]
// CHECK-NEXT: %[[M:.*]] = tsr.Mul %[[R]], %[[C]]
// CHECK-NEXT: tsr.Yield %[[M]] : tensor<4x8xf32>
// CHECK-NEXT: }
// CHECK-NEXT: return %[[F]]
func.func @elementwise_chain(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %two = tsr.Constant dense<2.0> : tensor<f32>
  %0 = tsr.Add %x, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %1 = tsr.Relu %0 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = tsr.Mul %1, %two : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}

// -----

// A value also read by a library kernel (MatMul) becomes a second result.
// CHECK-LABEL: func.func @multi_output
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[Y:.*]]: tensor<4x8xf32>, %[[W:.*]]: tensor<8x8xf32>)
// CHECK-NEXT: %[[F:.*]]:2 = tsr.Fusion "loop"(%[[X]], %[[Y]])
// CHECK: %[[S:.*]] = tsr.Add
// CHECK-NEXT: %[[E:.*]] = tsr.Exp %[[S]]
// CHECK-NEXT: tsr.Yield %[[S]], %[[E]]
// CHECK: %[[M:.*]] = tsr.MatMul %[[F]]#0, %[[W]]
// CHECK-NEXT: return %[[M]], %[[F]]#1
func.func @multi_output(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = tsr.Add %x, %y : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = tsr.MatMul %0, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %2 = tsr.Exp %0 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %1, %2 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Add reads Relu directly and through MatMul: fusing them would make a cycle through MatMul.
// CHECK-LABEL: func.func @no_cycle
// CHECK-NEXT: %[[R:.*]] = tsr.Fusion "loop"(%{{.*}}) : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK: tsr.Relu
// CHECK-NEXT: tsr.Yield
// CHECK: %[[M:.*]] = tsr.MatMul %[[R]],
// CHECK-NEXT: %[[A:.*]] = tsr.Fusion "loop"(%[[R]], %[[M]])
// CHECK: tsr.Add
// CHECK-NEXT: tsr.Yield
// CHECK: return %[[A]]
func.func @no_cycle(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %0 = tsr.Relu %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = tsr.MatMul %0, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %2 = tsr.Add %0, %1 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}

// -----

// Attention scores: Softmax(scores * scale + mask) is one reduction fusion (input fusion).
// CHECK-LABEL: func.func @softmax_scale_mask
// CHECK-SAME: (%[[S:.*]]: tensor<2x4x16x16xf32>, %[[MASK:.*]]: tensor<1x1x16x16xf32>)
// CHECK-NEXT: %[[F:.*]] = tsr.Fusion "reduction"(%[[S]], %[[MASK]])
// CHECK-NEXT: ^bb0(%[[A0:.*]]: tensor<2x4x16x16xf32>, %[[A1:.*]]: tensor<1x1x16x16xf32>):
// CHECK-NEXT: %[[C:.*]] = tsr.Constant dense<1.250000e-01> : tensor<f32>
// CHECK-NEXT: %[[M:.*]] = tsr.Mul %[[A0]], %[[C]]
// CHECK-NEXT: %[[A:.*]] = tsr.Add %[[M]], %[[A1]]
// CHECK-NEXT: %[[P:.*]] = tsr.Softmax %[[A]]
// CHECK-NEXT: tsr.Yield %[[P]]
// CHECK-NEXT: }
// CHECK-NEXT: return %[[F]]
func.func @softmax_scale_mask(%s: tensor<2x4x16x16xf32>, %mask: tensor<1x1x16x16xf32>) -> tensor<2x4x16x16xf32> {
  %scale = tsr.Constant dense<0.125> : tensor<f32>
  %0 = tsr.Mul %s, %scale : (tensor<2x4x16x16xf32>, tensor<f32>) -> tensor<2x4x16x16xf32>
  %1 = tsr.Add %0, %mask : (tensor<2x4x16x16xf32>, tensor<1x1x16x16xf32>) -> tensor<2x4x16x16xf32>
  %2 = tsr.Softmax %1 {axis = -1 : i64} : (tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
  return %2 : tensor<2x4x16x16xf32>
}

// -----

// The residual add feeds LayerNormalization and is itself returned (the residual stream); the
// Mul and Add after the normalization keep its shape and join. The 65-element constant is an
// input, the 64-element scale is cloned.
// CHECK-LABEL: func.func @layernorm_residual
// CHECK-SAME: (%[[X:.*]]: tensor<2x65xf32>, %[[R:.*]]: tensor<2x65xf32>, %[[SCALE:.*]]: tensor<65xf32>)
// CHECK-NEXT: %[[BIAS:.*]] = tsr.Constant dense<[0.000000e+00, 5.000000e-01
// CHECK-NEXT: %[[F:.*]]:2 = tsr.Fusion "reduction"(%[[X]], %[[R]], %[[SCALE]], %[[BIAS]])
// CHECK-NEXT: ^bb0(%[[A0:.*]]: tensor<2x65xf32>, %[[A1:.*]]: tensor<2x65xf32>, %[[A2:.*]]: tensor<65xf32>, %[[A3:.*]]: tensor<65xf32>):
// CHECK-NEXT: %[[G:.*]] = tsr.Constant dense<1.500000e+00> : tensor<65xf32>
// CHECK-NEXT: %[[H:.*]] = tsr.Add %[[A0]], %[[A1]]
// CHECK-NEXT: %[[Y:.*]], %{{.*}}, %{{.*}} = tsr.LayerNormalization %[[H]], %[[A2]], %[[A3]]
// CHECK-NEXT: %[[M:.*]] = tsr.Mul %[[Y]], %[[G]]
// CHECK-NEXT: %[[O:.*]] = tsr.Add %[[M]], %[[A3]]
// CHECK-NEXT: tsr.Yield %[[H]], %[[O]]
// CHECK-NEXT: }
// CHECK-NEXT: return %[[F]]#0, %[[F]]#1
func.func @layernorm_residual(%x: tensor<2x65xf32>, %r: tensor<2x65xf32>, %scale: tensor<65xf32>) -> (tensor<2x65xf32>, tensor<2x65xf32>) {
  %bias = tsr.Constant dense<[0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 5.5, 6.0, 6.5, 7.0, 7.5, 8.0, 8.5, 9.0, 9.5, 10.0, 10.5, 11.0, 11.5, 12.0, 12.5, 13.0, 13.5, 14.0, 14.5, 15.0, 15.5, 16.0, 16.5, 17.0, 17.5, 18.0, 18.5, 19.0, 19.5, 20.0, 20.5, 21.0, 21.5, 22.0, 22.5, 23.0, 23.5, 24.0, 24.5, 25.0, 25.5, 26.0, 26.5, 27.0, 27.5, 28.0, 28.5, 29.0, 29.5, 30.0, 30.5, 31.0, 31.5, 32.0]> : tensor<65xf32>
  %g = tsr.Constant dense<1.5> : tensor<65xf32>
  %h = tsr.Add %x, %r : (tensor<2x65xf32>, tensor<2x65xf32>) -> tensor<2x65xf32>
  %y, %mean, %inv = tsr.LayerNormalization %h, %scale, %bias {axis = -1 : i64} : (tensor<2x65xf32>, tensor<65xf32>, tensor<65xf32>) -> (tensor<2x65xf32>, tensor<2x1xf32>, tensor<2x1xf32>)
  %0 = tsr.Mul %y, %g : (tensor<2x65xf32>, tensor<65xf32>) -> tensor<2x65xf32>
  %1 = tsr.Add %0, %bias : (tensor<2x65xf32>, tensor<65xf32>) -> tensor<2x65xf32>
  return %h, %1 : tensor<2x65xf32>, tensor<2x65xf32>
}

// -----

// Two reductions never share a fusion; the cheap Relu they both read is recomputed in each
// instead of being written out.
// CHECK-LABEL: func.func @two_reductions_recompute
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK-NEXT: %[[S:.*]] = tsr.Fusion "reduction"(%[[X]]) : (tensor<4x8xf32>) -> tensor<4x1xf32>
// CHECK: tsr.Relu
// CHECK-NEXT: tsr.ReduceSum
// CHECK-NEXT: tsr.Yield
// CHECK: %[[M:.*]] = tsr.Fusion "reduction"(%[[X]]) : (tensor<4x8xf32>) -> tensor<4x1xf32>
// CHECK: tsr.Relu
// CHECK-NEXT: tsr.ReduceMax
// CHECK-NEXT: tsr.Yield
// CHECK: return %[[S]], %[[M]]
func.func @two_reductions_recompute(%x: tensor<4x8xf32>) -> (tensor<4x1xf32>, tensor<4x1xf32>) {
  %axes = tsr.Constant dense<[1]> : tensor<1xi64>
  %0 = tsr.Relu %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = tsr.ReduceSum %0, %axes : (tensor<4x8xf32>, tensor<1xi64>) -> tensor<4x1xf32>
  %2 = tsr.ReduceMax %0, %axes : (tensor<4x8xf32>, tensor<1xi64>) -> tensor<4x1xf32>
  return %1, %2 : tensor<4x1xf32>, tensor<4x1xf32>
}

// -----

// An expensive producer (Exp) read by two reductions is computed once and becomes a result.
// After a reduction, only ops of the reduced shape join: x - mean runs in its own loop fusion.
// CHECK-LABEL: func.func @reduction_shapes
// CHECK-NEXT: %[[E:.*]]:2 = tsr.Fusion "reduction"(%{{.*}}) : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x1xf32>)
// CHECK: tsr.Exp
// CHECK-NEXT: tsr.ReduceMean
// CHECK-NEXT: tsr.Sqrt
// CHECK-NEXT: tsr.Yield
// CHECK: %[[M:.*]]:2 = tsr.Fusion "reduction"(%[[E]]#0, %[[E]]#1)
// CHECK: tsr.ReduceMax
// CHECK-NEXT: tsr.Add
// CHECK-NEXT: tsr.Yield
// CHECK: %[[D:.*]] = tsr.Fusion "loop"(%[[E]]#0, %[[M]]#0)
// CHECK: tsr.Sub
// CHECK-NEXT: tsr.Yield
// CHECK: return %[[M]]#1, %[[D]]
func.func @reduction_shapes(%x: tensor<4x8xf32>) -> (tensor<4x1xf32>, tensor<4x8xf32>) {
  %axes = tsr.Constant dense<[1]> : tensor<1xi64>
  %0 = tsr.Exp %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = tsr.ReduceMean %0, %axes : (tensor<4x8xf32>, tensor<1xi64>) -> tensor<4x1xf32>
  %2 = tsr.Sqrt %1 : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %3 = tsr.ReduceMax %0, %axes : (tensor<4x8xf32>, tensor<1xi64>) -> tensor<4x1xf32>
  %4 = tsr.Sub %0, %3 : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %5 = tsr.Add %2, %3 : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  return %5, %4 : tensor<4x1xf32>, tensor<4x8xf32>
}

// -----

// Not fused: library ops (MatMul, Transpose), f64 and dynamic shapes, a lone Reshape, a
// LayerNormalization whose Mean is used, an op on another device.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: tsr.Fusion
func.func @left_alone(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>, %d: tensor<4xf64>, %n: tensor<?x8xf32>, %s: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4xf64>, tensor<?x8xf32>, tensor<32xf32>, tensor<4x1xf32>, tensor<8x4xf32>) {
  %shape = tsr.Constant dense<[32]> : tensor<1xi64>
  %0 = tsr.MatMul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %1 = tsr.Exp %d : (tensor<4xf64>) -> tensor<4xf64>
  %2 = tsr.Relu %n : (tensor<?x8xf32>) -> tensor<?x8xf32>
  %3 = tsr.Reshape %x, %shape : (tensor<4x8xf32>, tensor<1xi64>) -> tensor<32xf32>
  %y, %mean, %inv = tsr.LayerNormalization %x, %s : (tensor<4x8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x1xf32>)
  %4 = tsr.Transpose %0 : (tensor<4x8xf32>) -> tensor<8x4xf32>
  return %y, %1, %2, %3, %mean, %4 : tensor<4x8xf32>, tensor<4xf64>, tensor<?x8xf32>, tensor<32xf32>, tensor<4x1xf32>, tensor<8x4xf32>
}

// -----

// Ops placed on different devices are not fused together; the fusion keeps the device.
// CHECK-LABEL: func.func @devices
// CHECK-NEXT: %[[R:.*]] = tsr.Fusion "loop"(%{{.*}}) {tsr.device = "cpu:0"}
// CHECK: tsr.Relu
// CHECK: tsr.Fusion "loop"(%[[R]]) {tsr.device = "cpu:1"}
// CHECK: tsr.Exp
func.func @devices(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tsr.Relu %x {tsr.device = "cpu:0"} : (tensor<4xf32>) -> tensor<4xf32>
  %1 = tsr.Exp %0 {tsr.device = "cpu:1"} : (tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}

// tsr-fuse-epilogues: bias adds, residual adds and activations after Conv / MatMul / Gemm
// become one FusedConv / FusedMatMul named after its parts.
// RUN: tessera-opt %s --tsr-fuse-epilogues --split-input-file | FileCheck %s
// RUN: tessera-opt %s --tsr-fuse-epilogues --split-input-file --mlir-print-debuginfo | FileCheck %s --check-prefix=LOC

// Conv + per-channel constant bias ([M,1,1]) + Relu.
// CHECK-LABEL: func.func @conv_bias_relu
// CHECK-SAME: (%[[X:.*]]: tensor<1x2x5x5xf32>, %[[W:.*]]: tensor<3x2x3x3xf32>)
// CHECK-NEXT: %[[B:.*]] = tsr.Constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<3xf32>
// CHECK-NEXT: %[[Y:.*]] = "tsr.FusedConv"(%[[X]], %[[W]], %[[B]]) <{activation = "Relu",
// CHECK-SAME: kernel_shape = array<i64: 3, 3>
// CHECK-SAME: operandSegmentSizes = array<i32: 1, 1, 1, 0>
// CHECK-NEXT: return %[[Y]]
// The fused op is named after its parts, which its location lists.
// LOC-LABEL: func.func @conv_bias_relu
// LOC: "tsr.FusedConv"{{.*}} loc(#[[L:loc[0-9]+]])
// LOC-DAG: #[[F:loc[0-9]+]] = loc(fused<"epilogue">[#{{loc[0-9]+}}, #{{loc[0-9]+}}, #{{loc[0-9]+}}])
// LOC-DAG: #[[L]] = loc("conv1+add1+relu1"(#[[F]]))
func.func @conv_bias_relu(%x: tensor<1x2x5x5xf32>, %w: tensor<3x2x3x3xf32>) -> tensor<1x3x3x3xf32> {
  %b = tsr.Constant dense<[[[1.0]], [[2.0]], [[3.0]]]> : tensor<3x1x1xf32> loc("b")
  %0 = tsr.Conv %x, %w {kernel_shape = array<i64: 3, 3>} : (tensor<1x2x5x5xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x3x3xf32> loc("conv1")
  %1 = tsr.Add %0, %b : (tensor<1x3x3x3xf32>, tensor<3x1x1xf32>) -> tensor<1x3x3x3xf32> loc("add1")
  %2 = tsr.Relu %1 : (tensor<1x3x3x3xf32>) -> tensor<1x3x3x3xf32> loc("relu1")
  return %2 : tensor<1x3x3x3xf32>
}

// -----

// The Conv's own constant bias and a [1,M,1,1] add are summed; a scalar add counts too.
// CHECK-LABEL: func.func @conv_bias_sum
// CHECK-NEXT: %[[B:.*]] = tsr.Constant dense<[1.150000e+01, 2.250000e+01, 3.350000e+01]> : tensor<3xf32>
// CHECK-NEXT: %[[Y:.*]] = "tsr.FusedConv"(%{{.*}}, %{{.*}}, %[[B]]) <{activation = "None",
// CHECK-NEXT: return %[[Y]]
func.func @conv_bias_sum(%x: tensor<1x2x5x5xf32>, %w: tensor<3x2x3x3xf32>) -> tensor<1x3x3x3xf32> {
  %b0 = tsr.Constant dense<[10.0, 20.0, 30.0]> : tensor<3xf32>
  %b1 = tsr.Constant dense<[[[[1.0]], [[2.0]], [[3.0]]]]> : tensor<1x3x1x1xf32>
  %s = tsr.Constant dense<0.5> : tensor<f32>
  %0 = tsr.Conv %x, %w, %b0 {kernel_shape = array<i64: 3, 3>} : (tensor<1x2x5x5xf32>, tensor<3x2x3x3xf32>, tensor<3xf32>) -> tensor<1x3x3x3xf32>
  %1 = tsr.Add %b1, %0 : (tensor<1x3x1x1xf32>, tensor<1x3x3x3xf32>) -> tensor<1x3x3x3xf32>
  %2 = tsr.Add %1, %s : (tensor<1x3x3x3xf32>, tensor<f32>) -> tensor<1x3x3x3xf32>
  return %2 : tensor<1x3x3x3xf32>
}

// -----

// A ResNet basic block after BatchNorm folding: conv + bias + relu, then conv + bias + the
// identity shortcut + relu (Z is added before the activation).
// CHECK-LABEL: func.func @resnet_basic_block
// CHECK-SAME: (%[[X:.*]]: tensor<1x4x6x6xf32>, %[[W1:.*]]: tensor<4x4x3x3xf32>, %[[W2:.*]]: tensor<4x4x3x3xf32>)
// CHECK-NOT: tsr.Add
// CHECK: %[[Y1:.*]] = "tsr.FusedConv"(%[[X]], %[[W1]], %{{.*}}) <{activation = "Relu"
// CHECK-SAME: operandSegmentSizes = array<i32: 1, 1, 1, 0>
// CHECK: %[[Y2:.*]] = "tsr.FusedConv"(%[[Y1]], %[[W2]], %{{.*}}, %[[X]]) <{activation = "Relu"
// CHECK-SAME: operandSegmentSizes = array<i32: 1, 1, 1, 1>
// CHECK-NEXT: return %[[Y2]]
// LOC-LABEL: func.func @resnet_basic_block
// LOC-DAG: loc("conv1+bn1+relu1"
// LOC-DAG: loc("conv2+bn2+shortcut+relu2"
func.func @resnet_basic_block(%x: tensor<1x4x6x6xf32>, %w1: tensor<4x4x3x3xf32>, %w2: tensor<4x4x3x3xf32>) -> tensor<1x4x6x6xf32> {
  %b1 = tsr.Constant dense<[[[0.1]], [[0.2]], [[0.3]], [[0.4]]]> : tensor<4x1x1xf32>
  %b2 = tsr.Constant dense<[[[0.5]], [[0.6]], [[0.7]], [[0.8]]]> : tensor<4x1x1xf32>
  %0 = tsr.Conv %x, %w1 {kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x6x6xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x6x6xf32> loc("conv1")
  %1 = tsr.Add %0, %b1 : (tensor<1x4x6x6xf32>, tensor<4x1x1xf32>) -> tensor<1x4x6x6xf32> loc("bn1")
  %2 = tsr.Relu %1 : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32> loc("relu1")
  %3 = tsr.Conv %2, %w2 {kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x6x6xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x6x6xf32> loc("conv2")
  %4 = tsr.Add %3, %b2 : (tensor<1x4x6x6xf32>, tensor<4x1x1xf32>) -> tensor<1x4x6x6xf32> loc("bn2")
  %5 = tsr.Add %x, %4 : (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32> loc("shortcut")
  %6 = tsr.Relu %5 : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32> loc("relu2")
  return %6 : tensor<1x4x6x6xf32>
}

// -----

// The GPT-2 block's MLP: MatMul + bias + Gelu, then MatMul + bias + the residual. Gelu stays
// an op (tsr-fuse-regions generates it faster than the fused kernels apply it).
// CHECK-LABEL: func.func @gpt2_mlp
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x16xf32>, %[[W1:.*]]: tensor<16x64xf32>, %[[W2:.*]]: tensor<64x16xf32>)
// CHECK-NEXT: %[[B1:.*]] = tsr.Constant dense<2.500000e-01> : tensor<64xf32>
// CHECK-NEXT: %[[F:.*]] = "tsr.FusedMatMul"(%[[X]], %[[W1]], %[[B1]]) <{activation = "None"
// CHECK-NEXT: %[[H:.*]] = tsr.Gelu %[[F]]
// CHECK-NEXT: %[[B2:.*]] = tsr.Constant dense<-5.000000e-01> : tensor<16xf32>
// CHECK-NEXT: %[[Y:.*]] = "tsr.FusedMatMul"(%[[H]], %[[W2]], %[[B2]], %[[X]]) <{activation = "None"
// CHECK-SAME: operandSegmentSizes = array<i32: 1, 1, 1, 1>
// CHECK-NEXT: return %[[Y]]
func.func @gpt2_mlp(%x: tensor<2x8x16xf32>, %w1: tensor<16x64xf32>, %w2: tensor<64x16xf32>) -> tensor<2x8x16xf32> {
  %b1 = tsr.Constant dense<0.25> : tensor<64xf32>
  %b2 = tsr.Constant dense<-0.5> : tensor<16xf32>
  %0 = tsr.MatMul %x, %w1 : (tensor<2x8x16xf32>, tensor<16x64xf32>) -> tensor<2x8x64xf32> loc("fc")
  %1 = tsr.Add %0, %b1 : (tensor<2x8x64xf32>, tensor<64xf32>) -> tensor<2x8x64xf32> loc("fc_bias")
  %2 = tsr.Gelu %1 : (tensor<2x8x64xf32>) -> tensor<2x8x64xf32> loc("gelu")
  %3 = tsr.MatMul %2, %w2 : (tensor<2x8x64xf32>, tensor<64x16xf32>) -> tensor<2x8x16xf32> loc("proj")
  %4 = tsr.Add %3, %b2 : (tensor<2x8x16xf32>, tensor<16xf32>) -> tensor<2x8x16xf32> loc("proj_bias")
  %5 = tsr.Add %4, %x : (tensor<2x8x16xf32>, tensor<2x8x16xf32>) -> tensor<2x8x16xf32> loc("residual")
  return %5 : tensor<2x8x16xf32>
}

// -----

// Gemm with transB and a [N] C is a FusedMatMul with transpose_b; a non-constant [N] bias of
// a MatMul becomes its bias operand; LeakyRelu and Clip keep their parameters.
// CHECK-LABEL: func.func @gemm_and_activations
// CHECK-SAME: (%[[A:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<16x8xf32>, %[[C:.*]]: tensor<16xf32>, %[[W:.*]]: tensor<16x16xf32>, %[[V:.*]]: tensor<16xf32>)
// CHECK-NEXT: %[[G:.*]] = "tsr.FusedMatMul"(%[[A]], %[[B]], %[[C]]) <{activation = "LeakyRelu", alpha = 2.000000e-01 : f64
// CHECK-SAME: transpose_b = 1 : i64
// CHECK-NEXT: %[[M:.*]] = "tsr.FusedMatMul"(%[[G]], %[[W]], %[[V]]) <{activation = "Clip"
// CHECK-SAME: max = 6.000000e+00 : f64, min = 0.000000e+00 : f64
// CHECK-NEXT: return %[[G]], %[[M]]
func.func @gemm_and_activations(%a: tensor<4x8xf32>, %b: tensor<16x8xf32>, %c: tensor<16xf32>, %w: tensor<16x16xf32>, %v: tensor<16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>) {
  %lo = tsr.Constant dense<0.0> : tensor<f32>
  %hi = tsr.Constant dense<6.0> : tensor<f32>
  %0 = tsr.Gemm %a, %b, %c {transB = 1 : i64} : (tensor<4x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %1 = tsr.LeakyRelu %0 {alpha = 0.2 : f64} : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %2 = tsr.MatMul %1, %w : (tensor<4x16xf32>, tensor<16x16xf32>) -> tensor<4x16xf32>
  %3 = tsr.Add %v, %2 : (tensor<16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %4 = "tsr.Clip"(%3, %lo, %hi) <{operandSegmentSizes = array<i32: 1, 1, 1>}> : (tensor<4x16xf32>, tensor<f32>, tensor<f32>) -> tensor<4x16xf32>
  return %1, %4 : tensor<4x16xf32>, tensor<4x16xf32>
}

// -----

// Left alone: a Conv result with two uses, a non-constant [1,M,1,1] bias, a constant that
// varies along the width, tanh-approximated Gelu, an activation after an activation, a bias
// after an activation, Gemm with alpha != 1, a batched right operand, f16.
// CHECK-LABEL: func.func @left_alone
// CHECK: tsr.Conv
// CHECK-NEXT: tsr.Relu
// CHECK-NEXT: tsr.Conv
// CHECK-NEXT: tsr.Add
// CHECK-NEXT: tsr.Conv
// CHECK-NEXT: tsr.Add
// CHECK-NEXT: tsr.MatMul
// CHECK-NEXT: tsr.Gelu {{.*}} {approximate = "tanh"}
// The first Relu is absorbed, the Sigmoid after it and the Add after that are not.
// CHECK-NEXT: "tsr.FusedMatMul"{{.*}}activation = "Relu"
// CHECK-NEXT: tsr.Sigmoid
// CHECK-NEXT: tsr.Add
// CHECK-NEXT: tsr.Gemm
// CHECK-NEXT: tsr.Relu
// CHECK-NEXT: tsr.MatMul
// CHECK-NEXT: tsr.Relu
// CHECK-NEXT: tsr.MatMul
// CHECK-NEXT: tsr.Relu
// CHECK-NEXT: return
func.func @left_alone(%x: tensor<1x2x5x5xf32>, %w: tensor<3x2x3x3xf32>, %nb: tensor<1x3x1x1xf32>, %a: tensor<4x8xf32>, %b: tensor<8x16xf32>, %bb: tensor<2x8x16xf32>, %h: tensor<4x8xf16>, %hb: tensor<8x16xf16>) -> (tensor<1x3x3x3xf32>, tensor<1x3x3x3xf32>, tensor<1x3x3x3xf32>, tensor<1x3x3x3xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<2x4x16xf32>, tensor<4x16xf16>) {
  %wb = tsr.Constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %nb16 = tsr.Constant dense<1.0> : tensor<16xf32>
  %0 = tsr.Conv %x, %w {kernel_shape = array<i64: 3, 3>} : (tensor<1x2x5x5xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x3x3xf32>
  %1 = tsr.Relu %0 : (tensor<1x3x3x3xf32>) -> tensor<1x3x3x3xf32>
  %2 = tsr.Conv %x, %w {kernel_shape = array<i64: 3, 3>} : (tensor<1x2x5x5xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x3x3xf32>
  %3 = tsr.Add %2, %nb : (tensor<1x3x3x3xf32>, tensor<1x3x1x1xf32>) -> tensor<1x3x3x3xf32>
  %4 = tsr.Conv %x, %w {kernel_shape = array<i64: 3, 3>} : (tensor<1x2x5x5xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x3x3xf32>
  %5 = tsr.Add %4, %wb : (tensor<1x3x3x3xf32>, tensor<3xf32>) -> tensor<1x3x3x3xf32>
  %6 = tsr.MatMul %a, %b : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %7 = tsr.Gelu %6 {approximate = "tanh"} : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %8 = tsr.MatMul %a, %b : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %9 = tsr.Relu %8 : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %10 = tsr.Sigmoid %9 : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %11 = tsr.Add %10, %nb16 : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %12 = tsr.Gemm %a, %b {alpha = 2.0 : f64} : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %13 = tsr.Relu %12 : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %15 = tsr.MatMul %a, %bb : (tensor<4x8xf32>, tensor<2x8x16xf32>) -> tensor<2x4x16xf32>
  %16 = tsr.Relu %15 : (tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  %17 = tsr.MatMul %h, %hb : (tensor<4x8xf16>, tensor<8x16xf16>) -> tensor<4x16xf16>
  %18 = tsr.Relu %17 : (tensor<4x16xf16>) -> tensor<4x16xf16>
  return %0, %1, %3, %5, %7, %11, %13, %16, %18 : tensor<1x3x3x3xf32>, tensor<1x3x3x3xf32>, tensor<1x3x3x3xf32>, tensor<1x3x3x3xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<2x4x16xf32>, tensor<4x16xf16>
}

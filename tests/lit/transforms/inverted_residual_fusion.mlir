// tsr-fuse-inverted-residuals: an expand / depthwise / project chain of BlockedConv becomes
// one BlockedInvertedResidual when its expanded activations take at least 1 MiB per image.
// RUN: tessera-opt %s --tsr-activation-layout --tsr-fuse-inverted-residuals --split-input-file | FileCheck %s

// 64 channels at 64 x 64 (1 MiB): the three convolutions become one op with the stages'
// weights, bias and activations, the depthwise window, and the projection's residual.
// CHECK-LABEL: func.func @block
// CHECK: %[[A:.*]] = "tsr.BlockedConv"(%arg0, %{{.*}}) <{{.*}}input_blocked = 0
// CHECK-NEXT: %[[F:.*]] = "tsr.BlockedInvertedResidual"(%[[A]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[A]])
// CHECK-SAME: depthwise_activation = "Relu"
// CHECK-SAME: expand_activation = "Clip", expand_alpha = {{.*}}, expand_max = 6.000000e+00 : f64, expand_min = 0.000000e+00 : f64
// CHECK-SAME: operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 1, 0, 1>, pads = array<i64: 1, 1, 1, 1>
// CHECK-SAME: project_activation = "None"
// CHECK-SAME: -> tensor<1x1x64x64x16xf32>
// CHECK-NEXT: tsr.UnblockChannels %[[F]]
// CHECK-NOT: tsr.BlockedConv
func.func @block(%x: tensor<1x8x64x64xf32>) -> tensor<1x16x64x64xf32> {
  %w0 = tsr.Constant dense<0.5> : tensor<16x8x1x1xf32>
  %we = tsr.Constant dense<0.25> : tensor<64x16x1x1xf32>
  %be = tsr.Constant dense<0.125> : tensor<64xf32>
  %wd = tsr.Constant dense<0.25> : tensor<64x1x3x3xf32>
  %wp = tsr.Constant dense<0.125> : tensor<16x64x1x1xf32>
  %a = tsr.Conv %x, %w0 : (tensor<1x8x64x64xf32>, tensor<16x8x1x1xf32>) -> tensor<1x16x64x64xf32>
  %e = "tsr.FusedConv"(%a, %we, %be) <{activation = "Clip", min = 0.0 : f64, max = 6.0 : f64, operandSegmentSizes = array<i32: 1, 1, 1, 0>}> : (tensor<1x16x64x64xf32>, tensor<64x16x1x1xf32>, tensor<64xf32>) -> tensor<1x64x64x64xf32>
  %d = "tsr.FusedConv"(%e, %wd) <{activation = "Relu", group = 64 : i64, pads = array<i64: 1, 1, 1, 1>, operandSegmentSizes = array<i32: 1, 1, 0, 0>}> : (tensor<1x64x64x64xf32>, tensor<64x1x3x3xf32>) -> tensor<1x64x64x64xf32>
  %p = "tsr.FusedConv"(%d, %wp, %a) <{operandSegmentSizes = array<i32: 1, 1, 0, 1>}> : (tensor<1x64x64x64xf32>, tensor<16x64x1x1xf32>, tensor<1x16x64x64xf32>) -> tensor<1x16x64x64xf32>
  return %p : tensor<1x16x64x64xf32>
}

// -----

// At 16 x 16 the expanded activations (64 KiB) stay in cache anyway: nothing is fused.
// CHECK-LABEL: func.func @small
// CHECK-COUNT-4: tsr.BlockedConv
// CHECK-NOT: tsr.BlockedInvertedResidual
func.func @small(%x: tensor<1x8x16x16xf32>) -> tensor<1x16x16x16xf32> {
  %w0 = tsr.Constant dense<0.5> : tensor<16x8x1x1xf32>
  %we = tsr.Constant dense<0.25> : tensor<64x16x1x1xf32>
  %be = tsr.Constant dense<0.125> : tensor<64xf32>
  %wd = tsr.Constant dense<0.25> : tensor<64x1x3x3xf32>
  %wp = tsr.Constant dense<0.125> : tensor<16x64x1x1xf32>
  %a = tsr.Conv %x, %w0 : (tensor<1x8x16x16xf32>, tensor<16x8x1x1xf32>) -> tensor<1x16x16x16xf32>
  %e = "tsr.FusedConv"(%a, %we, %be) <{activation = "Clip", min = 0.0 : f64, max = 6.0 : f64, operandSegmentSizes = array<i32: 1, 1, 1, 0>}> : (tensor<1x16x16x16xf32>, tensor<64x16x1x1xf32>, tensor<64xf32>) -> tensor<1x64x16x16xf32>
  %d = "tsr.FusedConv"(%e, %wd) <{activation = "Relu", group = 64 : i64, pads = array<i64: 1, 1, 1, 1>, operandSegmentSizes = array<i32: 1, 1, 0, 0>}> : (tensor<1x64x16x16xf32>, tensor<64x1x3x3xf32>) -> tensor<1x64x16x16xf32>
  %p = "tsr.FusedConv"(%d, %wp, %a) <{operandSegmentSizes = array<i32: 1, 1, 0, 1>}> : (tensor<1x64x16x16xf32>, tensor<16x64x1x1xf32>, tensor<1x16x16x16xf32>) -> tensor<1x16x16x16xf32>
  return %p : tensor<1x16x16x16xf32>
}

// -----

// The depthwise result is also returned: it must be computed whole, nothing is fused.
// CHECK-LABEL: func.func @shared
// CHECK-COUNT-4: tsr.BlockedConv
// CHECK-NOT: tsr.BlockedInvertedResidual
func.func @shared(%x: tensor<1x8x64x64xf32>) -> (tensor<1x16x64x64xf32>, tensor<1x64x64x64xf32>) {
  %w0 = tsr.Constant dense<0.5> : tensor<16x8x1x1xf32>
  %we = tsr.Constant dense<0.25> : tensor<64x16x1x1xf32>
  %be = tsr.Constant dense<0.125> : tensor<64xf32>
  %wd = tsr.Constant dense<0.25> : tensor<64x1x3x3xf32>
  %wp = tsr.Constant dense<0.125> : tensor<16x64x1x1xf32>
  %a = tsr.Conv %x, %w0 : (tensor<1x8x64x64xf32>, tensor<16x8x1x1xf32>) -> tensor<1x16x64x64xf32>
  %e = "tsr.FusedConv"(%a, %we, %be) <{activation = "Clip", min = 0.0 : f64, max = 6.0 : f64, operandSegmentSizes = array<i32: 1, 1, 1, 0>}> : (tensor<1x16x64x64xf32>, tensor<64x16x1x1xf32>, tensor<64xf32>) -> tensor<1x64x64x64xf32>
  %d = "tsr.FusedConv"(%e, %wd) <{activation = "Relu", group = 64 : i64, pads = array<i64: 1, 1, 1, 1>, operandSegmentSizes = array<i32: 1, 1, 0, 0>}> : (tensor<1x64x64x64xf32>, tensor<64x1x3x3xf32>) -> tensor<1x64x64x64xf32>
  %p = "tsr.FusedConv"(%d, %wp, %a) <{operandSegmentSizes = array<i32: 1, 1, 0, 1>}> : (tensor<1x64x64x64xf32>, tensor<16x64x1x1xf32>, tensor<1x16x64x64xf32>) -> tensor<1x16x64x64xf32>
  return %p, %d : tensor<1x16x64x64xf32>, tensor<1x64x64x64xf32>
}

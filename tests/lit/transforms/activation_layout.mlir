// tsr-activation-layout: chains of convolutions become BlockedConv on [N, C/16, H, W, 16]
// activations, with layout changes only where values enter or leave the chain.
// RUN: tessera-opt %s --tsr-activation-layout --split-input-file | FileCheck %s

// A pointwise conv reading the plain input (input_blocked = 0), a depthwise conv and a
// pointwise conv with a residual reading the first one's blocked result; a Relu outside
// the chain reads the first result through one UnblockChannels, the function's result
// through another. 24 channels fill 3/4 of two blocks.
// CHECK-LABEL: func.func @chain
// CHECK: %[[A:.*]] = "tsr.BlockedConv"(%arg0, %{{.*}}) <{{.*}}input_blocked = 0 : i64{{.*}}> : (tensor<1x8x6x6xf32>, tensor<24x8x1x1xf32>) -> tensor<1x2x6x6x16xf32>
// CHECK-NEXT: %[[AU:.*]] = tsr.UnblockChannels %[[A]] {channels = 24 : i64} : (tensor<1x2x6x6x16xf32>) -> tensor<1x24x6x6xf32>
// CHECK: %[[D:.*]] = "tsr.BlockedConv"(%[[A]], %{{.*}}) <{activation = "Relu",{{.*}} group = 24 : i64, input_blocked = 1 : i64
// CHECK-SAME: -> tensor<1x2x6x6x16xf32>
// CHECK: %[[P:.*]] = "tsr.BlockedConv"(%[[D]], %{{.*}}, %[[A]])
// CHECK-SAME: (tensor<1x2x6x6x16xf32>, tensor<24x24x1x1xf32>, tensor<1x2x6x6x16xf32>) -> tensor<1x2x6x6x16xf32>
// CHECK-NEXT: %[[PU:.*]] = tsr.UnblockChannels %[[P]] {channels = 24 : i64}
// CHECK: %[[R:.*]] = tsr.Relu %[[AU]]
// CHECK: return %[[PU]], %[[R]]
// CHECK-NOT: tsr.Conv
// CHECK-NOT: tsr.FusedConv
func.func @chain(%x: tensor<1x8x6x6xf32>) -> (tensor<1x24x6x6xf32>, tensor<1x24x6x6xf32>) {
  %w1 = tsr.Constant dense<0.5> : tensor<24x8x1x1xf32>
  %wd = tsr.Constant dense<0.25> : tensor<24x1x3x3xf32>
  %w2 = tsr.Constant dense<0.125> : tensor<24x24x1x1xf32>
  %a = tsr.Conv %x, %w1 : (tensor<1x8x6x6xf32>, tensor<24x8x1x1xf32>) -> tensor<1x24x6x6xf32>
  %d = "tsr.FusedConv"(%a, %wd) <{activation = "Relu", group = 24 : i64, pads = array<i64: 1, 1, 1, 1>, operandSegmentSizes = array<i32: 1, 1, 0, 0>}> : (tensor<1x24x6x6xf32>, tensor<24x1x3x3xf32>) -> tensor<1x24x6x6xf32>
  %p = "tsr.FusedConv"(%d, %w2, %a) <{operandSegmentSizes = array<i32: 1, 1, 0, 1>}> : (tensor<1x24x6x6xf32>, tensor<24x24x1x1xf32>, tensor<1x24x6x6xf32>) -> tensor<1x24x6x6xf32>
  %r = tsr.Relu %a : (tensor<1x24x6x6xf32>) -> tensor<1x24x6x6xf32>
  return %p, %r : tensor<1x24x6x6xf32>, tensor<1x24x6x6xf32>
}

// -----

// A depthwise conv on a plain input gets it through one BlockChannels.
// CHECK-LABEL: func.func @depthwise_input
// CHECK: %[[B:.*]] = tsr.BlockChannels %arg0 : (tensor<1x32x5x5xf32>) -> tensor<1x2x5x5x16xf32>
// CHECK: "tsr.BlockedConv"(%[[B]], %{{.*}}) <{{.*}}group = 32 : i64, input_blocked = 1 : i64
// CHECK: tsr.UnblockChannels
func.func @depthwise_input(%x: tensor<1x32x5x5xf32>) -> tensor<1x32x3x3xf32> {
  %w = tsr.Constant dense<1.0> : tensor<32x1x3x3xf32>
  %y = tsr.Conv %x, %w {group = 32 : i64} : (tensor<1x32x5x5xf32>, tensor<32x1x3x3xf32>) -> tensor<1x32x3x3xf32>
  return %y : tensor<1x32x3x3xf32>
}

// -----

// Left alone: weights that are not constants, dilation, output channels that leave most
// of a block empty (6 of 16), f64, 3-D convolutions.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: BlockedConv
// CHECK-NOT: BlockChannels
func.func @left_alone(%x: tensor<1x16x6x6xf32>, %w: tensor<16x16x1x1xf32>, %x64: tensor<1x16x6x6xf64>,
                      %x3: tensor<1x16x2x2x2xf32>)
    -> (tensor<1x16x6x6xf32>, tensor<1x16x2x2xf32>, tensor<1x6x6x6xf32>, tensor<1x16x6x6xf64>, tensor<1x16x2x2x2xf32>) {
  %a = tsr.Conv %x, %w : (tensor<1x16x6x6xf32>, tensor<16x16x1x1xf32>) -> tensor<1x16x6x6xf32>
  %wd = tsr.Constant dense<1.0> : tensor<16x16x3x3xf32>
  %b = tsr.Conv %x, %wd {dilations = array<i64: 2, 2>} : (tensor<1x16x6x6xf32>, tensor<16x16x3x3xf32>) -> tensor<1x16x2x2xf32>
  %w6 = tsr.Constant dense<1.0> : tensor<6x16x1x1xf32>
  %c = tsr.Conv %x, %w6 : (tensor<1x16x6x6xf32>, tensor<6x16x1x1xf32>) -> tensor<1x6x6x6xf32>
  %w64 = tsr.Constant dense<1.0> : tensor<16x16x1x1xf64>
  %d = tsr.Conv %x64, %w64 : (tensor<1x16x6x6xf64>, tensor<16x16x1x1xf64>) -> tensor<1x16x6x6xf64>
  %w3 = tsr.Constant dense<1.0> : tensor<16x16x1x1x1xf32>
  %e = tsr.Conv %x3, %w3 : (tensor<1x16x2x2x2xf32>, tensor<16x16x1x1x1xf32>) -> tensor<1x16x2x2x2xf32>
  return %a, %b, %c, %d, %e : tensor<1x16x6x6xf32>, tensor<1x16x2x2xf32>, tensor<1x6x6x6xf32>, tensor<1x16x6x6xf64>, tensor<1x16x2x2x2xf32>
}

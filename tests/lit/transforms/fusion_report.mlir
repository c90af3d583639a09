// tsr-fusion-report: the kernels left after epilogue and region fusion, as a remark.
// RUN: tessera-opt %s --tsr-fuse-epilogues --tsr-fuse-regions --tsr-fusion-report -o /dev/null 2>&1 | FileCheck %s
// RUN: tessera-opt %s --tsr-fusion-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=UNFUSED

// A GPT-2-style MLP with a LayerNormalization in front: LayerNorm is one reduction fusion,
// each MatMul with its epilogue one FusedMatMul, Gelu (left out of epilogues) one fusion.
// CHECK: remark: fusion report: 8 ops -> 4 kernels (2 fusions, 2 fused epilogues); 2 library kernels, 3 ops in fusions, 5 ops in fused epilogues
// UNFUSED: remark: fusion report: 8 ops -> 8 kernels (0 fusions, 0 fused epilogues); 8 library kernels, 0 ops in fusions, 0 ops in fused epilogues
func.func @mlp(%x: tensor<8x16xf32>, %w1: tensor<16x64xf32>, %w2: tensor<64x16xf32>, %s: tensor<16xf32>) -> tensor<8x16xf32> {
  %b1 = tsr.Constant dense<0.25> : tensor<64xf32>
  %b2 = tsr.Constant dense<-0.5> : tensor<16xf32>
  %y, %mean, %inv = tsr.LayerNormalization %x, %s : (tensor<8x16xf32>, tensor<16xf32>) -> (tensor<8x16xf32>, tensor<8x1xf32>, tensor<8x1xf32>)
  %g = tsr.Constant dense<2.0> : tensor<f32>
  %n = tsr.Mul %y, %g : (tensor<8x16xf32>, tensor<f32>) -> tensor<8x16xf32>
  %0 = tsr.MatMul %n, %w1 : (tensor<8x16xf32>, tensor<16x64xf32>) -> tensor<8x64xf32>
  %1 = tsr.Add %0, %b1 : (tensor<8x64xf32>, tensor<64xf32>) -> tensor<8x64xf32>
  %2 = tsr.Gelu %1 : (tensor<8x64xf32>) -> tensor<8x64xf32>
  %3 = tsr.MatMul %2, %w2 : (tensor<8x64xf32>, tensor<64x16xf32>) -> tensor<8x16xf32>
  %4 = tsr.Add %3, %b2 : (tensor<8x16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
  %5 = tsr.Add %4, %x : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  return %5 : tensor<8x16xf32>
}

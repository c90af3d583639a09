// tsr-tile-fusions: a tsr.Fusion whose work splits into independent blocks of rows is marked
// with the block count and the axis; then tsr-outline-fusions also builds the function of one
// block, and the call names it.
// RUN: tessera-opt %s --split-input-file --tsr-tile-fusions | FileCheck %s --check-prefix=MARK
// RUN: tessera-opt %s --split-input-file --tsr-tile-fusions --tsr-outline-fusions | FileCheck %s --check-prefix=OUTLINE

// Centering [1,128,768] rows by their mean (a reduction along the last axis, kept as 1): the
// 128 rows cut into 8 blocks of 16 (98304 elements, at least 8192 per block); the [768]
// offset is read whole by every block.
// MARK-LABEL: func.func @center
// MARK: tsr.Fusion
// MARK: {tsr.tile_axis = 1 : i64, tsr.tiles = 8 : i64}
// OUTLINE-LABEL: func.func @center
// OUTLINE: call @fusion_0(%{{.*}}, %{{.*}}) {tsr.tile_callee = @fusion_0_tile, tsr.tiles = 8 : i64} : (tensor<1x128x768xf32>, tensor<768xf32>) -> tensor<1x128x768xf32>
// OUTLINE: func.func private @fusion_0(%{{.*}}: tensor<1x128x768xf32>, %{{.*}}: tensor<768xf32>) -> tensor<1x128x768xf32>
// OUTLINE: func.func private @fusion_0_tile(%{{.*}}: tensor<1x16x768xf32>, %{{.*}}: tensor<768xf32>) -> tensor<1x16x768xf32>
// OUTLINE: arith.constant 7.680000e+02 : f32
func.func @center(%x: tensor<1x128x768xf32>, %o: tensor<768xf32>) -> tensor<1x128x768xf32> {
  %r = tsr.Fusion "reduction" (%x, %o) : (tensor<1x128x768xf32>, tensor<768xf32>) -> tensor<1x128x768xf32> {
  ^bb0(%a: tensor<1x128x768xf32>, %b: tensor<768xf32>):
    %axes = tsr.Constant dense<[-1]> : tensor<1xi64>
    %m = tsr.ReduceMean %a, %axes {keepdims = 1 : i64} : (tensor<1x128x768xf32>, tensor<1xi64>) -> tensor<1x128x1xf32>
    %c = tsr.Sub %a, %m : (tensor<1x128x768xf32>, tensor<1x128x1xf32>) -> tensor<1x128x768xf32>
    %y = tsr.Add %c, %b : (tensor<1x128x768xf32>, tensor<768xf32>) -> tensor<1x128x768xf32>
    tsr.Yield %y : tensor<1x128x768xf32>
  }
  return %r : tensor<1x128x768xf32>
}

// -----

// Softmax along axis 1, the axis the blocks would cut: not marked, and one function.
// MARK-LABEL: func.func @across
// MARK-NOT: tsr.tiles
// OUTLINE-LABEL: func.func @across
// OUTLINE-NOT: _tile
func.func @across(%x: tensor<1x16x64x64xf32>) -> tensor<1x16x64x64xf32> {
  %r = tsr.Fusion "reduction" (%x) : (tensor<1x16x64x64xf32>) -> tensor<1x16x64x64xf32> {
  ^bb0(%a: tensor<1x16x64x64xf32>):
    %y = tsr.Softmax %a {axis = 1 : i64} : (tensor<1x16x64x64xf32>) -> tensor<1x16x64x64xf32>
    tsr.Yield %y : tensor<1x16x64x64xf32>
  }
  return %r : tensor<1x16x64x64xf32>
}

// -----

// Along the last axis instead: the 16 rows of axis 1 cut into 8 blocks (65536 elements).
// MARK-LABEL: func.func @along
// MARK: {tsr.tile_axis = 1 : i64, tsr.tiles = 8 : i64}
// OUTLINE-LABEL: func.func @along
// OUTLINE: func.func private @fusion_0_tile(%{{.*}}: tensor<1x2x64x64xf32>) -> tensor<1x2x64x64xf32>
func.func @along(%x: tensor<1x16x64x64xf32>) -> tensor<1x16x64x64xf32> {
  %r = tsr.Fusion "reduction" (%x) : (tensor<1x16x64x64xf32>) -> tensor<1x16x64x64xf32> {
  ^bb0(%a: tensor<1x16x64x64xf32>):
    %y = tsr.Softmax %a {axis = -1 : i64} : (tensor<1x16x64x64xf32>) -> tensor<1x16x64x64xf32>
    tsr.Yield %y : tensor<1x16x64x64xf32>
  }
  return %r : tensor<1x16x64x64xf32>
}

// -----

// A sum over the rows (the cut axis) and a fusion too small to be worth blocks: neither
// is marked.
// MARK-LABEL: func.func @small_and_across
// MARK-NOT: tsr.tiles
func.func @small_and_across(%x: tensor<64x512xf32>, %s: tensor<8x16xf32>) -> (tensor<1x512xf32>, tensor<8x16xf32>) {
  %r = tsr.Fusion "reduction" (%x) : (tensor<64x512xf32>) -> tensor<1x512xf32> {
  ^bb0(%a: tensor<64x512xf32>):
    %axes = tsr.Constant dense<[0]> : tensor<1xi64>
    %t = tsr.Tanh %a : (tensor<64x512xf32>) -> tensor<64x512xf32>
    %y = tsr.ReduceSum %t, %axes {keepdims = 1 : i64} : (tensor<64x512xf32>, tensor<1xi64>) -> tensor<1x512xf32>
    tsr.Yield %y : tensor<1x512xf32>
  }
  %q = tsr.Fusion "loop" (%s) : (tensor<8x16xf32>) -> tensor<8x16xf32> {
  ^bb0(%a: tensor<8x16xf32>):
    %y = tsr.Exp %a : (tensor<8x16xf32>) -> tensor<8x16xf32>
    tsr.Yield %y : tensor<8x16xf32>
  }
  return %r, %q : tensor<1x512xf32>, tensor<8x16xf32>
}

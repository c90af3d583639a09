// tsr-outline-fusions: each tsr.Fusion becomes a private function of linalg / arith / math /
// tensor ops on static tensors, called with func.call.
// RUN: tessera-opt %s --split-input-file --tsr-outline-fusions --verify-diagnostics | FileCheck %s

// An elementwise chain with broadcasting: [4,8] + [8] (missing dim dropped), * [4,1] (size-1 dim
// read at index 0), relu; the splat constant becomes a scalar in the body.
// CHECK-DAG: #[[ID:map[0-9]*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROW:map[0-9]*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #[[COL:map[0-9]*]] = affine_map<(d0, d1) -> (d0, 0)>
// CHECK-LABEL: func.func @chain
// CHECK: %[[R:.*]] = call @fusion_0(%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<4x8xf32>, tensor<8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: return %[[R]]
// CHECK: func.func private @fusion_0(%{{.*}}: tensor<4x8xf32>, %{{.*}}: tensor<8xf32>, %{{.*}}: tensor<4x1xf32>) -> tensor<4x8xf32>
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK: arith.addf
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[COL]], #[[ID]]]
// CHECK: arith.mulf
// CHECK: linalg.generic
// CHECK: arith.cmpf olt
// CHECK: arith.select
// CHECK: arith.constant 2.000000e+00 : f32
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[ID]]]
// CHECK: arith.addf
// CHECK: return %{{.*}} : tensor<4x8xf32>
func.func @chain(%x: tensor<4x8xf32>, %b: tensor<8xf32>, %s: tensor<4x1xf32>) -> tensor<4x8xf32> {
  %r = tsr.Fusion "loop" (%x, %b, %s) : (tensor<4x8xf32>, tensor<8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32> {
  ^bb0(%a0: tensor<4x8xf32>, %a1: tensor<8xf32>, %a2: tensor<4x1xf32>):
    %0 = tsr.Add %a0, %a1 : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    %1 = tsr.Mul %0, %a2 : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
    %2 = tsr.Relu %1 : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %c = tsr.Constant dense<2.0> : tensor<f32>
    %3 = tsr.Add %2, %c : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
    tsr.Yield %3 : tensor<4x8xf32>
  }
  return %r : tensor<4x8xf32>
}

// -----

// Division by a splat constant is a multiply by its reciprocal (4.0 -> 0.25); by a tensor it
// stays a divide.
// CHECK-LABEL: func.func @divide
// CHECK: func.func private @fusion_0
// CHECK: linalg.generic
// CHECK: arith.constant 2.500000e-01 : f32
// CHECK-NEXT: arith.mulf
// CHECK: linalg.generic
// CHECK: arith.divf
func.func @divide(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %r = tsr.Fusion "loop" (%x, %y) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a0: tensor<4x8xf32>, %a1: tensor<4x8xf32>):
    %c = tsr.Constant dense<4.0> : tensor<f32>
    %0 = tsr.Div %a0, %c : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
    %1 = tsr.Div %0, %a1 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    tsr.Yield %1 : tensor<4x8xf32>
  }
  return %r : tensor<4x8xf32>
}

// -----

// Two fusions, one with two results (one of them an input, which is copied); names unique in
// the module (fusion_0 already exists).
// CHECK-LABEL: func.func @multi
// CHECK: %[[A:.*]]:2 = call @fusion_1(%{{.*}}) : (tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
// CHECK: %[[B:.*]] = call @fusion_2(%[[A]]#0, %[[A]]#1)
// CHECK: func.func private @fusion_1(%[[X:[^:]*]]: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
// CHECK: %[[E:.*]] = linalg.generic
// CHECK: math.exp
// CHECK: %[[C:.*]] = linalg.copy ins(%[[X]] : tensor<3xf32>) outs(%{{.*}} : tensor<3xf32>) -> tensor<3xf32>
// CHECK: return %[[E]], %[[C]] : tensor<3xf32>, tensor<3xf32>
// CHECK: func.func private @fusion_2
// CHECK: arith.subf
func.func @fusion_0() {
  return
}
func.func @multi(%x: tensor<3xf32>) -> tensor<3xf32> {
  %r:2 = tsr.Fusion "loop" (%x) : (tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  ^bb0(%a: tensor<3xf32>):
    %0 = tsr.Exp %a : (tensor<3xf32>) -> tensor<3xf32>
    tsr.Yield %0, %a : tensor<3xf32>, tensor<3xf32>
  }
  %s = tsr.Fusion "loop" (%r#0, %r#1) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32> {
  ^bb0(%a: tensor<3xf32>, %b: tensor<3xf32>):
    %0 = tsr.Sub %a, %b : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    tsr.Yield %0 : tensor<3xf32>
  }
  return %s : tensor<3xf32>
}

// -----

// Softmax along axis 0 of [5,7]: max-reduce, exp(x - max) once, its sum, 1 / sum, then
// exp(x - max) * (1 / sum).
// CHECK-DAG: #[[ID:map[0-9]*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[KEPT:map[0-9]*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #[[ROW:map[0-9]*]] = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func private @fusion_0
// CHECK-SAME: (%[[X:[^:]*]]: tensor<5x7xf32>) -> tensor<5x7xf32>
// CHECK: %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[M0:.*]] = linalg.fill ins(%[[NINF]] : f32) outs(%{{.*}} : tensor<7xf32>)
// CHECK: %[[MAX:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[KEPT]]], iterator_types = ["reduction", "parallel"]} ins(%[[X]] : tensor<5x7xf32>) outs(%[[M0]] : tensor<7xf32>)
// CHECK: arith.maximumf
// CHECK: %[[EXP:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[KEPT]], #[[ID]]], iterator_types = ["parallel", "parallel"]} ins(%[[X]], %[[MAX]] : tensor<5x7xf32>, tensor<7xf32>)
// CHECK: arith.subf
// CHECK: math.exp
// CHECK: %[[SUM:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[KEPT]]], iterator_types = ["reduction", "parallel"]} ins(%[[EXP]] : tensor<5x7xf32>)
// CHECK: arith.addf
// CHECK: %[[INV:.*]] = linalg.generic {indexing_maps = [#[[ROW]], #[[ROW]]], iterator_types = ["parallel"]} ins(%[[SUM]] : tensor<7xf32>)
// CHECK: arith.divf
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[KEPT]], #[[ID]]], iterator_types = ["parallel", "parallel"]} ins(%[[EXP]], %[[INV]] :
// CHECK: arith.mulf
func.func @softmax(%x: tensor<5x7xf32>) -> tensor<5x7xf32> {
  %r = tsr.Fusion "reduction" (%x) : (tensor<5x7xf32>) -> tensor<5x7xf32> {
  ^bb0(%a: tensor<5x7xf32>):
    %0 = tsr.Softmax %a {axis = 0 : i64} : (tensor<5x7xf32>) -> tensor<5x7xf32>
    tsr.Yield %0 : tensor<5x7xf32>
  }
  return %r : tensor<5x7xf32>
}

// -----

// LayerNormalization over the last axis: sum, mean, sum of squared deviations, 1/sqrt(var+eps),
// then (x - mean) * inv * scale + bias.
// CHECK-LABEL: func.func private @fusion_0
// CHECK-SAME: (%[[X:[^:]*]]: tensor<2x6xf32>, %[[S:[^:]*]]: tensor<6xf32>, %[[B:[^:]*]]: tensor<6xf32>) -> tensor<2x6xf32>
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[X]] : tensor<2x6xf32>)
// CHECK: %[[MEAN:.*]] = linalg.generic {{.*}} ins(%[[SUM]] : tensor<2xf32>)
// CHECK: arith.constant 6.000000e+00 : f32
// CHECK: arith.divf
// CHECK: %[[SQ:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[X]], %[[MEAN]] : tensor<2x6xf32>, tensor<2xf32>)
// CHECK: %[[INV:.*]] = linalg.generic {{.*}} ins(%[[SQ]] : tensor<2xf32>)
// CHECK: arith.constant 1.000000e-03 : f32
// CHECK: math.sqrt
// CHECK: linalg.generic {{.*}} ins(%[[X]], %[[MEAN]], %[[INV]], %[[S]], %[[B]] :
// CHECK: arith.subf
// CHECK: arith.mulf
// CHECK: arith.mulf
// CHECK: arith.addf
func.func @layernorm(%x: tensor<2x6xf32>, %s: tensor<6xf32>, %b: tensor<6xf32>) -> tensor<2x6xf32> {
  %r = tsr.Fusion "reduction" (%x, %s, %b) : (tensor<2x6xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<2x6xf32> {
  ^bb0(%a: tensor<2x6xf32>, %sc: tensor<6xf32>, %bi: tensor<6xf32>):
    %y, %m, %i = tsr.LayerNormalization %a, %sc, %bi {axis = -1 : i64, epsilon = 1.0e-3 : f64} : (tensor<2x6xf32>, tensor<6xf32>, tensor<6xf32>) -> (tensor<2x6xf32>, tensor<2x1xf32>, tensor<2x1xf32>)
    tsr.Yield %y : tensor<2x6xf32>
  }
  return %r : tensor<2x6xf32>
}

// -----

// ReduceMean over axes [-1] with keepdims: a sum into tensor<3xf32>, the division by the count,
// then the reduced dim back as 1 (reshapes), copied into the result.
// CHECK-LABEL: func.func private @fusion_0
// CHECK-SAME: -> tensor<3x1xf32>
// CHECK: linalg.fill
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<3x17xf32>) outs(%{{.*}} : tensor<3xf32>)
// CHECK: arith.constant 1.700000e+01 : f32
// CHECK: arith.divf
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [3, 1] : tensor<3xf32> into tensor<3x1xf32>
// CHECK: return
func.func @mean(%x: tensor<3x17xf32>) -> tensor<3x1xf32> {
  %r = tsr.Fusion "reduction" (%x) : (tensor<3x17xf32>) -> tensor<3x1xf32> {
  ^bb0(%a: tensor<3x17xf32>):
    %axes = tsr.Constant dense<[-1]> : tensor<1xi64>
    %0 = tsr.ReduceMean %a, %axes {keepdims = 1 : i64} : (tensor<3x17xf32>, tensor<1xi64>) -> tensor<3x1xf32>
    tsr.Yield %0 : tensor<3x1xf32>
  }
  return %r : tensor<3x1xf32>
}

// -----

// An op without a lowering fails the pass with an error naming it.
func.func @unsupported(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = tsr.Fusion "loop" (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    // expected-error @+1 {{'tsr.Sin' op cannot be outlined: tsr-outline-fusions has no lowering for this op}}
    %0 = tsr.Sin %a : (tensor<4xf32>) -> tensor<4xf32>
    tsr.Yield %0 : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// LayerNormalization is lowered for its output Y only.
func.func @layernorm_mean(%x: tensor<2x6xf32>, %s: tensor<6xf32>) -> tensor<2x1xf32> {
  %r = tsr.Fusion "reduction" (%x, %s) : (tensor<2x6xf32>, tensor<6xf32>) -> tensor<2x1xf32> {
  ^bb0(%a: tensor<2x6xf32>, %sc: tensor<6xf32>):
    // expected-error @+1 {{'tsr.LayerNormalization' op cannot be outlined: only output Y is lowered, but Mean or InvStdDev is used}}
    %y, %m, %i = tsr.LayerNormalization %a, %sc : (tensor<2x6xf32>, tensor<6xf32>) -> (tensor<2x6xf32>, tensor<2x1xf32>, tensor<2x1xf32>)
    tsr.Yield %m : tensor<2x1xf32>
  }
  return %r : tensor<2x1xf32>
}

// -----

// Only f32 is lowered.
func.func @f64(%x: tensor<4xf64>) -> tensor<4xf64> {
  %r = tsr.Fusion "loop" (%x) : (tensor<4xf64>) -> tensor<4xf64> {
  ^bb0(%a: tensor<4xf64>):
    // expected-error @+1 {{'tsr.Relu' op cannot be outlined: only ops with one static f32 tensor result are lowered}}
    %0 = tsr.Relu %a : (tensor<4xf64>) -> tensor<4xf64>
    tsr.Yield %0 : tensor<4xf64>
  }
  return %r : tensor<4xf64>
}

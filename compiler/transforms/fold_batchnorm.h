// tsr-fold-batchnorm: folds inference-form BatchNormalization into the constant weights of the
// Conv / Gemm / MatMul before it, or (standalone) into a Mul and an Add with constant operands.
// MLIR-level header (see fold_batchnorm.cc).
#ifndef TESSERA_COMPILER_TRANSFORMS_FOLD_BATCHNORM_H_
#define TESSERA_COMPILER_TRANSFORMS_FOLD_BATCHNORM_H_

#include <memory>

#include "mlir/Pass/Pass.h"

namespace tsr {

struct FoldBatchNormOptions {
  // Also rewrite a BatchNormalization that follows none of the ops below as
  // Y = X * a + b (a = scale / sqrt(var + epsilon), b = B - mean * a, per channel, constant):
  // two elementwise ops with constant operands that the region fusion merges with the
  // elementwise ops around them into one loop, where the BatchNormalization kernel would be a
  // separate library step with its own pass over memory (and a square root and a division per
  // channel on every run). Default on; off keeps such BatchNormalizations as they are.
  bool standalone = true;
};

// Runs on func.func, for inference graphs only. A BatchNormalization folds when
// training_mode = 0, only its output Y is used, X is f32 or f64, and scale, B, input_mean and
// input_var are tsr.Constant. With a = scale / sqrt(var + epsilon) per channel (axis 1):
// - after a Conv (its only user) with a constant W [M, C/group, k...] and an optional constant
//   bias: W' = W * a per output channel m, bias' = (bias - mean) * a + B;
// - after a Gemm (its only user; Y [M, N], channel = column n) with a constant B (transB 0 or
//   1) and an optional constant C: B' = B * a per column, C' = (beta * C - mean) * a + B_bn,
//   beta' = 1, alpha kept;
// - after a MatMul (its only user) whose output is 2-D [M, N] (BatchNormalization's channel
//   axis 1 is then N) and whose B is a constant [K, N]: Gemm(A, B * a, C' = B_bn - mean * a).
//   A MatMul with a higher-rank output is not folded: axis 1 is then a row axis of A, which no
//   weight change can scale.
// Anything else is left alone (or rewritten standalone, see the option).
std::unique_ptr<mlir::Pass> CreateFoldBatchNormPass(const FoldBatchNormOptions& options = {});

// Registers `tsr-fold-batchnorm` (option `standalone`) for tessera-opt.
void RegisterFoldBatchNormPass();

}  // namespace tsr

#endif  // TESSERA_COMPILER_TRANSFORMS_FOLD_BATCHNORM_H_

// tsr-constant-fold: evaluates, at compile time, every tsr op whose operands are all constants
// and replaces its results by tsr.Constant ops. MLIR-level header (see constant_fold.cc).
#ifndef TESSERA_COMPILER_TRANSFORMS_CONSTANT_FOLD_H_
#define TESSERA_COMPILER_TRANSFORMS_CONSTANT_FOLD_H_

#include <cstdint>
#include <memory>

#include "mlir/Pass/Pass.h"

namespace tsr {

struct ConstantFoldOptions {
  // Ops whose results together hold more elements are left alone: folding one keeps the old
  // and the new constant alive at once (and the result is written into the module as a dense
  // attribute). 2^22 (16 MiB of f32) is above every per-layer weight of the target models
  // (ResNet-18's largest conv weight has 2.4M elements, GPT-2's MLP weights 2.4M) but below
  // embedding tables (GPT-2: 38.6M), whose transposes or casts are better left to run once.
  int64_t max_elements = int64_t{1} << 22;
};

// Runs on func.func. Folds an op when it is memory-effect free (Pure), not stateful in the
// op registry (Variable, Dropout, optimizer updates are never folded), has no regions, all of
// its operands are tsr.Constant, and its results are static and within max_elements; the op is
// evaluated by RunOp (kernels/run_op.h) with the reference kernels, the oracle the
// interpreter is tested against. Shape and Size also fold when the dims they read are static,
// whatever the operand. An op whose kernel fails (or whose results do not match the op's
// types) is left alone: folding is an optimization, never an error.
std::unique_ptr<mlir::Pass> CreateConstantFoldPass(const ConstantFoldOptions& options = {});

// Registers `tsr-constant-fold` (option `max-elements`) for tessera-opt.
void RegisterConstantFoldPass();

}  // namespace tsr

#endif  // TESSERA_COMPILER_TRANSFORMS_CONSTANT_FOLD_H_

// tsr-weight-layout: constant GEMM weights stored in the layout the CPU GEMM reads fastest.
// MLIR-level header (see weight_layout.cc).
#ifndef TESSERA_COMPILER_TRANSFORMS_WEIGHT_LAYOUT_H_
#define TESSERA_COMPILER_TRANSFORMS_WEIGHT_LAYOUT_H_

#include <memory>

#include "mlir/Pass/Pass.h"

namespace tsr {

// Runs on func.func. A FusedMatMul with transpose_b = 1, or a Gemm with transB = 1, whose
// B is a 2-D f32 tsr.Constant gets B transposed at compile time (a new constant; the old one
// stays for its other users) and transpose_b / transB = 0: kernels/cpu's Sgemm packs a
// row-major B while it multiplies, and reads a transposed one through a separate strided
// packing pass (about 20% slower on 64x784 x 784x256 here). PyTorch's and ONNX's Linear
// layers store [out, in] weights, so every exported Dense layer is such a GEMM. Weights of
// more than 2^24 elements are left alone (compile time and memory).
std::unique_ptr<mlir::Pass> CreateWeightLayoutPass();

// Registers `tsr-weight-layout` for tessera-opt.
void RegisterWeightLayoutPass();

}  // namespace tsr

#endif  // TESSERA_COMPILER_TRANSFORMS_WEIGHT_LAYOUT_H_

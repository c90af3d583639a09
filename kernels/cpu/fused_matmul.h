// FusedMatMul on the CPU (f32): y = act(A x op(B) + bias + residual) on Sgemm
// (gemm.h), the bias and Relu in Sgemm's epilogue, the residual as Sgemm's C term
// (beta = 1 on a copy of it), other activations in one vectorized pass after the
// product (fused_activation.h).
#ifndef TESSERA_KERNELS_CPU_FUSED_MATMUL_H_
#define TESSERA_KERNELS_CPU_FUSED_MATMUL_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kernels/cpu/fused_activation.h"
#include "kernels/cpu/gemm.h"
#include "kernels/kernel.h"

namespace tsr {

// y [m, n] = act(a [m, k] x op(b) + bias [n] + residual [m, n]); op(b) is b [k, n], or
// b^T for b [n, k] when transpose_b. bias and residual may be null; residual may equal
// y. All row-major and dense. parallel_for (null: inline) splits the work; the results
// do not depend on the split.
void FusedMatMulForward(int64_t m, int64_t n, int64_t k, const float* a, const float* b, bool transpose_b,
                        const float* bias, const float* residual, const FusedActivation& activation, float* y,
                        const ParallelForFn& parallel_for);

// The same with op(b) packed once (depth k = b.depth(), n = b.columns()): the compiled
// program's constant weights. Bitwise FusedMatMulForward on the unpacked b, except
// for m = 1 with transpose_b (see gemm.h).
void FusedMatMulForward(int64_t m, const float* a, const SgemmPackedB& b, const float* bias, const float* residual,
                        const FusedActivation& activation, float* y, const ParallelForFn& parallel_for);

// A FusedMatMul node's product: y [m, n] = act(a [m, k] x op(b) + ...), checked against
// its inputs and output (the kernel's checks, shared with the compiled program, which
// packs constant weights only for a node that passes them).
struct FusedMatMulShape {
  int64_t m = 0, n = 0, k = 0;
  bool transpose_b = false;
  FusedActivation activation;
};

// The shape of ctx's FusedMatMul; an error naming the node when the operands disagree.
absl::StatusOr<FusedMatMulShape> NodeFusedMatMulShape(KernelContext& ctx);

// Registers the FusedMatMul f32 cpu kernel.
absl::Status RegisterCpuFusedMatMulKernels(KernelRegistry& registry);

}  // namespace tsr

#endif  // TESSERA_KERNELS_CPU_FUSED_MATMUL_H_

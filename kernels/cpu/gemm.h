// Single-precision GEMM for the optimized CPU kernels:
//   C = epilogue(alpha * op(A) * op(B) + beta * C),  op(X) = X or X^T,
// row-major with leading dimensions, BLIS-style (packed A and B panels, register-
// blocked micro-kernels per ISA, MC/KC/NC cache blocking) and split over a
// ParallelForFn. Results do not depend on how the work is split across threads:
// every element of C sees the same sequence of floating-point operations.
#ifndef TESSERA_KERNELS_CPU_GEMM_H_
#define TESSERA_KERNELS_CPU_GEMM_H_

#include <cstdint>
#include <optional>

#include "kernels/cpu/cpu_features.h"
#include "kernels/kernel.h"

namespace tsr {

enum class GemmActivation {
  kNone,
  kRelu,
  kGelu,  // exact: 0.5 * x * (1 + erf(x / sqrt(2)))
};

// Applied once per element after the product and the beta term, in this order:
//   y = act(alpha * op(A) op(B) + beta * C + bias[j] + row_bias[i]) + residual[i * ldr + j]
struct GemmEpilogue {
  const float* bias = nullptr;      // [N] per column (a Dense layer's bias), or null
  const float* row_bias = nullptr;  // [M] per row (a convolution's bias, rows = channels), or null
  GemmActivation activation = GemmActivation::kNone;
  const float* residual = nullptr;  // [M, ldr] row-major, or null
  int64_t ldr = 0;

  bool empty() const {
    return bias == nullptr && row_bias == nullptr && activation == GemmActivation::kNone && residual == nullptr;
  }
};

struct GemmOptions {
  // Micro-kernel level; unset: ActiveCpuIsa(). Capped to what the CPU supports.
  std::optional<CpuIsa> isa;
  // Splits the M or N loop; null runs on the calling thread.
  ParallelForFn parallel_for;
  GemmEpilogue epilogue;
};

// op(A) is [m, k], op(B) is [k, n], C is [m, n]; lda/ldb/ldc are the row strides of
// A, B, C as stored (A is [k, lda-strided m] when trans_a). beta == 0 never reads C
// (NaNs there do not propagate). m, n or k may be 0.
void Sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
           const float* b, int64_t ldb, float beta, float* c, int64_t ldc, const GemmOptions& options = {});

}  // namespace tsr

#endif  // TESSERA_KERNELS_CPU_GEMM_H_

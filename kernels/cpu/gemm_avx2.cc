// The AVX2 + FMA GEMM micro-kernel: a 6x16 tile of C in 12 ymm accumulators
// (2 B loads + 6 A broadcasts per 12 FMAs). Compiled with -mavx2 -mfma; the driver
// calls it only when the CPU has both.
#include <immintrin.h>

#include <cstdint>

#include "kernels/cpu/gemm_microkernel.h"

namespace tsr {
namespace gemm_internal {

namespace {

constexpr int kMr = 6;
constexpr int kNr = 16;

// Writes one row of acc (already in registers) to C with the contract's epilogue.
inline void StoreRow(float* c, __m256 acc0, __m256 acc1, __m256 alpha, __m256 beta, bool beta_zero, bool first) {
  if (first) {
    const __m256 t0 = _mm256_mul_ps(alpha, acc0);
    const __m256 t1 = _mm256_mul_ps(alpha, acc1);
    if (beta_zero) {
      _mm256_storeu_ps(c, t0);
      _mm256_storeu_ps(c + 8, t1);
    } else {
      _mm256_storeu_ps(c, _mm256_fmadd_ps(beta, _mm256_loadu_ps(c), t0));
      _mm256_storeu_ps(c + 8, _mm256_fmadd_ps(beta, _mm256_loadu_ps(c + 8), t1));
    }
  } else {
    _mm256_storeu_ps(c, _mm256_fmadd_ps(alpha, acc0, _mm256_loadu_ps(c)));
    _mm256_storeu_ps(c + 8, _mm256_fmadd_ps(alpha, acc1, _mm256_loadu_ps(c + 8)));
  }
}

void KernelAvx2(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, int m_eff, int n_eff, float alpha,
                float beta, bool first) {
  __m256 acc[kMr][2];
#pragma GCC unroll 6
  for (int i = 0; i < kMr; ++i) acc[i][0] = acc[i][1] = _mm256_setzero_ps();
#pragma GCC unroll 4
  for (int64_t p = 0; p < kc; ++p) {
    const __m256 b0 = _mm256_load_ps(b);
    const __m256 b1 = _mm256_load_ps(b + 8);
    _mm_prefetch(reinterpret_cast<const char*>(b + 8 * kNr), _MM_HINT_T0);
#pragma GCC unroll 6
    for (int i = 0; i < kMr; ++i) {
      const __m256 ai = _mm256_broadcast_ss(a + i);
      acc[i][0] = _mm256_fmadd_ps(ai, b0, acc[i][0]);
      acc[i][1] = _mm256_fmadd_ps(ai, b1, acc[i][1]);
    }
    a += kMr;
    b += kNr;
  }
  const __m256 va = _mm256_set1_ps(alpha);
  const __m256 vb = _mm256_set1_ps(beta);
  const bool beta_zero = beta == 0.0f;
  if (m_eff == kMr && n_eff == kNr) {
#pragma GCC unroll 6
    for (int i = 0; i < kMr; ++i) StoreRow(c + i * ldc, acc[i][0], acc[i][1], va, vb, beta_zero, first);
    return;
  }
  // Edge tile: the same vector operations into a scratch tile, then copy the corner.
  alignas(32) float tile[kMr][kNr] = {};
  for (int i = 0; i < m_eff; ++i) {
    for (int j = 0; j < n_eff; ++j) tile[i][j] = c[i * ldc + j];
  }
#pragma GCC unroll 6
  for (int i = 0; i < kMr; ++i) StoreRow(tile[i], acc[i][0], acc[i][1], va, vb, beta_zero, first);
  for (int i = 0; i < m_eff; ++i) {
    for (int j = 0; j < n_eff; ++j) c[i * ldc + j] = tile[i][j];
  }
}

}  // namespace

const MicroKernel& Avx2MicroKernel() {
  // Zen 4: the 16-column B micro-panel (kc * 64 B = 16 KiB) stays in L1d, the packed
  // A block (mc * kc * 4 = 144 KiB) in L2, the B block (kc * nc * 4 = 4 MiB) in L3.
  static constexpr MicroKernel kKernel{KernelAvx2, kMr, kNr, /*mc=*/144, /*kc=*/256, /*nc=*/4080 / kNr * kNr};
  return kKernel;
}

}  // namespace gemm_internal
}  // namespace tsr

// The AVX-512F GEMM micro-kernel: a 14x32 tile of C in 28 zmm accumulators
// (2 B loads + 14 A broadcasts per 28 FMAs, leaving 4 of the 32 registers free).
// Compiled with -mavx512f -mfma; the driver calls it only when the CPU and OS
// support AVX-512F.
#include <immintrin.h>

#include <cstdint>

#include "kernels/cpu/gemm_microkernel.h"

namespace tsr {
namespace gemm_internal {

namespace {

constexpr int kMr = 14;
constexpr int kNr = 32;

inline void StoreRow(float* c, __m512 acc0, __m512 acc1, __m512 alpha, __m512 beta, bool beta_zero, bool first) {
  if (first) {
    const __m512 t0 = _mm512_mul_ps(alpha, acc0);
    const __m512 t1 = _mm512_mul_ps(alpha, acc1);
    if (beta_zero) {
      _mm512_storeu_ps(c, t0);
      _mm512_storeu_ps(c + 16, t1);
    } else {
      _mm512_storeu_ps(c, _mm512_fmadd_ps(beta, _mm512_loadu_ps(c), t0));
      _mm512_storeu_ps(c + 16, _mm512_fmadd_ps(beta, _mm512_loadu_ps(c + 16), t1));
    }
  } else {
    _mm512_storeu_ps(c, _mm512_fmadd_ps(alpha, acc0, _mm512_loadu_ps(c)));
    _mm512_storeu_ps(c + 16, _mm512_fmadd_ps(alpha, acc1, _mm512_loadu_ps(c + 16)));
  }
}

void KernelAvx512(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, int m_eff, int n_eff, float alpha,
                  float beta, bool first) {
  __m512 acc[kMr][2];
#pragma GCC unroll 14
  for (int i = 0; i < kMr; ++i) acc[i][0] = acc[i][1] = _mm512_setzero_ps();
  for (int64_t p = 0; p < kc; ++p) {
    const __m512 b0 = _mm512_load_ps(b);
    const __m512 b1 = _mm512_load_ps(b + 16);
    _mm_prefetch(reinterpret_cast<const char*>(b + 4 * kNr), _MM_HINT_T0);
#pragma GCC unroll 14
    for (int i = 0; i < kMr; ++i) {
      const __m512 ai = _mm512_set1_ps(a[i]);
      acc[i][0] = _mm512_fmadd_ps(ai, b0, acc[i][0]);
      acc[i][1] = _mm512_fmadd_ps(ai, b1, acc[i][1]);
    }
    a += kMr;
    b += kNr;
  }
  const __m512 va = _mm512_set1_ps(alpha);
  const __m512 vb = _mm512_set1_ps(beta);
  const bool beta_zero = beta == 0.0f;
  if (m_eff == kMr && n_eff == kNr) {
#pragma GCC unroll 14
    for (int i = 0; i < kMr; ++i) StoreRow(c + i * ldc, acc[i][0], acc[i][1], va, vb, beta_zero, first);
    return;
  }
  // Edge tile: the same vector operations into a scratch tile, then copy the corner.
  alignas(64) float tile[kMr][kNr] = {};
  for (int i = 0; i < m_eff; ++i) {
    for (int j = 0; j < n_eff; ++j) tile[i][j] = c[i * ldc + j];
  }
#pragma GCC unroll 14
  for (int i = 0; i < kMr; ++i) StoreRow(tile[i], acc[i][0], acc[i][1], va, vb, beta_zero, first);
  for (int i = 0; i < m_eff; ++i) {
    for (int j = 0; j < n_eff; ++j) c[i * ldc + j] = tile[i][j];
  }
}

}  // namespace

const MicroKernel& Avx512MicroKernel() {
  // Zen 4 (32 KiB L1d, 1 MiB L2): the 32-column B micro-panel (kc * 128 B = 24 KiB)
  // stays in L1d, the packed A block (mc * kc * 4 = 252 KiB) in L2, the B block
  // (kc * nc * 4 = 3 MiB) in L3.
  static constexpr MicroKernel kKernel{KernelAvx512,
                                       kMr,
                                       kNr,
                                       /*mc=*/336,
                                       /*kc=*/192,
                                       /*nc=*/4096,
                                       /*pack_a_strip=*/nullptr};
  return kKernel;
}

}  // namespace gemm_internal
}  // namespace tsr

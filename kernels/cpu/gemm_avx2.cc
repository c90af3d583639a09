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

// Packs a full 6-row strip of a row-major A, 8 depth steps at a time: six 8-float
// row loads transposed in registers into eight 6-float columns (a 4-float part from
// rows 0-3 and a 2-float part from rows 4-5), instead of 48 scalar moves.
void PackAStripAvx2(const float* a, int64_t lda, int64_t kc, float* dst) {
  const float* r[kMr];
  for (int i = 0; i < kMr; ++i) r[i] = a + i * lda;
  int64_t p = 0;
  for (; p + 8 <= kc; p += 8, dst += 8 * kMr) {
    const __m256 r0 = _mm256_loadu_ps(r[0] + p), r1 = _mm256_loadu_ps(r[1] + p);
    const __m256 r2 = _mm256_loadu_ps(r[2] + p), r3 = _mm256_loadu_ps(r[3] + p);
    const __m256 r4 = _mm256_loadu_ps(r[4] + p), r5 = _mm256_loadu_ps(r[5] + p);
    // Per 128-bit lane h (depth 4h..4h+3): t01l = r0_0 r1_0 r0_1 r1_1, ...
    const __m256 t01l = _mm256_unpacklo_ps(r0, r1), t01h = _mm256_unpackhi_ps(r0, r1);
    const __m256 t23l = _mm256_unpacklo_ps(r2, r3), t23h = _mm256_unpackhi_ps(r2, r3);
    const __m256 t45l = _mm256_unpacklo_ps(r4, r5), t45h = _mm256_unpackhi_ps(r4, r5);
    // c[q] lane h: rows 0-3 at depth 4h + q.
    const __m256 c0 = _mm256_shuffle_ps(t01l, t23l, _MM_SHUFFLE(1, 0, 1, 0));
    const __m256 c1 = _mm256_shuffle_ps(t01l, t23l, _MM_SHUFFLE(3, 2, 3, 2));
    const __m256 c2 = _mm256_shuffle_ps(t01h, t23h, _MM_SHUFFLE(1, 0, 1, 0));
    const __m256 c3 = _mm256_shuffle_ps(t01h, t23h, _MM_SHUFFLE(3, 2, 3, 2));
    const __m128 lo[4] = {_mm256_castps256_ps128(c0), _mm256_castps256_ps128(c1), _mm256_castps256_ps128(c2),
                          _mm256_castps256_ps128(c3)};
    const __m128 hi[4] = {_mm256_extractf128_ps(c0, 1), _mm256_extractf128_ps(c1, 1), _mm256_extractf128_ps(c2, 1),
                          _mm256_extractf128_ps(c3, 1)};
    // Rows 4-5 pairs: depth 0,1 in t45l's low lane, 2,3 in t45h's, 4,5 / 6,7 in the high lanes.
    const __m128 e01 = _mm256_castps256_ps128(t45l), e23 = _mm256_castps256_ps128(t45h);
    const __m128 e45 = _mm256_extractf128_ps(t45l, 1), e67 = _mm256_extractf128_ps(t45h, 1);
    const __m128 pairs[4] = {e01, e23, e45, e67};
#pragma GCC unroll 8
    for (int q = 0; q < 8; ++q) {
      float* d = dst + q * kMr;
      _mm_storeu_ps(d, q < 4 ? lo[q] : hi[q - 4]);
      const __m128 e = pairs[q / 2];
      if (q % 2 == 0) {
        _mm_storel_pi(reinterpret_cast<__m64*>(d + 4), e);
      } else {
        _mm_storeh_pi(reinterpret_cast<__m64*>(d + 4), e);
      }
    }
  }
  for (; p < kc; ++p, dst += kMr) {
    for (int i = 0; i < kMr; ++i) dst[i] = r[i][p];
  }
}

}  // namespace

const MicroKernel& Avx2MicroKernel() {
  // Zen 4: the 16-column B micro-panel (kc * 64 B = 16 KiB) stays in L1d, the packed
  // A block (mc * kc * 4 = 144 KiB) in L2, the B block (kc * nc * 4 = 4 MiB) in L3.
  static constexpr MicroKernel kKernel{KernelAvx2,    kMr, kNr, /*mc=*/144, /*kc=*/256, /*nc=*/4080 / kNr * kNr,
                                       PackAStripAvx2};
  return kKernel;
}

}  // namespace gemm_internal
}  // namespace tsr

// AVX2 lane helpers shared by the per-ISA kernels (conv_depthwise_avx2.cc,
// pool_rows_avx2.cc, conv_transpose_row_avx2.cc, conv_blocked_layout_avx2.cc, transpose_avx2.cc,
// conv_winograd_avx2.cc). Included ONLY by files compiled with -mavx2: everything here has
// internal linkage (anonymous namespace), so no copy built with other flags can be
// shared across ISAs (see gemm_microkernel_simd.h).
#ifndef TESSERA_KERNELS_CPU_AVX2_LANES_H_
#define TESSERA_KERNELS_CPU_AVX2_LANES_H_

#include <immintrin.h>

#include <cstdint>

namespace tsr {
namespace {

// The first `count` (may be < 0 or > 8) lanes as all-ones, the rest zero: for masked
// loads (which read nothing, and give zero, in the other lanes) and stores.
inline __m256i FirstLanes(int64_t count) {
  const int64_t clamped = count < 0 ? 0 : (count > 8 ? 8 : count);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(clamped)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// Even and odd elements of x[0, 16), reading only x[0, n).
inline void DeinterleaveEvenOdd(const float* x, int64_t n, __m256& even, __m256& odd) {
  const __m256 a = n >= 8 ? _mm256_loadu_ps(x) : _mm256_maskload_ps(x, FirstLanes(n));
  const __m256 b = n >= 16 ? _mm256_loadu_ps(x + 8) : _mm256_maskload_ps(x + 8, FirstLanes(n - 8));
  // Per 128-bit lane: a0 a2 b0 b2 (even) and a1 a3 b1 b3 (odd); then the 64-bit
  // pairs reordered into x order.
  even = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0))),
                                                _MM_SHUFFLE(3, 1, 2, 0)));
  odd = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1))),
                                               _MM_SHUFFLE(3, 1, 2, 0)));
}

// The inverse: x[0, n) (n <= 16) = even[0], odd[0], even[1], odd[1], ...; the rest of
// x[0, 16) is not written.
inline void InterleaveEvenOdd(__m256 even, __m256 odd, float* x, int64_t n) {
  // Per 128-bit lane: e0 o0 e1 o1 | e4 o4 e5 o5 and e2 o2 e3 o3 | e6 o6 e7 o7.
  const __m256 lo = _mm256_unpacklo_ps(even, odd);
  const __m256 hi = _mm256_unpackhi_ps(even, odd);
  const __m256 first = _mm256_permute2f128_ps(lo, hi, 0x20);
  const __m256 second = _mm256_permute2f128_ps(lo, hi, 0x31);
  if (n >= 16) {
    _mm256_storeu_ps(x, first);
    _mm256_storeu_ps(x + 8, second);
    return;
  }
  _mm256_maskstore_ps(x, FirstLanes(n), first);
  _mm256_maskstore_ps(x + 8, FirstLanes(n - 8), second);
}

// In place: r[i] lane j becomes r[j] lane i (pairs of rows interleaved, then groups of
// four, then the 128-bit halves: 24 shuffles). The shuffles only move bits.
inline void Transpose8x8(__m256 r[8]) {
  const __m256 a0 = _mm256_unpacklo_ps(r[0], r[1]), a1 = _mm256_unpackhi_ps(r[0], r[1]);
  const __m256 a2 = _mm256_unpacklo_ps(r[2], r[3]), a3 = _mm256_unpackhi_ps(r[2], r[3]);
  const __m256 a4 = _mm256_unpacklo_ps(r[4], r[5]), a5 = _mm256_unpackhi_ps(r[4], r[5]);
  const __m256 a6 = _mm256_unpacklo_ps(r[6], r[7]), a7 = _mm256_unpackhi_ps(r[6], r[7]);
  const __m256 b0 = _mm256_shuffle_ps(a0, a2, _MM_SHUFFLE(1, 0, 1, 0));
  const __m256 b1 = _mm256_shuffle_ps(a0, a2, _MM_SHUFFLE(3, 2, 3, 2));
  const __m256 b2 = _mm256_shuffle_ps(a1, a3, _MM_SHUFFLE(1, 0, 1, 0));
  const __m256 b3 = _mm256_shuffle_ps(a1, a3, _MM_SHUFFLE(3, 2, 3, 2));
  const __m256 b4 = _mm256_shuffle_ps(a4, a6, _MM_SHUFFLE(1, 0, 1, 0));
  const __m256 b5 = _mm256_shuffle_ps(a4, a6, _MM_SHUFFLE(3, 2, 3, 2));
  const __m256 b6 = _mm256_shuffle_ps(a5, a7, _MM_SHUFFLE(1, 0, 1, 0));
  const __m256 b7 = _mm256_shuffle_ps(a5, a7, _MM_SHUFFLE(3, 2, 3, 2));
  r[0] = _mm256_permute2f128_ps(b0, b4, 0x20);
  r[1] = _mm256_permute2f128_ps(b1, b5, 0x20);
  r[2] = _mm256_permute2f128_ps(b2, b6, 0x20);
  r[3] = _mm256_permute2f128_ps(b3, b7, 0x20);
  r[4] = _mm256_permute2f128_ps(b0, b4, 0x31);
  r[5] = _mm256_permute2f128_ps(b1, b5, 0x31);
  r[6] = _mm256_permute2f128_ps(b2, b6, 0x31);
  r[7] = _mm256_permute2f128_ps(b3, b7, 0x31);
}

}  // namespace
}  // namespace tsr

#endif  // TESSERA_KERNELS_CPU_AVX2_LANES_H_

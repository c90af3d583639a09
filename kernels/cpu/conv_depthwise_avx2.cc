// AVX2 + FMA inner loop of the depthwise Conv (compiled with -mavx2 -mfma; called
// only when ActiveCpuIsa() allows it).
#include <immintrin.h>

#include "kernels/cpu/conv_depthwise_row.h"

namespace tsr {

void StridedAxpyAvx2(int64_t n, float a, const float* x, int64_t stride, float* y) {
  const __m256 va = _mm256_set1_ps(a);
  int64_t i = 0;
  if (stride == 1) {
    for (; i + 8 <= n; i += 8) {
      _mm256_storeu_ps(y + i, _mm256_fmadd_ps(va, _mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i)));
    }
  } else if (stride == 2) {
    // Even elements of x[2i, 2i+16). The loop stops one element early so the odd
    // element x[2i+15] it also loads is at most x[2(n-1)], which is read anyway.
    for (; i + 9 <= n; i += 8) {
      const __m256 lo = _mm256_loadu_ps(x + 2 * i), hi = _mm256_loadu_ps(x + 2 * i + 8);
      // Per 128-bit lane: lo0 lo2 hi0 hi2; then reorder the 64-bit pairs into x order.
      const __m256 even = _mm256_castpd_ps(_mm256_permute4x64_pd(
          _mm256_castps_pd(_mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(2, 0, 2, 0))), _MM_SHUFFLE(3, 1, 2, 0)));
      _mm256_storeu_ps(y + i, _mm256_fmadd_ps(va, even, _mm256_loadu_ps(y + i)));
    }
  }
  for (; i < n; ++i) y[i] = __builtin_fmaf(a, x[i * stride], y[i]);
}

namespace {

// Eight inputs row[iw], row[iw + stride], ... For stride 2, two loads and a shuffle
// when row[iw + 15] (one past the last element used) still lies in the row, else a
// gather (slow on some cores, so only for other strides and at row ends).
inline __m256 LoadColumns(const float* row, int64_t iw, int64_t in_w, int64_t stride, __m256i lane_offsets) {
  if (stride == 1) return _mm256_loadu_ps(row + iw);
  if (stride == 2 && iw + 16 <= in_w) {
    const __m256 lo = _mm256_loadu_ps(row + iw), hi = _mm256_loadu_ps(row + iw + 8);
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(2, 0, 2, 0))),
                                                  _MM_SHUFFLE(3, 1, 2, 0)));
  }
  return _mm256_i32gather_ps(row + iw, lane_offsets, 4);
}

// kGroups groups of eight outputs starting at output j, with independent sums so the
// multiply-adds of different groups overlap instead of waiting on one chain. The
// group loops are unrolled so the sums stay in registers.
template <int kGroups>
inline void DepthwiseGroups(const DepthwiseRowSpan& s, int64_t j, __m256i lane_offsets, float* y) {
  __m256 sum[kGroups];
#pragma GCC unroll 4
  for (int g = 0; g < kGroups; ++g) sum[g] = _mm256_set1_ps(s.bias);
  for (int64_t i = 0; i < s.kh_count; ++i) {
    const float* row = s.x + (s.ih_first + i * s.dilation_h) * s.in_w;
    const float* w = s.weights + i * s.kernel_w;
    for (int64_t k = 0; k < s.kernel_w; ++k) {
      const __m256 wk = _mm256_set1_ps(w[k]);
#pragma GCC unroll 4
      for (int g = 0; g < kGroups; ++g) {
        const int64_t iw = s.iw_first + (j + 8 * g) * s.stride_w + k * s.dilation_w;
        sum[g] = _mm256_fmadd_ps(wk, LoadColumns(row, iw, s.in_w, s.stride_w, lane_offsets), sum[g]);
      }
    }
  }
#pragma GCC unroll 4
  for (int g = 0; g < kGroups; ++g) _mm256_storeu_ps(y + j + 8 * g, sum[g]);
}

}  // namespace

void DepthwiseRowAvx2(const DepthwiseRowSpan& s, float* y) {
  const __m256i lane_offsets =
      _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32(static_cast<int>(s.stride_w)));
  // Groups of 32 outputs, then of 8; a last group overlaps the previous outputs when
  // n is not a multiple of its size (those are computed again, identically).
  int64_t j = 0;
  if (s.n >= 32) {
    for (; j < s.n; j += 32) DepthwiseGroups<4>(s, j + 32 <= s.n ? j : s.n - 32, lane_offsets, y);
    return;
  }
  for (; j < s.n; j += 8) DepthwiseGroups<1>(s, j + 8 <= s.n ? j : s.n - 8, lane_offsets, y);
}

}  // namespace tsr

// AVX2 + FMA loops of the depthwise Conv (compiled with -mavx2 -mfma; called only
// when ActiveCpuIsa() allows it): the row-wise loops for W strides above 2, then the
// padded-plane kernel used for strides 1 and 2.
#include <immintrin.h>

#include "kernels/cpu/avx2_lanes.h"
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

namespace tsr {

namespace {

// Row r of the padded copy: input row r - pad_top, shifted right by pad_left, zeros
// around it; with stride 2 deinterleaved into even and odd padded columns. Vector
// loads and stores only (whole input rows in blocks of 8 or 16, the last one masked,
// its zero lanes landing on padding): library memcpy calls cost more than the copy on
// these short rows. The zeros are written only when not already there.
void FillPaddedRows(const DepthwisePaddedPlane& p) {
  if (!p.zeros_present) {
    const __m256 zero = _mm256_setzero_ps();
    for (int64_t i = 0; i < p.rows * p.row_stride; i += 8) _mm256_storeu_ps(p.scratch + i, zero);
  }
  // Input rows only: the others stay zero.
  const int64_t r_begin = p.pad_top, r_end = p.pad_top + p.in_h < p.rows ? p.pad_top + p.in_h : p.rows;
  for (int64_t r = r_begin; r < r_end; ++r) {
    float* dst = p.scratch + r * p.row_stride;
    const float* src = p.x + (r - p.pad_top) * p.in_w;
    if (p.stride_w == 1) {
      float* out = dst + p.pad_left;
      int64_t i = 0;
      for (; i + 8 <= p.in_w; i += 8) _mm256_storeu_ps(out + i, _mm256_loadu_ps(src + i));
      if (i < p.in_w) _mm256_storeu_ps(out + i, _mm256_maskload_ps(src + i, FirstLanes(p.in_w - i)));
      continue;
    }
    // Padded column 2j + e is input column 2j + e - pad_left: with pad_left even the
    // input's even (odd) columns are the padded even (odd) ones, shifted by
    // pad_left / 2; with pad_left odd they swap parity.
    float* even_dst = dst + (p.pad_left % 2 == 0 ? p.pad_left / 2 : p.half + (p.pad_left - 1) / 2);
    float* odd_dst = dst + (p.pad_left % 2 == 0 ? p.half + p.pad_left / 2 : (p.pad_left + 1) / 2);
    for (int64_t i = 0; 2 * i < p.in_w; i += 8) {
      __m256 even, odd;
      DeinterleaveEvenOdd(src + 2 * i, p.in_w - 2 * i, even, odd);
      _mm256_storeu_ps(even_dst + i, even);
      _mm256_storeu_ps(odd_dst + i, odd);
    }
  }
}

// Stores the first `count` (1 to 8) lanes of v.
inline void StorePartial(float* y, __m256 v, int64_t count) {
  if (count >= 8) {
    _mm256_storeu_ps(y, v);
    return;
  }
  _mm256_maskstore_ps(y, FirstLanes(count), v);
}

// Outputs [ow, ow + 8 * kVecs) of output rows [oh, oh + kRows): kRows * kVecs
// independent sums (so the multiply-adds overlap instead of waiting on one chain),
// each accumulated in tap order. Lanes past out_w read padded columns and are not
// stored. kKernel: the kernel's height and width when fixed at compile time (so the
// tap loops unroll), or 0 for p.kernel_h x p.kernel_w.
template <int kKernel, int kRows, int kVecs>
inline void Block(const DepthwisePaddedPlane& p, int64_t oh, int64_t ow, float* y) {
  __m256 sum[kRows][kVecs];
#pragma GCC unroll 8
  for (int r = 0; r < kRows; ++r) {
#pragma GCC unroll 4
    for (int v = 0; v < kVecs; ++v) sum[r][v] = _mm256_set1_ps(p.bias);
  }
  const int64_t row_step = p.stride_h * p.row_stride;
  const int64_t kernel_h = kKernel > 0 ? kKernel : p.kernel_h, kernel_w = kKernel > 0 ? kKernel : p.kernel_w;
#pragma GCC unroll 3
  for (int64_t kh = 0; kh < kernel_h; ++kh) {
    const float* rows = p.scratch + (oh * p.stride_h + kh * p.dilation_h) * p.row_stride + ow;
#pragma GCC unroll 3
    for (int64_t kw = 0; kw < kernel_w; ++kw) {
      // Padded column ow * stride_w + t: column ow + t, or with stride 2 the even or
      // odd column (ow + t / 2) of the deinterleaved row.
      const int64_t t = kw * p.dilation_w;
      const float* src = rows + (p.stride_w == 1 ? t : ((t & 1) != 0 ? p.half : 0) + (t >> 1));
      const __m256 wk = _mm256_set1_ps(p.weights[kh * kernel_w + kw]);
#pragma GCC unroll 8
      for (int r = 0; r < kRows; ++r) {
#pragma GCC unroll 4
        for (int v = 0; v < kVecs; ++v) {
          sum[r][v] = _mm256_fmadd_ps(wk, _mm256_loadu_ps(src + r * row_step + 8 * v), sum[r][v]);
        }
      }
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < kRows; ++r) {
#pragma GCC unroll 4
    for (int v = 0; v < kVecs; ++v) {
      StorePartial(y + (oh + r) * p.out_w + ow + 8 * v, sum[r][v], p.out_w - ow - 8 * v);
    }
  }
}

// Every column of output rows [oh, oh + kRows): sixteen at a time, then eight.
template <int kKernel, int kRows>
inline void RowBlock(const DepthwisePaddedPlane& p, int64_t oh, float* y) {
  int64_t ow = 0;
  for (; p.out_w - ow > 8; ow += 16) Block<kKernel, kRows, 2>(p, oh, ow, y);
  if (ow < p.out_w) Block<kKernel, kRows, 1>(p, oh, ow, y);
}

template <int kKernel>
void AllRows(const DepthwisePaddedPlane& p, float* y) {
  int64_t oh = 0;
  for (; oh + 4 <= p.out_h; oh += 4) RowBlock<kKernel, 4>(p, oh, y);
  for (; oh < p.out_h; ++oh) RowBlock<kKernel, 1>(p, oh, y);
}

}  // namespace

void DepthwisePaddedPlaneAvx2(const DepthwisePaddedPlane& plane, float* y) {
  // A local copy the compiler can keep in registers: through the reference, every
  // field would be reloaded after each (possibly aliasing) store.
  const DepthwisePaddedPlane p = plane;
  FillPaddedRows(p);
  // 3x3 (MobileNet's and most depthwise layers) with its taps unrolled.
  if (p.kernel_h == 3 && p.kernel_w == 3) {
    AllRows<3>(p, y);
  } else {
    AllRows<0>(p, y);
  }
}

}  // namespace tsr

// AVX2 inner loops of the 2-D pooling kernels (compiled with -mavx2 -mfma; called only
// when ActiveCpuIsa() allows it). Stride-2 columns are split from pairs of loads,
// other strides gathered.
#include <immintrin.h>

#include <algorithm>

#include "kernels/cpu/avx2_lanes.h"
#include "kernels/cpu/pool_rows.h"

namespace tsr {

namespace {

// Eight inputs at columns iw, iw + stride, ..., of one row (in_w long): stride 2 as
// the even half of two loads (reading nothing past the row), others gathered.
inline __m256 LoadColumns(const float* row, int64_t iw, int64_t in_w, int64_t stride, __m256i lane_offsets) {
  if (stride == 1) return _mm256_loadu_ps(row + iw);
  if (stride == 2) {
    __m256 even, odd;
    DeinterleaveEvenOdd(row + iw, in_w - iw, even, odd);
    return even;
  }
  return _mm256_i32gather_ps(row + iw, lane_offsets, 4);
}

// best, replaced by v where v is strictly greater (a NaN never replaces, nor is replaced):
// MAXPS returns its second operand unless the first is greater.
inline __m256 KeepFirstMax(__m256 best, __m256 v) { return _mm256_max_ps(v, best); }

// MaxPoolRowAvx2 without indices for three adjacent taps at stride 2 (ResNet's 3x3/2
// stem pool): per window row, the taps iw0 + 2t and iw0 + 2t + 1 are the even and odd
// halves of two loads from iw0, and iw0 + 2t + 2 the even half of two from iw0 + 2 --
// four loads and four shuffles for the three taps of eight outputs, where the general
// loop deinterleaves two loads per tap.
void MaxPoolRow3Stride2(const PoolRowSpan& s, float* y) {
  for (int64_t step = 0; step < s.n; step += 8) {
    const int64_t j = step + 8 <= s.n ? step : s.n - 8;  // overlapped outputs: recomputed identically
    const int64_t iw0 = s.iw_first + 2 * j;
    __m256 best = _mm256_setzero_ps();
    for (int64_t i = 0; i < s.kh_count; ++i) {
      const float* row = s.x + (s.ih_first + i * s.dilation_h) * s.in_w;
      __m256 tap0, tap1, tap2, unused;
      DeinterleaveEvenOdd(row + iw0, s.in_w - iw0, tap0, tap1);
      DeinterleaveEvenOdd(row + iw0 + 2, s.in_w - iw0 - 2, tap2, unused);
      best = KeepFirstMax(i == 0 ? tap0 : KeepFirstMax(best, tap0), tap1);
      best = KeepFirstMax(best, tap2);
    }
    _mm256_storeu_ps(y + j, best);
  }
}

// MaxPoolRowAvx2, with or without the indices.
template <bool kIndices>
void MaxPoolRow(const PoolRowSpan& s, float* y, int64_t* indices, int64_t index_base, int64_t ih_mul, int64_t iw_mul) {
  const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i lane_offsets = _mm256_mullo_epi32(lanes, _mm256_set1_epi32(static_cast<int>(s.stride_w)));
  const __m256i index_steps = _mm256_mullo_epi32(lanes, _mm256_set1_epi32(static_cast<int>(s.stride_w * iw_mul)));
  for (int64_t step = 0; step < s.n; step += 8) {
    // The last group of eight overlaps the previous one when n is not a multiple of 8;
    // the overlapped outputs are computed again, identically.
    const int64_t j = step + 8 <= s.n ? step : s.n - 8;
    const int64_t iw0 = s.iw_first + j * s.stride_w;
    __m256 best = _mm256_setzero_ps();
    __m256i best_index = _mm256_setzero_si256();
    bool first = true;
    for (int64_t i = 0; i < s.kh_count; ++i) {
      const int64_t ih = s.ih_first + i * s.dilation_h;
      const float* row = s.x + ih * s.in_w;
      for (int64_t k = 0; k < s.kw_count; ++k) {
        const int64_t iw = iw0 + k * s.dilation_w;
        const __m256 v = LoadColumns(row, iw, s.in_w, s.stride_w, lane_offsets);
        __m256i index = _mm256_setzero_si256();
        if constexpr (kIndices) {
          index = _mm256_add_epi32(_mm256_set1_epi32(static_cast<int>(ih * ih_mul + iw * iw_mul)), index_steps);
        }
        if (first) {
          best = v;
          best_index = index;
          first = false;
          continue;
        }
        // Ordered compare: false when either is NaN, so a NaN never replaces and a
        // NaN first tap is kept -- the reference's `v > best`.
        if constexpr (kIndices) {
          const __m256 greater = _mm256_cmp_ps(v, best, _CMP_GT_OQ);
          best = _mm256_blendv_ps(best, v, greater);
          best_index = _mm256_castps_si256(
              _mm256_blendv_ps(_mm256_castsi256_ps(best_index), _mm256_castsi256_ps(index), greater));
        } else {
          best = KeepFirstMax(best, v);
        }
      }
    }
    _mm256_storeu_ps(y + j, best);
    if constexpr (kIndices) {
      const __m256i base = _mm256_set1_epi64x(index_base);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(indices + j),
                          _mm256_add_epi64(base, _mm256_cvtepi32_epi64(_mm256_castsi256_si128(best_index))));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(indices + j + 4),
                          _mm256_add_epi64(base, _mm256_cvtepi32_epi64(_mm256_extracti128_si256(best_index, 1))));
    }
  }
}

}  // namespace

void MaxPoolRowAvx2(const PoolRowSpan& s, float* y, int64_t* indices, int64_t index_base, int64_t ih_mul,
                    int64_t iw_mul) {
  if (indices == nullptr && s.kw_count == 3 && s.dilation_w == 1 && s.stride_w == 2) return MaxPoolRow3Stride2(s, y);
  if (indices == nullptr) return MaxPoolRow<false>(s, y, nullptr, 0, 0, 0);
  MaxPoolRow<true>(s, y, indices, index_base, ih_mul, iw_mul);
}

void MaxPool2x2PlaneAvx2(const float* x, int64_t in_w, int64_t out_h, int64_t out_w, float* y) {
  for (int64_t oh = 0; oh < out_h; ++oh) {
    const float* top = x + 2 * oh * in_w;
    const float* bottom = top + in_w;
    float* out = y + oh * out_w;
    for (int64_t ow = 0; ow < out_w; ow += 8) {
      // Columns 2 * ow .. 2 * ow + 15, of which the row has in_w - 2 * ow left.
      const int64_t left = in_w - 2 * ow;
      __m256 top_even, top_odd, bottom_even, bottom_odd;
      DeinterleaveEvenOdd(top + 2 * ow, left, top_even, top_odd);
      DeinterleaveEvenOdd(bottom + 2 * ow, left, bottom_even, bottom_odd);
      const __m256 best = KeepFirstMax(KeepFirstMax(KeepFirstMax(top_even, top_odd), bottom_even), bottom_odd);
      if (out_w - ow >= 8) {
        _mm256_storeu_ps(out + ow, best);
      } else {
        _mm256_maskstore_ps(out + ow, FirstLanes(out_w - ow), best);
      }
    }
  }
}

void MaxPoolGrad2x2PlaneAvx2(const float* x, const float* dy, int64_t in_h, int64_t in_w, int64_t out_h, int64_t out_w,
                             float* dx) {
  // The rows and columns no window covers (none when the windows tile the plane, as
  // LeNet's do): every other element is written below.
  const int64_t covered_w = 2 * out_w;
  if (covered_w < in_w) {
    for (int64_t ih = 0; ih < 2 * out_h; ++ih) std::fill(dx + ih * in_w + covered_w, dx + (ih + 1) * in_w, 0.0f);
  }
  std::fill(dx + 2 * out_h * in_w, dx + in_h * in_w, 0.0f);
  const __m256 zero = _mm256_setzero_ps();
  for (int64_t oh = 0; oh < out_h; ++oh) {
    const float* top = x + 2 * oh * in_w;
    const float* bottom = top + in_w;
    float* dtop = dx + 2 * oh * in_w;
    float* dbottom = dtop + in_w;
    const float* g_row = dy + oh * out_w;
    for (int64_t ow = 0; ow < out_w; ow += 8) {
      const int64_t left = in_w - 2 * ow, outputs = std::min<int64_t>(8, out_w - ow);
      __m256 top_even, top_odd, bottom_even, bottom_odd;
      DeinterleaveEvenOdd(top + 2 * ow, left, top_even, top_odd);
      DeinterleaveEvenOdd(bottom + 2 * ow, left, bottom_even, bottom_odd);
      // Which tap is the first maximum in row-major order: a later tap takes over only
      // where strictly greater (as KeepFirstMax).
      const __m256 later1 = _mm256_cmp_ps(top_odd, top_even, _CMP_GT_OQ);
      __m256 best = _mm256_blendv_ps(top_even, top_odd, later1);
      const __m256 later2 = _mm256_cmp_ps(bottom_even, best, _CMP_GT_OQ);
      best = _mm256_blendv_ps(best, bottom_even, later2);
      const __m256 later3 = _mm256_cmp_ps(bottom_odd, best, _CMP_GT_OQ);
      // 0 + dy: the bits of the plane kernels' zero fill plus dy (-0 becomes +0).
      const __m256 g = _mm256_add_ps(
          zero, outputs == 8 ? _mm256_loadu_ps(g_row + ow) : _mm256_maskload_ps(g_row + ow, FirstLanes(outputs)));
      const __m256 tap3 = _mm256_and_ps(later3, g);
      const __m256 tap2 = _mm256_andnot_ps(later3, _mm256_and_ps(later2, g));
      const __m256 tap1 = _mm256_andnot_ps(_mm256_or_ps(later2, later3), _mm256_and_ps(later1, g));
      const __m256 tap0 = _mm256_andnot_ps(_mm256_or_ps(later1, _mm256_or_ps(later2, later3)), g);
      InterleaveEvenOdd(tap0, tap1, dtop + 2 * ow, 2 * outputs);
      InterleaveEvenOdd(tap2, tap3, dbottom + 2 * ow, 2 * outputs);
    }
  }
}

void AveragePoolRowAvx2(const PoolRowSpan& s, float divisor, float* y) {
  const __m256i lane_offsets =
      _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32(static_cast<int>(s.stride_w)));
  const __m256 vdivisor = _mm256_set1_ps(divisor);
  for (int64_t step = 0; step < s.n; step += 8) {
    // The last group of eight overlaps the previous one when n is not a multiple of 8;
    // the overlapped outputs are computed again, identically.
    const int64_t j = step + 8 <= s.n ? step : s.n - 8;
    const int64_t iw0 = s.iw_first + j * s.stride_w;
    __m256 sum = _mm256_setzero_ps();
    for (int64_t i = 0; i < s.kh_count; ++i) {
      const float* row = s.x + (s.ih_first + i * s.dilation_h) * s.in_w;
      for (int64_t k = 0; k < s.kw_count; ++k) {
        sum = _mm256_add_ps(sum, LoadColumns(row, iw0 + k * s.dilation_w, s.in_w, s.stride_w, lane_offsets));
      }
    }
    _mm256_storeu_ps(y + j, _mm256_div_ps(sum, vdivisor));
  }
}

}  // namespace tsr

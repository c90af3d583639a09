// AVX2 inner loops of ConvTranspose's col2im (conv_transpose_row.h). Compiled with
// -mavx2 -mfma; only the extern entry points have external linkage.
#include <immintrin.h>

#include <algorithm>

#include "kernels/cpu/avx2_lanes.h"
#include "kernels/cpu/conv_transpose_row.h"

namespace tsr {

void AddLineAvx2(const float* src, int64_t n, float* dst) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm256_storeu_ps(dst + i, _mm256_add_ps(_mm256_loadu_ps(dst + i), _mm256_loadu_ps(src + i)));
  }
  for (; i < n; ++i) dst[i] += src[i];
}

namespace {

// Lanes [lo - base, hi - base) of 0-7 as all-ones: for the eight lanes that start at `base`.
__m256 LaneRange(int64_t lo, int64_t hi, int64_t base) {
  return _mm256_castsi256_ps(_mm256_andnot_si256(FirstLanes(lo - base), FirstLanes(hi - base)));
}

}  // namespace

void Col2ImNarrowChannelAvx2(const float* col, int64_t pixels, int64_t out_h, int64_t out_w, int64_t in_h, int64_t in_w,
                             int64_t kernel_h, int64_t kernel_w, int64_t pad_top, int64_t pad_left, float* y) {
  const __m256i row0 = FirstLanes(in_w), row1 = FirstLanes(in_w - 8);
  for (int64_t kh = 0; kh < kernel_h; ++kh) {
    const int64_t oh_begin = std::max<int64_t>(0, pad_top - kh);
    const int64_t oh_end = std::min<int64_t>(out_h, in_h + pad_top - kh);
    for (int64_t oh = oh_begin; oh < oh_end; ++oh) {
      float* dst = y + (oh + kh - pad_top) * in_w;
      __m256 acc0 = _mm256_maskload_ps(dst, row0);
      __m256 acc1 = _mm256_maskload_ps(dst + 8, row1);
      for (int64_t kw = 0; kw < kernel_w; ++kw) {
        // Image pixel i takes column pixel i - shift of this tap's row.
        const int64_t shift = kw - pad_left;
        const int64_t lo = std::max<int64_t>(0, shift), hi = std::min<int64_t>(in_w, out_w + shift);
        if (lo >= hi) continue;
        const float* src = col + (kh * kernel_w + kw) * pixels + oh * out_w - shift;
        const __m256 take0 = LaneRange(lo, hi, 0), take1 = LaneRange(lo, hi, 8);
        const __m256 v0 = _mm256_maskload_ps(src, _mm256_castps_si256(take0));
        const __m256 v1 = _mm256_maskload_ps(src + 8, _mm256_castps_si256(take1));
        // Lanes outside [lo, hi) keep their bits (adding a zero would turn -0 into +0).
        acc0 = _mm256_blendv_ps(acc0, _mm256_add_ps(acc0, v0), take0);
        acc1 = _mm256_blendv_ps(acc1, _mm256_add_ps(acc1, v1), take1);
      }
      _mm256_maskstore_ps(dst, row0, acc0);
      _mm256_maskstore_ps(dst + 8, row1, acc1);
    }
  }
}

}  // namespace tsr

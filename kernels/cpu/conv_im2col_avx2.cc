// AVX2 strided copy for im2col (compiled with -mavx2 -mfma; called only when
// ActiveCpuIsa() allows it).
#include <immintrin.h>

#include "kernels/cpu/conv_im2col_row.h"

namespace tsr {

void StridedCopyAvx2(const float* src, int64_t stride, int64_t n, float* dst) {
  int64_t i = 0;
  if (stride == 2) {
    // Even elements of src[2i, 2i + 16). The loop stops one element early so the odd
    // element src[2i + 15] it also loads is at most src[2(n - 1)], which is read anyway.
    for (; i + 9 <= n; i += 8) {
      const __m256 lo = _mm256_loadu_ps(src + 2 * i), hi = _mm256_loadu_ps(src + 2 * i + 8);
      // Per 128-bit lane: lo0 lo2 hi0 hi2; then reorder the 64-bit pairs into src order.
      _mm256_storeu_ps(
          dst + i, _mm256_castpd_ps(_mm256_permute4x64_pd(
                       _mm256_castps_pd(_mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(2, 0, 2, 0))), _MM_SHUFFLE(3, 1, 2, 0))));
    }
  }
  for (; i < n; ++i) dst[i] = src[i * stride];
}

}  // namespace tsr

// AVX2 line add of ConvTranspose's col2im (conv_transpose_row.h). Compiled with
// -mavx2 -mfma; only the extern entry point has external linkage.
#include <immintrin.h>

#include "kernels/cpu/conv_transpose_row.h"

namespace tsr {

void AddLineAvx2(const float* src, int64_t n, float* dst) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm256_storeu_ps(dst + i, _mm256_add_ps(_mm256_loadu_ps(dst + i), _mm256_loadu_ps(src + i)));
  }
  for (; i < n; ++i) dst[i] += src[i];
}

}  // namespace tsr

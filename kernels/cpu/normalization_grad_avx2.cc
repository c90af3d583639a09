// AVX2 + FMA inner loops of the f32 normalization gradients (see
// normalization_grad_simd.h). Compiled with -mavx2 -mfma; normalization_grad_kernels.cc
// calls them only when the CPU has both.
//
// Sums follow the forward kernels (normalization_avx2.cc): blocks of at most 16
// values per f32 lane are accumulated in f32 and widened into double accumulators,
// so the error stays a few f32 ulps of a block's sum however long the group.
//
// Everything here has internal linkage apart from Avx2NormalizationGradKernels; no
// templates from shared headers are instantiated.
#include <immintrin.h>

#include <cstdint>

#include "kernels/cpu/normalization_grad_simd.h"

namespace tsr {
namespace normalization_grad_internal {

namespace {

constexpr int64_t kBlock = 256;

inline double HorizontalSum(__m256d v) {
  const __m128d s = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
  return _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)));
}

inline __m256d Widened(__m256 v) {
  return _mm256_add_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(v)), _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)));
}

CenteredSums SumsAround(const float* x, const float* g, int64_t n, float mean) {
  const __m256 m = _mm256_set1_ps(mean);
  __m256d squares = _mm256_setzero_pd(), gsum = _mm256_setzero_pd(), gtimes = _mm256_setzero_pd();
  int64_t i = 0;
  while (n - i >= 16) {
    const int64_t avail = (n - i) & ~int64_t{15};
    const int64_t end = i + (avail < kBlock ? avail : kBlock);
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
    __m256 g0 = _mm256_setzero_ps(), g1 = _mm256_setzero_ps();
    __m256 t0 = _mm256_setzero_ps(), t1 = _mm256_setzero_ps();
    for (; i < end; i += 16) {
      const __m256 e0 = _mm256_sub_ps(_mm256_loadu_ps(x + i), m);
      const __m256 e1 = _mm256_sub_ps(_mm256_loadu_ps(x + i + 8), m);
      const __m256 y0 = _mm256_loadu_ps(g + i), y1 = _mm256_loadu_ps(g + i + 8);
      s0 = _mm256_fmadd_ps(e0, e0, s0), s1 = _mm256_fmadd_ps(e1, e1, s1);
      g0 = _mm256_add_ps(g0, y0), g1 = _mm256_add_ps(g1, y1);
      t0 = _mm256_fmadd_ps(y0, e0, t0), t1 = _mm256_fmadd_ps(y1, e1, t1);
    }
    squares = _mm256_add_pd(squares, Widened(_mm256_add_ps(s0, s1)));
    gsum = _mm256_add_pd(gsum, Widened(_mm256_add_ps(g0, g1)));
    gtimes = _mm256_add_pd(gtimes, Widened(_mm256_add_ps(t0, t1)));
  }
  CenteredSums s{HorizontalSum(squares), HorizontalSum(gsum), HorizontalSum(gtimes)};
  for (; i < n; ++i) {
    const double d = static_cast<double>(x[i]) - mean;
    s.squares += d * d;
    s.g += g[i];
    s.g_times += g[i] * d;
  }
  return s;
}

void Backward(const float* x, const float* g, int64_t n, float mean, float mean_low, float inv_std, float mean_g,
              float mean_gx, float* dx, float* xhat) {
  const __m256 m = _mm256_set1_ps(mean), low = _mm256_set1_ps(mean_low), s = _mm256_set1_ps(inv_std);
  const __m256 mg = _mm256_set1_ps(mean_g), mgx = _mm256_set1_ps(mean_gx);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 xv = _mm256_loadu_ps(x + i), gv = _mm256_loadu_ps(g + i);
    const __m256 normalized = _mm256_mul_ps(_mm256_sub_ps(_mm256_sub_ps(xv, m), low), s);
    const __m256 d = _mm256_mul_ps(_mm256_fnmadd_ps(normalized, mgx, _mm256_sub_ps(gv, mg)), s);
    _mm256_storeu_ps(dx + i, d);
    _mm256_storeu_ps(xhat + i, normalized);
  }
  for (; i < n; ++i) {
    const float xi = x[i], gi = g[i];
    const float normalized = ((xi - mean) - mean_low) * inv_std;
    dx[i] = (gi - mean_g - normalized * mean_gx) * inv_std;
    xhat[i] = normalized;
  }
}

}  // namespace

const NormalizationGradIsaKernels& Avx2NormalizationGradKernels() {
  static constexpr NormalizationGradIsaKernels kKernels = {SumsAround, Backward};
  return kKernels;
}

}  // namespace normalization_grad_internal
}  // namespace tsr

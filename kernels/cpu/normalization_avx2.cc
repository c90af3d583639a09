// AVX2 + FMA inner loops of the f32 normalizations (see normalization_simd.h).
// Compiled with -mavx2 -mfma; normalization_kernels.cc calls them only when the CPU
// has both.
//
// Sums: blocks of at most 16 values per f32 lane (512 values in four vectors) are
// accumulated in f32 and widened into double accumulators, so the error stays a few
// f32 ulps of a block's sum however long the row (the reference sums in double).
// The plain sum is taken of x - x[0] (exact for x near x[0]) so that data with a
// large mean and a small spread, common for activations, keeps its precision.
//
// Everything here has internal linkage apart from Avx2NormalizationKernels; no
// templates from shared headers are instantiated.
#include <immintrin.h>

#include <cstdint>

#include "kernels/cpu/normalization_simd.h"

namespace tsr {
namespace normalization_internal {

namespace {

constexpr int64_t kBlock = 512;

inline double HorizontalSum(__m256d v) {
  const __m128d s = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
  return _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)));
}

inline void AddWidened(__m256 v, __m256d& d0, __m256d& d1) {
  d0 = _mm256_add_pd(d0, _mm256_cvtps_pd(_mm256_castps256_ps128(v)));
  d1 = _mm256_add_pd(d1, _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)));
}

// Sums f(p[i]) over i < n, where f is x - mean (kSquares false) or (x - mean)^2.
template <bool kSquares>
double BlockedSum(const float* p, int64_t n, float mean) {
  const __m256 m = _mm256_set1_ps(mean);
  __m256d d0 = _mm256_setzero_pd(), d1 = _mm256_setzero_pd();
  int64_t i = 0;
  while (n - i >= 32) {
    const int64_t avail = (n - i) & ~int64_t{31};
    const int64_t end = i + (avail < kBlock ? avail : kBlock);
    __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps(), a2 = _mm256_setzero_ps(), a3 = _mm256_setzero_ps();
    for (; i < end; i += 32) {
      const __m256 x0 = _mm256_loadu_ps(p + i), x1 = _mm256_loadu_ps(p + i + 8);
      const __m256 x2 = _mm256_loadu_ps(p + i + 16), x3 = _mm256_loadu_ps(p + i + 24);
      if (kSquares) {
        const __m256 e0 = _mm256_sub_ps(x0, m), e1 = _mm256_sub_ps(x1, m);
        const __m256 e2 = _mm256_sub_ps(x2, m), e3 = _mm256_sub_ps(x3, m);
        a0 = _mm256_fmadd_ps(e0, e0, a0), a1 = _mm256_fmadd_ps(e1, e1, a1);
        a2 = _mm256_fmadd_ps(e2, e2, a2), a3 = _mm256_fmadd_ps(e3, e3, a3);
      } else {
        a0 = _mm256_add_ps(a0, _mm256_sub_ps(x0, m)), a1 = _mm256_add_ps(a1, _mm256_sub_ps(x1, m));
        a2 = _mm256_add_ps(a2, _mm256_sub_ps(x2, m)), a3 = _mm256_add_ps(a3, _mm256_sub_ps(x3, m));
      }
    }
    AddWidened(_mm256_add_ps(a0, a1), d0, d1);
    AddWidened(_mm256_add_ps(a2, a3), d0, d1);
  }
  for (; i + 8 <= n; i += 8) {
    __m256 x = _mm256_sub_ps(_mm256_loadu_ps(p + i), m);
    if (kSquares) x = _mm256_mul_ps(x, x);
    AddWidened(x, d0, d1);
  }
  double tail = 0.0;
  for (; i < n; ++i) {
    const double d = static_cast<double>(p[i]) - mean;
    tail += kSquares ? d * d : d;
  }
  return HorizontalSum(_mm256_add_pd(d0, d1)) + tail;
}

double Sum(const float* p, int64_t n) {
  if (n == 0) return 0.0;
  return BlockedSum<false>(p, n, p[0]) + static_cast<double>(n) * p[0];
}

double SquaredDeviationSum(const float* p, int64_t n, float mean) { return BlockedSum<true>(p, n, mean); }

void NormalizePlane(const float* x, int64_t n, float mean, float mul, float add, float* y) {
  const __m256 m = _mm256_set1_ps(mean), s = _mm256_set1_ps(mul), b = _mm256_set1_ps(add);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    _mm256_storeu_ps(y + i, _mm256_fmadd_ps(_mm256_sub_ps(_mm256_loadu_ps(x + i), m), s, b));
    _mm256_storeu_ps(y + i + 8, _mm256_fmadd_ps(_mm256_sub_ps(_mm256_loadu_ps(x + i + 8), m), s, b));
  }
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_fmadd_ps(_mm256_sub_ps(_mm256_loadu_ps(x + i), m), s, b));
  for (; i < n; ++i) y[i] = (x[i] - mean) * mul + add;
}

void NormalizeRow(const float* x, int64_t n, float mean, float mean_low, float inv_std, const float* scale,
                  const float* bias, float* y) {
  const __m256 m = _mm256_set1_ps(mean), low = _mm256_set1_ps(mean_low), s = _mm256_set1_ps(inv_std);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 centered = _mm256_sub_ps(_mm256_sub_ps(_mm256_loadu_ps(x + i), m), low);
    const __m256 normalized = _mm256_mul_ps(centered, s);
    _mm256_storeu_ps(y + i, _mm256_fmadd_ps(normalized, _mm256_loadu_ps(scale + i), _mm256_loadu_ps(bias + i)));
  }
  for (; i < n; ++i) y[i] = ((x[i] - mean) - mean_low) * inv_std * scale[i] + bias[i];
}

}  // namespace

const NormalizationIsaKernels& Avx2NormalizationKernels() {
  static constexpr NormalizationIsaKernels kKernels = {Sum, SquaredDeviationSum, NormalizePlane, NormalizeRow};
  return kKernels;
}

}  // namespace normalization_internal
}  // namespace tsr

// BlockPixelsAvx2 / UnblockPixelsAvx2 (conv_blocked_layout_row.h): eight pixels at a
// time, each half of the block (lanes 0-7, 8-15) through one 8x8 register transpose,
// masked loads and stores for the last pixels.
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "kernels/cpu/avx2_lanes.h"
#include "kernels/cpu/conv_blocked_layout_row.h"

namespace tsr {

namespace {

constexpr int64_t kLanes = 16;
constexpr int64_t kHalf = 8;

}  // namespace

void BlockPixelsAvx2(int64_t lanes, int64_t pixels, int64_t p0, int64_t p1, const float* src, float* dst) {
  __m256 r[kHalf];
  for (int64_t p = p0; p < p1; p += kHalf) {
    const int64_t n = std::min(kHalf, p1 - p);
    const __m256i mask = FirstLanes(n);
    float* out = dst + p * kLanes;
    for (int64_t h = 0; h < kLanes; h += kHalf) {
#pragma GCC unroll 8
      for (int64_t k = 0; k < kHalf; ++k) {
        const float* row = src + (h + k) * pixels + p;
        r[k] = h + k >= lanes ? _mm256_setzero_ps() : n == kHalf ? _mm256_loadu_ps(row) : _mm256_maskload_ps(row, mask);
      }
      Transpose8x8(r);
#pragma GCC unroll 8
      for (int64_t i = 0; i < kHalf; ++i) {
        if (i < n) _mm256_storeu_ps(out + i * kLanes + h, r[i]);
      }
    }
  }
}

void UnblockPixelsAvx2(int64_t lanes, int64_t pixels, int64_t p0, int64_t p1, const float* src, float* dst) {
  __m256 r[kHalf];
  for (int64_t p = p0; p < p1; p += kHalf) {
    const int64_t n = std::min(kHalf, p1 - p);
    const __m256i mask = FirstLanes(n);
    const float* in = src + p * kLanes;
    for (int64_t h = 0; h < lanes; h += kHalf) {
#pragma GCC unroll 8
      for (int64_t i = 0; i < kHalf; ++i) r[i] = i < n ? _mm256_loadu_ps(in + i * kLanes + h) : _mm256_setzero_ps();
      Transpose8x8(r);
#pragma GCC unroll 8
      for (int64_t k = 0; k < kHalf; ++k) {
        float* row = dst + (h + k) * pixels + p;
        if (h + k >= lanes) break;
        if (n == kHalf) {
          _mm256_storeu_ps(row, r[k]);
        } else {
          _mm256_maskstore_ps(row, mask, r[k]);
        }
      }
    }
  }
}

}  // namespace tsr

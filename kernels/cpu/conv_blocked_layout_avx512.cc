// BlockPixelsAvx512 / UnblockPixelsAvx512 (conv_blocked_layout_row.h): sixteen pixels at a
// time through one 16x16 register transpose, masked loads and stores for the last pixels
// and the channels past `lanes`.
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "kernels/cpu/avx512_transpose.h"
#include "kernels/cpu/conv_blocked_layout_row.h"

namespace tsr {

namespace {

constexpr int64_t kLanes = 16;

__mmask16 FirstLanes(int64_t n) { return n >= kLanes ? 0xFFFF : static_cast<__mmask16>((1u << n) - 1); }

}  // namespace

void BlockPixelsAvx512(int64_t lanes, int64_t pixels, int64_t p0, int64_t p1, const float* src, float* dst) {
  __m512 r[kLanes];
  for (int64_t p = p0; p < p1; p += kLanes) {
    const int64_t n = std::min(kLanes, p1 - p);
    const __mmask16 mask = FirstLanes(n);
#pragma GCC unroll 16
    for (int64_t l = 0; l < kLanes; ++l) {
      r[l] = l < lanes ? _mm512_maskz_loadu_ps(mask, src + l * pixels + p) : _mm512_setzero_ps();
    }
    Transpose16x16Avx512(r);
    float* out = dst + p * kLanes;
#pragma GCC unroll 16
    for (int64_t i = 0; i < kLanes; ++i) {
      if (i < n) _mm512_storeu_ps(out + i * kLanes, r[i]);
    }
  }
}

void UnblockPixelsAvx512(int64_t lanes, int64_t pixels, int64_t p0, int64_t p1, const float* src, float* dst) {
  __m512 r[kLanes];
  for (int64_t p = p0; p < p1; p += kLanes) {
    const int64_t n = std::min(kLanes, p1 - p);
    const float* in = src + p * kLanes;
#pragma GCC unroll 16
    for (int64_t i = 0; i < kLanes; ++i) r[i] = i < n ? _mm512_loadu_ps(in + i * kLanes) : _mm512_setzero_ps();
    Transpose16x16Avx512(r);
    const __mmask16 mask = FirstLanes(n);
#pragma GCC unroll 16
    for (int64_t l = 0; l < kLanes; ++l) {
      if (l < lanes) _mm512_mask_storeu_ps(dst + l * pixels + p, mask, r[l]);
    }
  }
}

}  // namespace tsr

// AVX2 build of the 4-byte blocked transpose (declared in kernels/cpu/transpose.h):
// 8x8 tiles transposed in registers with unpack/shuffle/permute, ragged edges by a
// plain loop. Compiled with -mavx2 -mfma; everything but the entry point has
// internal linkage (ODR: no shared templates or library code in here).
#include <immintrin.h>

#include <cstdint>

#include "kernels/cpu/transpose.h"

namespace tsr {

namespace {

// dst[j * ld_dst + k] = src[k * ld_src + j] for j, k < 8. The shuffles only move
// bits, so any 4-byte payload (NaN patterns included) passes through unchanged.
inline void Transpose8x8(const uint32_t* src, int64_t ld_src, uint32_t* dst, int64_t ld_dst) {
  __m256 r0 = _mm256_loadu_ps(reinterpret_cast<const float*>(src + 0 * ld_src));
  __m256 r1 = _mm256_loadu_ps(reinterpret_cast<const float*>(src + 1 * ld_src));
  __m256 r2 = _mm256_loadu_ps(reinterpret_cast<const float*>(src + 2 * ld_src));
  __m256 r3 = _mm256_loadu_ps(reinterpret_cast<const float*>(src + 3 * ld_src));
  __m256 r4 = _mm256_loadu_ps(reinterpret_cast<const float*>(src + 4 * ld_src));
  __m256 r5 = _mm256_loadu_ps(reinterpret_cast<const float*>(src + 5 * ld_src));
  __m256 r6 = _mm256_loadu_ps(reinterpret_cast<const float*>(src + 6 * ld_src));
  __m256 r7 = _mm256_loadu_ps(reinterpret_cast<const float*>(src + 7 * ld_src));
  const __m256 t0 = _mm256_unpacklo_ps(r0, r1);
  const __m256 t1 = _mm256_unpackhi_ps(r0, r1);
  const __m256 t2 = _mm256_unpacklo_ps(r2, r3);
  const __m256 t3 = _mm256_unpackhi_ps(r2, r3);
  const __m256 t4 = _mm256_unpacklo_ps(r4, r5);
  const __m256 t5 = _mm256_unpackhi_ps(r4, r5);
  const __m256 t6 = _mm256_unpacklo_ps(r6, r7);
  const __m256 t7 = _mm256_unpackhi_ps(r6, r7);
  const __m256 s0 = _mm256_shuffle_ps(t0, t2, 0x44);
  const __m256 s1 = _mm256_shuffle_ps(t0, t2, 0xEE);
  const __m256 s2 = _mm256_shuffle_ps(t1, t3, 0x44);
  const __m256 s3 = _mm256_shuffle_ps(t1, t3, 0xEE);
  const __m256 s4 = _mm256_shuffle_ps(t4, t6, 0x44);
  const __m256 s5 = _mm256_shuffle_ps(t4, t6, 0xEE);
  const __m256 s6 = _mm256_shuffle_ps(t5, t7, 0x44);
  const __m256 s7 = _mm256_shuffle_ps(t5, t7, 0xEE);
  r0 = _mm256_permute2f128_ps(s0, s4, 0x20);
  r1 = _mm256_permute2f128_ps(s1, s5, 0x20);
  r2 = _mm256_permute2f128_ps(s2, s6, 0x20);
  r3 = _mm256_permute2f128_ps(s3, s7, 0x20);
  r4 = _mm256_permute2f128_ps(s0, s4, 0x31);
  r5 = _mm256_permute2f128_ps(s1, s5, 0x31);
  r6 = _mm256_permute2f128_ps(s2, s6, 0x31);
  r7 = _mm256_permute2f128_ps(s3, s7, 0x31);
  _mm256_storeu_ps(reinterpret_cast<float*>(dst + 0 * ld_dst), r0);
  _mm256_storeu_ps(reinterpret_cast<float*>(dst + 1 * ld_dst), r1);
  _mm256_storeu_ps(reinterpret_cast<float*>(dst + 2 * ld_dst), r2);
  _mm256_storeu_ps(reinterpret_cast<float*>(dst + 3 * ld_dst), r3);
  _mm256_storeu_ps(reinterpret_cast<float*>(dst + 4 * ld_dst), r4);
  _mm256_storeu_ps(reinterpret_cast<float*>(dst + 5 * ld_dst), r5);
  _mm256_storeu_ps(reinterpret_cast<float*>(dst + 6 * ld_dst), r6);
  _mm256_storeu_ps(reinterpret_cast<float*>(dst + 7 * ld_dst), r7);
}

}  // namespace

void TransposeBlock4Avx2(const uint32_t* src, int64_t ld_src, uint32_t* dst, int64_t ld_dst, int64_t rows,
                         int64_t cols) {
  const int64_t rows8 = rows - rows % 8, cols8 = cols - cols % 8;
  // 16x16 macro-tiles of four 8x8 tiles: each reads 16 whole 64-byte source lines and
  // writes 16 whole destination lines, so no partly used line has to stay cached
  // (power-of-two leading dimensions map all of them to a few cache sets).
  const int64_t rows16 = rows - rows % 16, cols16 = cols - cols % 16;
  for (int64_t c = 0; c < cols16; c += 16) {
    for (int64_t r = 0; r < rows16; r += 16) {
      Transpose8x8(src + c * ld_src + r, ld_src, dst + r * ld_dst + c, ld_dst);
      Transpose8x8(src + (c + 8) * ld_src + r, ld_src, dst + r * ld_dst + c + 8, ld_dst);
      Transpose8x8(src + c * ld_src + r + 8, ld_src, dst + (r + 8) * ld_dst + c, ld_dst);
      Transpose8x8(src + (c + 8) * ld_src + r + 8, ld_src, dst + (r + 8) * ld_dst + c + 8, ld_dst);
    }
    for (int64_t r = rows16; r < rows8; r += 8) {
      Transpose8x8(src + c * ld_src + r, ld_src, dst + r * ld_dst + c, ld_dst);
      Transpose8x8(src + (c + 8) * ld_src + r, ld_src, dst + r * ld_dst + c + 8, ld_dst);
    }
  }
  for (int64_t c = cols16; c < cols8; c += 8) {
    for (int64_t r = 0; r < rows8; r += 8) Transpose8x8(src + c * ld_src + r, ld_src, dst + r * ld_dst + c, ld_dst);
  }
  // Ragged edges: the last cols % 8 columns of the full rows, then the last rows % 8 rows.
  for (int64_t r = 0; r < rows8; ++r) {
    for (int64_t cc = cols8; cc < cols; ++cc) dst[r * ld_dst + cc] = src[cc * ld_src + r];
  }
  for (int64_t r = rows8; r < rows; ++r) {
    for (int64_t cc = 0; cc < cols; ++cc) dst[r * ld_dst + cc] = src[cc * ld_src + r];
  }
}

}  // namespace tsr

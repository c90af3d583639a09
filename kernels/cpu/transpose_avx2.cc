// AVX2 build of the 4-byte blocked transpose (declared in kernels/cpu/transpose.h):
// 8x8 tiles transposed in registers with unpack/shuffle/permute, ragged edges by a
// plain loop. Compiled with -mavx2 -mfma; everything but the entry point has
// internal linkage (ODR: no shared templates or library code in here).
#include <immintrin.h>

#include <cstdint>

#include "kernels/cpu/avx2_lanes.h"
#include "kernels/cpu/transpose.h"

namespace tsr {

namespace {

// dst[j * ld_dst + k] = src[k * ld_src + j] for j, k < 8. Loads, stores and shuffles
// only move bits, so any 4-byte payload (NaN patterns included) passes through unchanged.
inline void Transpose8x8(const uint32_t* src, int64_t ld_src, uint32_t* dst, int64_t ld_dst) {
  __m256 r[8];
#pragma GCC unroll 8
  for (int k = 0; k < 8; ++k) r[k] = _mm256_loadu_ps(reinterpret_cast<const float*>(src + k * ld_src));
  Transpose8x8(r);
#pragma GCC unroll 8
  for (int j = 0; j < 8; ++j) _mm256_storeu_ps(reinterpret_cast<float*>(dst + j * ld_dst), r[j]);
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

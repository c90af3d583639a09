// A 16x16 float transpose in AVX-512 registers, for the files compiled with
// -mavx512f (cpu/*_avx512.cc) only: GEMM's packing of A strips and the channel-blocked
// depthwise convolution's moves between planes and pixel vectors.
#ifndef TESSERA_KERNELS_CPU_AVX512_TRANSPOSE_H_
#define TESSERA_KERNELS_CPU_AVX512_TRANSPOSE_H_

#include <immintrin.h>

namespace tsr {

// The shuffles in their masked forms with every lane selected (the same instructions):
// GCC 12 warns that the unmasked forms' undefined pass-through is uninitialized.
constexpr __mmask16 kAllLanes16 = 0xFFFF;
#define TSR_UNPACKLO(a, b) _mm512_mask_unpacklo_ps((a), kAllLanes16, (a), (b))
#define TSR_UNPACKHI(a, b) _mm512_mask_unpackhi_ps((a), kAllLanes16, (a), (b))
#define TSR_SHUFFLE(a, b, imm) _mm512_mask_shuffle_ps((a), kAllLanes16, (a), (b), (imm))
#define TSR_SHUFFLE_F32X4(a, b, imm) _mm512_mask_shuffle_f32x4((a), kAllLanes16, (a), (b), (imm))

// In place: r[i] lane j becomes r[j] lane i. Pairs of rows interleaved, then groups of
// four, then 128-bit lanes twice: 64 shuffles.
// Always inlined: as a call its arrays would go through memory.
__attribute__((always_inline)) inline void Transpose16x16Avx512(__m512 r[16]) {
  // t: per 128-bit lane L, rows 2i and 2i+1 interleaved at columns 4L, 4L+1 (even t)
  // and 4L+2, 4L+3 (odd t).
  __m512 t[16];
#pragma GCC unroll 8
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = TSR_UNPACKLO(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = TSR_UNPACKHI(r[2 * i], r[2 * i + 1]);
  }
  // u[4g + j], lane L: rows 4g..4g+3 at column 4L + j.
  __m512 u[16];
#pragma GCC unroll 4
  for (int g = 0; g < 4; ++g) {
    u[4 * g + 0] = TSR_SHUFFLE(t[4 * g], t[4 * g + 2], 0x44);
    u[4 * g + 1] = TSR_SHUFFLE(t[4 * g], t[4 * g + 2], 0xEE);
    u[4 * g + 2] = TSR_SHUFFLE(t[4 * g + 1], t[4 * g + 3], 0x44);
    u[4 * g + 3] = TSR_SHUFFLE(t[4 * g + 1], t[4 * g + 3], 0xEE);
  }
  // Column 4L + j: lane L of u[j], u[4 + j], u[8 + j], u[12 + j].
#pragma GCC unroll 4
  for (int j = 0; j < 4; ++j) {
    const __m512 v02 = TSR_SHUFFLE_F32X4(u[j], u[4 + j], 0x88);  // lanes 0, 2 of each
    const __m512 v13 = TSR_SHUFFLE_F32X4(u[j], u[4 + j], 0xDD);  // lanes 1, 3
    const __m512 w02 = TSR_SHUFFLE_F32X4(u[8 + j], u[12 + j], 0x88);
    const __m512 w13 = TSR_SHUFFLE_F32X4(u[8 + j], u[12 + j], 0xDD);
    r[0 + j] = TSR_SHUFFLE_F32X4(v02, w02, 0x88);
    r[8 + j] = TSR_SHUFFLE_F32X4(v02, w02, 0xDD);
    r[4 + j] = TSR_SHUFFLE_F32X4(v13, w13, 0x88);
    r[12 + j] = TSR_SHUFFLE_F32X4(v13, w13, 0xDD);
  }
}

#undef TSR_UNPACKLO
#undef TSR_UNPACKHI
#undef TSR_SHUFFLE
#undef TSR_SHUFFLE_F32X4

}  // namespace tsr

#endif  // TESSERA_KERNELS_CPU_AVX512_TRANSPOSE_H_

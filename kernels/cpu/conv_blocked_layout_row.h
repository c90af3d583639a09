// The AVX-512 and AVX2 inner loops of the channel-blocked layout's conversions
// (conv_blocked.cc's BlockChannels / UnblockChannels), in conv_blocked_layout_avx512.cc
// and conv_blocked_layout_avx2.cc. Kept apart from
// conv_blocked.h so the ISA file includes nothing with inline functions or templates.
#ifndef TESSERA_KERNELS_CPU_CONV_BLOCKED_LAYOUT_ROW_H_
#define TESSERA_KERNELS_CPU_CONV_BLOCKED_LAYOUT_ROW_H_

#include <cstdint>

namespace tsr {

// Pixels [p0, p1) of one block: `lanes` (1..16) channel rows src + l * pixels into the
// pixel vectors dst + p * 16, zeros in lanes [lanes, 16).
void BlockPixelsAvx512(int64_t lanes, int64_t pixels, int64_t p0, int64_t p1, const float* src, float* dst);
void BlockPixelsAvx2(int64_t lanes, int64_t pixels, int64_t p0, int64_t p1, const float* src, float* dst);

// The inverse: pixel vectors src + p * 16 into the first `lanes` channel rows dst + l * pixels.
void UnblockPixelsAvx512(int64_t lanes, int64_t pixels, int64_t p0, int64_t p1, const float* src, float* dst);
void UnblockPixelsAvx2(int64_t lanes, int64_t pixels, int64_t p0, int64_t p1, const float* src, float* dst);

}  // namespace tsr

#endif  // TESSERA_KERNELS_CPU_CONV_BLOCKED_LAYOUT_ROW_H_

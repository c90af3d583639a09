// AVX-512F loops of the direct small-channel convolution's forward pass (conv_direct.h;
// compiled with -mavx512f -mfma, called only when ActiveCpuIsa() allows it): the AVX2
// loop's scheme over zmm registers. A block of up to 6 output channels by up to 4
// vectors of 16 pixels holds 24 accumulators; each (channel, tap) row loads the block's
// input vectors once and broadcasts each channel's weight once, 4 + 6 loads per 24
// multiply-adds (the AVX2 loop's 4 x 3 block: 3 + 4 per 12). The sums go straight into
// the output planes, each vector's valid lanes compressed into one run (the AVX2 loop
// writes padded rows that a second pass copies out). Everything here but the entry
// point of conv_direct_rows.h has internal linkage.
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "kernels/cpu/conv_direct_rows.h"

namespace tsr {

namespace {

// The output of one block of channels: stores, the block's bias (null: + 0, as the
// AVX2 loop's copy adds) and its first channel's plane.
struct BlockOutput {
  const DirectForwardStores* stores;
  const float* bias;
  float* y;
  int64_t y_stride;
};

// Output channels [0, kMb) x pixels [q, q + 16 * kQv), the weights of this block of
// channels packed as w[r * kMb + i]. The loops over the block's fixed dimensions are
// unrolled (`#pragma GCC unroll`) so that the accumulators live in registers.
template <int kMb, int kQv>
inline void ForwardBlock(const float* xp, const int64_t* offsets, int64_t rows, const float* w, int64_t q,
                         const BlockOutput& out) {
  __m512 acc[kMb][kQv];
#pragma GCC unroll 8
  for (int i = 0; i < kMb; ++i) {
#pragma GCC unroll 8
    for (int j = 0; j < kQv; ++j) acc[i][j] = _mm512_setzero_ps();
  }
  const float* x = xp + q;
  for (int64_t r = 0; r < rows; ++r, w += kMb) {
    const float* xr = x + offsets[r];
    __m512 xv[kQv];
#pragma GCC unroll 8
    for (int j = 0; j < kQv; ++j) xv[j] = _mm512_loadu_ps(xr + 16 * j);
#pragma GCC unroll 8
    for (int i = 0; i < kMb; ++i) {
      const __m512 wv = _mm512_set1_ps(w[i]);
#pragma GCC unroll 8
      for (int j = 0; j < kQv; ++j) acc[i][j] = _mm512_fmadd_ps(wv, xv[j], acc[i][j]);
    }
  }
#pragma GCC unroll 8
  for (int j = 0; j < kQv; ++j) {
    const int64_t v = q / 16 + j;
    const uint32_t lanes = out.stores->lanes[v];
    const __mmask16 valid = _cvtu32_mask16(lanes);
    const __mmask16 run = _cvtu32_mask16((1u << __builtin_popcount(lanes)) - 1u);
    float* y = out.y + out.stores->first[v];
#pragma GCC unroll 8
    for (int i = 0; i < kMb; ++i) {
      const __m512 sum = _mm512_add_ps(acc[i][j], _mm512_set1_ps(out.bias != nullptr ? out.bias[i] : 0.0f));
      _mm512_mask_storeu_ps(y + i * out.y_stride, run, _mm512_maskz_compress_ps(valid, sum));
    }
  }
}

// ForwardBlock's and ForwardChannels' signature (the int64_t: q, or pixels).
using KernelFn = void (*)(const float*, const int64_t*, int64_t, const float*, int64_t, const BlockOutput&);

// All pixels of kMb channels: steps of 4 vectors, then one narrower step for the rest.
template <int kMb>
void ForwardChannels(const float* xp, const int64_t* offsets, int64_t rows, const float* w, int64_t pixels,
                     const BlockOutput& out) {
  static constexpr KernelFn kTails[] = {&ForwardBlock<kMb, 1>, &ForwardBlock<kMb, 2>, &ForwardBlock<kMb, 3>};
  constexpr int64_t kStep = 16 * kDirectForwardVectorsAvx512;
  int64_t q = 0;
  for (; q + kStep <= pixels; q += kStep) ForwardBlock<kMb, kDirectForwardVectorsAvx512>(xp, offsets, rows, w, q, out);
  if (const int64_t tail = (pixels - q) / 16; tail > 0) kTails[tail - 1](xp, offsets, rows, w, q, out);
}

// ForwardChannels by block size, 1 to kDirectForwardChannelsAvx512.
constexpr KernelFn kForwardChannels[] = {&ForwardChannels<1>, &ForwardChannels<2>, &ForwardChannels<3>,
                                         &ForwardChannels<4>, &ForwardChannels<5>, &ForwardChannels<6>};

static_assert(kDirectForwardChannelsAvx512 == 6 && kDirectForwardVectorsAvx512 == 4,
              "kForwardChannels and the register budget assume a 6 x 4 block");

}  // namespace

void ConvDirectForwardAvx512(const float* xp, const int64_t* offsets, int64_t rows, const float* packed_weights,
                             int64_t channels_out, int64_t pixels, const DirectForwardStores& stores, const float* bias,
                             float* y, int64_t y_stride) {
  for (int64_t m = 0; m < channels_out; m += kDirectForwardChannelsAvx512) {
    const BlockOutput out{&stores, bias != nullptr ? bias + m : nullptr, y + m * y_stride, y_stride};
    kForwardChannels[std::min(channels_out - m, kDirectForwardChannelsAvx512) - 1](
        xp, offsets, rows, packed_weights + m * rows, pixels, out);
  }
}

}  // namespace tsr

// The channel-blocked direct convolution's register-blocked kernel (AVX-512F; see
// BlockedDirectRow in conv_blocked_direct_row.h), in the manner of oneDNN's
// jit_avx512_common_conv forward kernel: a strip of W output pixels of one row times
// B output blocks of sixteen channels is held in B * W vector accumulators; for every
// input channel of every tap, B weight vectors are loaded once and each of the W
// pixels' input value is broadcast once and multiplied into its B accumulators, so
// each load feeds several multiply-adds. Strips whose taps all lie inside the input
// (the interior of a row) run without any test; strips at a row's ends skip the
// pixels a tap column misses with one predictable branch per pixel and channel.
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>

#include "kernels/cpu/conv_blocked_direct_row.h"

namespace tsr {

namespace {

constexpr int64_t kLanes = 16;
constexpr int64_t kTapFloats = kLanes * kLanes;

// Pixels [ow0, ow0 + W) of the row for B output blocks. kEdge: some tap column lies
// outside the input for some pixel. kStep: the floats from one pixel's input to the
// next (stride_w * pixel_stride) when known at compile time, so that the pixels'
// loads address the same register with constant offsets; 0: read from r.
template <int B, int W, bool kEdge, int kStep>
void Strip(const BlockedDirectRow& r, int64_t ow0) {
  __m512 acc[B][W];
#pragma GCC unroll 4
  for (int o = 0; o < B; ++o) {
    const __m512 init = r.bias != nullptr ? _mm512_loadu_ps(r.bias + o * kLanes) : _mm512_setzero_ps();
#pragma GCC unroll 28
    for (int j = 0; j < W; ++j) acc[o][j] = init;
  }
  const int64_t cs = r.channel_stride, wbs = r.weight_block_stride;
  const int64_t step = kStep != 0 ? kStep : r.stride_w * r.pixel_stride;
  const int64_t col0 = ow0 * r.stride_w - r.pad_left;
  const int64_t taps = r.kernel_h * r.kernel_w;
  for (int64_t b = 0; b < r.in_blocks; ++b) {
    const int64_t channels = b + 1 == r.in_blocks ? r.last_block_channels : kLanes;
    const float* xb = r.x + b * r.block_stride;
    const float* wb = r.weights + b * taps * kTapFloats;
    const int64_t tap_floats = channels * kLanes;
    for (int64_t kh = r.kh_begin; kh < r.kh_end; ++kh) {
      const float* x_row = xb + (r.in_row0 + kh) * r.row_stride;
      for (int64_t kw = 0; kw < r.kernel_w; ++kw) {
        const int64_t col = col0 + kw;
        // kEdge: bit j set when pixel j's input column lies inside the input.
        uint32_t valid = 0;
        if constexpr (kEdge) {
          const int64_t jlo = col >= 0 ? 0 : (-col + r.stride_w - 1) / r.stride_w;
          const int64_t last = r.in_w - 1 - col;
          const int64_t jhi = last < 0 ? 0 : std::min<int64_t>(W, last / r.stride_w + 1);
          if (jlo >= jhi) continue;
          valid = static_cast<uint32_t>(((uint64_t{1} << jhi) - 1) & ~((uint64_t{1} << jlo) - 1));
        }
        const float* xp = x_row + col * r.pixel_stride;
        const float* wp = wb + (kh * r.kernel_w + kw) * tap_floats;
        for (int64_t i = 0; i < channels; ++i) {
          __m512 w[B];
#pragma GCC unroll 4
          for (int o = 0; o < B; ++o) w[o] = _mm512_load_ps(wp + o * wbs);
#pragma GCC unroll 28
          for (int j = 0; j < W; ++j) {
            if (!kEdge || (valid & (1u << j)) != 0) {
              const __m512 v = _mm512_set1_ps(xp[j * step]);
#pragma GCC unroll 4
              for (int o = 0; o < B; ++o) acc[o][j] = _mm512_fmadd_ps(w[o], v, acc[o][j]);
            }
          }
          xp += cs;
          wp += kLanes;
        }
      }
    }
  }
  const __mmask16 last_mask = static_cast<__mmask16>((1u << r.last_block_lanes) - 1);
  const __m512 clamp_lo = _mm512_set1_ps(r.clamp_lo), clamp_hi = _mm512_set1_ps(r.clamp_hi);
#pragma GCC unroll 4
  for (int o = 0; o < B; ++o) {
    float* y = r.y + o * r.y_block_stride + ow0 * kLanes;
    const float* z = r.residual != nullptr ? r.residual + o * r.y_block_stride + ow0 * kLanes : nullptr;
    const __mmask16 mask = o + 1 == B ? last_mask : static_cast<__mmask16>(0xFFFF);
#pragma GCC unroll 28
    for (int j = 0; j < W; ++j) {
      __m512 v = acc[o][j];
      if (z != nullptr) v = _mm512_add_ps(v, _mm512_loadu_ps(z + j * kLanes));
      if (r.clamp == BlockedDirectClamp::kRelu) {
        v = _mm512_maskz_mov_ps(static_cast<__mmask16>(~_mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_LT_OQ)), v);
      } else if (r.clamp == BlockedDirectClamp::kClip) {
        v = _mm512_min_ps(clamp_hi, _mm512_max_ps(clamp_lo, v));
      }
      _mm512_storeu_ps(y + j * kLanes, _mm512_maskz_mov_ps(mask, v));
    }
  }
}

using StripFn = void (*)(const BlockedDirectRow&, int64_t);

// The steps with kernels of their own: blocked input at strides 1 and 2, plain input
// at stride 2 (a network's first convolution); other steps read it at run time.
constexpr int kSteps[] = {0, 16, 32, 2};
constexpr int kStepCount = 4;

// The kernels of one (B, W) by step index and edge. A run-time step costs every pixel's
// broadcast an index register: past ~14 pixels (one output block's wide strips) they
// no longer fit, and the compiler reloads each offset from the stack before its
// multiply-add (pointwise 32-16 @112 ran at 85 GFLOP/s, 78% of peak, so).
template <int B, int W>
constexpr std::array<StripFn, 2 * kStepCount> WidthEntry() {
  return {&Strip<B, W, false, 0>,  &Strip<B, W, true, 0>,  &Strip<B, W, false, 16>, &Strip<B, W, true, 16>,
          &Strip<B, W, false, 32>, &Strip<B, W, true, 32>, &Strip<B, W, false, 2>,  &Strip<B, W, true, 2>};
}

template <int B, int... Ws>
constexpr std::array<std::array<StripFn, 2 * kStepCount>, sizeof...(Ws)> StripTable(std::integer_sequence<int, Ws...>) {
  return {WidthEntry<B, Ws + 1>()...};
}

template <int B>
StripFn StripFor(int64_t width, bool edge, int step_index) {
  static constexpr auto kTable = StripTable<B>(std::make_integer_sequence<int, kBlockedDirectMaxWidth[B]>());
  return kTable[width - 1][2 * step_index + (edge ? 1 : 0)];
}

StripFn StripFor(int64_t blocks, int64_t width, bool edge, int step_index) {
  switch (blocks) {
    case 1:
      return StripFor<1>(width, edge, step_index);
    case 2:
      return StripFor<2>(width, edge, step_index);
    case 3:
      return StripFor<3>(width, edge, step_index);
    default:
      return StripFor<4>(width, edge, step_index);
  }
}

}  // namespace

void BlockedDirectRowAvx512(const BlockedDirectRow& r) {
  const int64_t n = r.ow_end - r.ow_begin;
  if (n <= 0) return;
  // The pixels whose every tap column lies inside the input: [interior_begin, interior_end).
  const int64_t interior_begin = (r.pad_left + r.stride_w - 1) / r.stride_w;
  const int64_t last_start = r.in_w - r.kernel_w + r.pad_left;  // the largest ow * stride_w still fitting
  const int64_t interior_end = last_start < 0 ? 0 : last_start / r.stride_w + 1;
  int step_index = 0;
  for (int i = 1; i < kStepCount; ++i) {
    if (r.stride_w * r.pixel_stride == kSteps[i]) step_index = i;
  }
  // Strips of balanced widths, at most max_width.
  const int64_t strips = (n + r.max_width - 1) / r.max_width;
  const int64_t base = n / strips, wider = n % strips;
  int64_t ow = r.ow_begin;
  for (int64_t s = 0; s < strips; ++s) {
    const int64_t width = base + (s < wider ? 1 : 0);
    const bool edge = ow < interior_begin || ow + width > interior_end;
    StripFor(r.out_blocks, width, edge, step_index)(r, ow);
    ow += width;
  }
}

}  // namespace tsr

// The channel-blocked direct convolution's register-blocked kernel (see
// BlockedDirectRow in conv_blocked_direct_row.h), written once over the channel-block
// vector (channel_block_simd.h) and instantiated by conv_blocked_direct_avx512.cc and
// conv_blocked_direct_avx2.cc with their strip widths. In the manner of oneDNN's
// jit_avx512_common_conv forward kernel: a strip of W output pixels of one row times
// B output blocks of sixteen channels is held in B * W vector accumulators; for every
// input channel of every tap, B weight vectors are loaded once and each of the W
// pixels' input value is broadcast once and multiplied into its B accumulators, so
// each load feeds several multiply-adds. Strips whose taps all lie inside the input
// (the interior of a row) run without any test; strips at a row's ends skip the
// pixels a tap column misses with one predictable branch per pixel and channel.
//
// Included ONLY by the per-ISA files: internal linkage throughout (see
// gemm_microkernel_simd.h).
#ifndef TESSERA_KERNELS_CPU_CONV_BLOCKED_DIRECT_SIMD_H_
#define TESSERA_KERNELS_CPU_CONV_BLOCKED_DIRECT_SIMD_H_

#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>

#include "kernels/cpu/conv_blocked_direct_row.h"

namespace tsr {
namespace blocked_direct_internal {
namespace {

constexpr int64_t kLanes = 16;
constexpr int64_t kTapFloats = kLanes * kLanes;

// V: the channel-block vector traits; kMaxWidth[B]: the widest strip for B output
// blocks (0: B is not taken).
template <class V, const int64_t* kMaxWidth>
struct DirectKernel {
  using Vec = typename V::Vec;

  // Pixels [ow0, ow0 + W) of the row for B output blocks. kEdge: some tap column lies
  // outside the input for some pixel. kStep: the floats from one pixel's input to the
  // next (stride_w * pixel_stride) when known at compile time, so that the pixels'
  // loads address the same register with constant offsets; 0: read from r.
  template <int B, int W, bool kEdge, int kStep>
  static void Strip(const BlockedDirectRow& r, int64_t ow0) {
    Vec acc[B][W];
#pragma GCC unroll 4
    for (int o = 0; o < B; ++o) {
      const Vec init = r.bias != nullptr ? V::LoadU(r.bias + o * kLanes) : V::Zero();
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
            Vec w[B];
#pragma GCC unroll 4
            for (int o = 0; o < B; ++o) w[o] = V::Load(wp + o * wbs);
#pragma GCC unroll 28
            for (int j = 0; j < W; ++j) {
              if (!kEdge || (valid & (1u << j)) != 0) {
                const typename V::Bcast v = V::Broadcast(xp[j * step]);
#pragma GCC unroll 4
                for (int o = 0; o < B; ++o) acc[o][j] = V::Fma(w[o], v, acc[o][j]);
              }
            }
            xp += cs;
            wp += kLanes;
          }
        }
      }
    }
    const typename V::Mask last_mask = V::FirstLanes(r.last_block_lanes);
    const typename V::Mask all = V::FirstLanes(kLanes);
    const Vec clamp_lo = V::Set1(r.clamp_lo), clamp_hi = V::Set1(r.clamp_hi);
#pragma GCC unroll 4
    for (int o = 0; o < B; ++o) {
      float* y = r.y + o * r.y_block_stride + ow0 * kLanes;
      const float* z = r.residual != nullptr ? r.residual + o * r.y_block_stride + ow0 * kLanes : nullptr;
      const typename V::Mask mask = o + 1 == B ? last_mask : all;
#pragma GCC unroll 28
      for (int j = 0; j < W; ++j) {
        Vec v = acc[o][j];
        if (z != nullptr) v = V::Add(v, V::LoadU(z + j * kLanes));
        v = ClampBlock<V>(r.clamp, v, clamp_lo, clamp_hi);
        V::StoreZeroing(y + j * kLanes, v, mask);
      }
    }
  }

  using StripFn = void (*)(const BlockedDirectRow&, int64_t);

  // The steps with kernels of their own: blocked input at strides 1 and 2, plain input
  // at stride 2 (a network's first convolution); other steps read it at run time.
  static constexpr int kSteps[] = {0, 16, 32, 2};
  static constexpr int kStepCount = 4;

  // The kernels of one (B, W) by step index and edge. A run-time step costs every
  // pixel's broadcast an index register: past ~14 pixels (one output block's wide
  // strips) they no longer fit, and the compiler reloads each offset from the stack
  // before its multiply-add (pointwise 32-16 @112 ran at 85 GFLOP/s, 78% of peak, so).
  template <int B, int W>
  static constexpr std::array<StripFn, 2 * kStepCount> WidthEntry() {
    return {&Strip<B, W, false, 0>,  &Strip<B, W, true, 0>,  &Strip<B, W, false, 16>, &Strip<B, W, true, 16>,
            &Strip<B, W, false, 32>, &Strip<B, W, true, 32>, &Strip<B, W, false, 2>,  &Strip<B, W, true, 2>};
  }

  template <int B, int... Ws>
  static constexpr std::array<std::array<StripFn, 2 * kStepCount>, sizeof...(Ws)> StripTable(
      std::integer_sequence<int, Ws...>) {
    return {WidthEntry<B, Ws + 1>()...};
  }

  template <int B>
  static StripFn StripFor(int64_t width, bool edge, int step_index) {
    if constexpr (kMaxWidth[B] == 0) {
      return nullptr;  // never asked for: the plan takes only blockings with strips
    } else {
      static constexpr auto kTable = StripTable<B>(std::make_integer_sequence<int, kMaxWidth[B]>());
      return kTable[width - 1][2 * step_index + (edge ? 1 : 0)];
    }
  }

  static StripFn StripFor(int64_t blocks, int64_t width, bool edge, int step_index) {
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

  static void Row(const BlockedDirectRow& r) {
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
};

}  // namespace
}  // namespace blocked_direct_internal
}  // namespace tsr

#endif  // TESSERA_KERNELS_CPU_CONV_BLOCKED_DIRECT_SIMD_H_

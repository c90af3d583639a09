// The steps of the channel-blocked Winograd convolution (conv_blocked_winograd_row.h),
// written once over the channel-block vector (channel_block_simd.h) and instantiated
// by conv_blocked_winograd_avx512.cc and conv_blocked_winograd_avx2.cc. A vector is
// the 16 channels of one pixel, so each transform is a few whole-vector combinations
// per tile and the products are a register-blocked GEMM: output blocks as vectors,
// tiles as broadcasts. The transform matrices are template constants of fully
// unrolled loops, so their zeros and ones fold away.
//
// Included ONLY by the per-ISA files: internal linkage throughout (see
// gemm_microkernel_simd.h).
#ifndef TESSERA_KERNELS_CPU_CONV_BLOCKED_WINOGRAD_SIMD_H_
#define TESSERA_KERNELS_CPU_CONV_BLOCKED_WINOGRAD_SIMD_H_

#include <array>
#include <cstdint>
#include <utility>

#include "kernels/cpu/conv_blocked_winograd_row.h"
#include "kernels/cpu/conv_winograd_matrices.h"

namespace tsr {
namespace blocked_winograd_internal {
namespace {

constexpr int64_t kLanes = 16;

// V: the channel-block vector traits; kMaxWidth[B]: the widest strip of tiles of the
// product kernel for B output blocks (0: B is not taken).
template <class V, const int64_t* kMaxWidth>
struct WinogradKernel {
  using Vec = typename V::Vec;

  // sum_q coef[q] * v[q] from +0, q ascending: zero coefficients skipped, +-1 as an add
  // or subtract, the others one fused multiply-add.
  template <int kN>
  __attribute__((always_inline)) static inline Vec Combine(const float (&coef)[kN], const Vec* v) {
    Vec acc = V::Zero();
#pragma GCC unroll 8
    for (int q = 0; q < kN; ++q) {
      if (coef[q] == 0.0f) continue;
      if (coef[q] == 1.0f) {
        acc = V::Add(acc, v[q]);
      } else if (coef[q] == -1.0f) {
        acc = V::Sub(acc, v[q]);
      } else {
        acc = V::FmaV(V::Set1(coef[q]), v[q], acc);
      }
    }
    return acc;
  }

  template <int kM, bool kInside>
  __attribute__((always_inline)) static inline void InputTile(const BlockedWinogradInput& r, int64_t tw, float* v) {
    using T = WinogradMatrices<kM>;
    constexpr int kA = T::kAlpha;
    const int64_t y0 = r.th * kM - r.pad_top, x0 = tw * kM - r.pad_left;
    Vec t[kA][kA];
#pragma GCC unroll 6
    for (int j = 0; j < kA; ++j) {
      Vec d[kA];
      const int64_t ix = x0 + j;
#pragma GCC unroll 6
      for (int k = 0; k < kA; ++k) {
        const int64_t iy = y0 + k;
        if (kInside || (ix >= 0 && ix < r.in_w && iy >= 0 && iy < r.in_h)) {
          d[k] = V::LoadU(r.x + (iy * r.in_w + ix) * kLanes);
        } else {
          d[k] = V::Zero();
        }
      }
#pragma GCC unroll 6
      for (int i = 0; i < kA; ++i) t[i][j] = Combine<kA>(T::kBt[i], d);
    }
#pragma GCC unroll 6
    for (int i = 0; i < kA; ++i) {
#pragma GCC unroll 6
      for (int j = 0; j < kA; ++j) V::StoreU(v + (i * kA + j) * r.xi_stride, Combine<kA>(T::kBt[j], t[i]));
    }
  }

  template <int kM>
  static void Input(const BlockedWinogradInput& r) {
    constexpr int kA = kM + 2;
    const int64_t y0 = r.th * kM - r.pad_top;
    const bool rows_inside = y0 >= 0 && y0 + kA <= r.in_h;
    for (int64_t tw = r.tw_begin; tw < r.tw_end; ++tw) {
      float* v = r.v + (r.tile0 + tw - r.tw_begin) * r.ldv;
      const int64_t x0 = tw * kM - r.pad_left;
      if (rows_inside && x0 >= 0 && x0 + kA <= r.in_w) {
        InputTile<kM, true>(r, tw, v);
      } else {
        InputTile<kM, false>(r, tw, v);
      }
    }
  }

  template <int kB, int kT>
  static void Product(const BlockedWinogradProduct& r) {
    Vec acc[kB][kT];
#pragma GCC unroll 24
    for (int t = 0; t < kT; ++t) {
#pragma GCC unroll 4
      for (int b = 0; b < kB; ++b) acc[b][t] = V::Zero();
    }
    const float* u = r.u;
    const float* v = r.v;
    const int64_t ldv = r.ldv, u_stride = r.u_block_stride;
    for (int64_t c = 0; c < r.channels; ++c, u += kLanes, ++v) {
      Vec w[kB];
#pragma GCC unroll 4
      for (int b = 0; b < kB; ++b) w[b] = V::Load(u + b * u_stride);
#pragma GCC unroll 24
      for (int t = 0; t < kT; ++t) {
        const typename V::Bcast s = V::Broadcast(v[t * ldv]);
#pragma GCC unroll 4
        for (int b = 0; b < kB; ++b) acc[b][t] = V::Fma(w[b], s, acc[b][t]);
      }
    }
#pragma GCC unroll 4
    for (int b = 0; b < kB; ++b) {
#pragma GCC unroll 24
      for (int t = 0; t < kT; ++t) V::StoreU(r.m + b * r.m_block_stride + t * kLanes, acc[b][t]);
    }
  }

  template <int kM>
  static void Output(const BlockedWinogradOutput& r) {
    using T = WinogradMatrices<kM>;
    constexpr int kA = T::kAlpha;
    const typename V::Mask mask = V::FirstLanes(r.lanes);
    const Vec bias = r.bias != nullptr ? V::LoadU(r.bias) : V::Zero();
    const Vec lo = V::Set1(r.clamp_lo), hi = V::Set1(r.clamp_hi);
    for (int64_t tw = r.tw_begin; tw < r.tw_end; ++tw) {
      const float* mt = r.m + (r.tile0 + tw - r.tw_begin) * kLanes;
      Vec s[kM][kA];
#pragma GCC unroll 6
      for (int j = 0; j < kA; ++j) {
        Vec d[kA];
#pragma GCC unroll 6
        for (int i = 0; i < kA; ++i) d[i] = V::LoadU(mt + (i * kA + j) * r.xi_stride);
#pragma GCC unroll 4
        for (int a = 0; a < kM; ++a) s[a][j] = Combine<kA>(T::kAt[a], d);
      }
#pragma GCC unroll 4
      for (int a = 0; a < kM; ++a) {
        const int64_t oy = r.th * kM + a;
        if (oy >= r.out_h) break;
#pragma GCC unroll 4
        for (int b = 0; b < kM; ++b) {
          const int64_t ox = tw * kM + b;
          if (ox >= r.out_w) break;
          Vec y = Combine<kA>(T::kAt[b], s[a]);
          if (r.bias != nullptr) y = V::Add(y, bias);
          const int64_t offset = (oy * r.out_w + ox) * kLanes;
          if (r.residual != nullptr) y = V::Add(y, V::LoadU(r.residual + offset));
          y = ClampBlock<V>(r.clamp, y, lo, hi);
          V::StoreZeroing(r.y + offset, y, mask);
        }
      }
    }
  }

  using ProductFn = void (*)(const BlockedWinogradProduct&);

  template <int kB, size_t... kI>
  static constexpr std::array<ProductFn, sizeof...(kI)> ProductTable(std::index_sequence<kI...>) {
    return {&Product<kB, static_cast<int>(kI) + 1>...};
  }

  template <int kB>
  static void ProductFor(const BlockedWinogradProduct& r) {
    if constexpr (kMaxWidth[kB] > 0) {
      static constexpr auto kTable = ProductTable<kB>(std::make_index_sequence<kMaxWidth[kB]>());
      kTable[static_cast<size_t>(r.width - 1)](r);
    }
  }

  static void InputStep(const BlockedWinogradInput& r) {
    if (r.tile == 2) return Input<2>(r);
    Input<4>(r);
  }

  static void ProductStep(const BlockedWinogradProduct& r) {
    switch (r.out_blocks) {
      case 1:
        return ProductFor<1>(r);
      case 2:
        return ProductFor<2>(r);
      case 3:
        return ProductFor<3>(r);
      default:
        return ProductFor<4>(r);
    }
  }

  static void OutputStep(const BlockedWinogradOutput& r) {
    if (r.tile == 2) return Output<2>(r);
    Output<4>(r);
  }
};

}  // namespace
}  // namespace blocked_winograd_internal
}  // namespace tsr

#endif  // TESSERA_KERNELS_CPU_CONV_BLOCKED_WINOGRAD_SIMD_H_

// AVX-512 steps of the channel-blocked Winograd convolution (conv_blocked_winograd_row.h;
// compiled with -mavx512f -mfma, called only when ActiveCpuIsa() allows it). A vector
// is the 16 channels of one pixel, so each transform is a few whole-vector
// combinations per tile and the products are a register-blocked GEMM: output blocks
// as vectors, tiles as broadcasts. The transform matrices are template constants of
// fully unrolled loops, so their zeros and ones fold away.
#include <immintrin.h>

#include <array>
#include <cstdint>
#include <utility>

#include "kernels/cpu/conv_blocked_winograd_row.h"
#include "kernels/cpu/conv_winograd_matrices.h"

namespace tsr {

namespace {

constexpr int64_t kLanes = 16;

// sum_q coef[q] * v[q] from +0, q ascending: zero coefficients skipped, +-1 as an add
// or subtract, the others one fused multiply-add.
template <int kN>
__attribute__((always_inline)) inline __m512 Combine(const float (&coef)[kN], const __m512* v) {
  __m512 acc = _mm512_setzero_ps();
#pragma GCC unroll 8
  for (int q = 0; q < kN; ++q) {
    if (coef[q] == 0.0f) continue;
    if (coef[q] == 1.0f) {
      acc = _mm512_add_ps(acc, v[q]);
    } else if (coef[q] == -1.0f) {
      acc = _mm512_sub_ps(acc, v[q]);
    } else {
      acc = _mm512_fmadd_ps(_mm512_set1_ps(coef[q]), v[q], acc);
    }
  }
  return acc;
}

template <int kM, bool kInside>
__attribute__((always_inline)) inline void InputTile(const BlockedWinogradInput& r, int64_t tw, float* v) {
  using T = WinogradMatrices<kM>;
  constexpr int kA = T::kAlpha;
  const int64_t y0 = r.th * kM - r.pad_top, x0 = tw * kM - r.pad_left;
  __m512 t[kA][kA];
#pragma GCC unroll 6
  for (int j = 0; j < kA; ++j) {
    __m512 d[kA];
    const int64_t ix = x0 + j;
#pragma GCC unroll 6
    for (int k = 0; k < kA; ++k) {
      const int64_t iy = y0 + k;
      if (kInside || (ix >= 0 && ix < r.in_w && iy >= 0 && iy < r.in_h)) {
        d[k] = _mm512_loadu_ps(r.x + (iy * r.in_w + ix) * kLanes);
      } else {
        d[k] = _mm512_setzero_ps();
      }
    }
#pragma GCC unroll 6
    for (int i = 0; i < kA; ++i) t[i][j] = Combine<kA>(T::kBt[i], d);
  }
#pragma GCC unroll 6
  for (int i = 0; i < kA; ++i) {
#pragma GCC unroll 6
    for (int j = 0; j < kA; ++j) _mm512_storeu_ps(v + (i * kA + j) * r.xi_stride, Combine<kA>(T::kBt[j], t[i]));
  }
}

template <int kM>
void Input(const BlockedWinogradInput& r) {
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
void Product(const BlockedWinogradProduct& r) {
  __m512 acc[kB][kT];
#pragma GCC unroll 24
  for (int t = 0; t < kT; ++t) {
#pragma GCC unroll 4
    for (int b = 0; b < kB; ++b) acc[b][t] = _mm512_setzero_ps();
  }
  const float* u = r.u;
  const float* v = r.v;
  const int64_t ldv = r.ldv, u_stride = r.u_block_stride;
  for (int64_t c = 0; c < r.channels; ++c, u += kLanes, ++v) {
    __m512 w[kB];
#pragma GCC unroll 4
    for (int b = 0; b < kB; ++b) w[b] = _mm512_load_ps(u + b * u_stride);
#pragma GCC unroll 24
    for (int t = 0; t < kT; ++t) {
      const __m512 s = _mm512_set1_ps(v[t * ldv]);
#pragma GCC unroll 4
      for (int b = 0; b < kB; ++b) acc[b][t] = _mm512_fmadd_ps(w[b], s, acc[b][t]);
    }
  }
#pragma GCC unroll 4
  for (int b = 0; b < kB; ++b) {
#pragma GCC unroll 24
    for (int t = 0; t < kT; ++t) _mm512_storeu_ps(r.m + b * r.m_block_stride + t * kLanes, acc[b][t]);
  }
}

using ProductFn = void (*)(const BlockedWinogradProduct&);

template <int kB, size_t... kI>
constexpr std::array<ProductFn, sizeof...(kI)> ProductTable(std::index_sequence<kI...>) {
  return {&Product<kB, static_cast<int>(kI) + 1>...};
}

// kProducts[b][t - 1]: the kernel for b output blocks and t tiles.
const std::array<ProductFn, 24> kProducts1 = ProductTable<1>(std::make_index_sequence<24>());
const std::array<ProductFn, 12> kProducts2 = ProductTable<2>(std::make_index_sequence<12>());
const std::array<ProductFn, 8> kProducts3 = ProductTable<3>(std::make_index_sequence<8>());
const std::array<ProductFn, 6> kProducts4 = ProductTable<4>(std::make_index_sequence<6>());

template <int kM>
void Output(const BlockedWinogradOutput& r) {
  using T = WinogradMatrices<kM>;
  constexpr int kA = T::kAlpha;
  const __mmask16 mask = static_cast<__mmask16>((1u << r.lanes) - 1);
  const __m512 bias = r.bias != nullptr ? _mm512_loadu_ps(r.bias) : _mm512_setzero_ps();
  const __m512 lo = _mm512_set1_ps(r.clamp_lo), hi = _mm512_set1_ps(r.clamp_hi);
  for (int64_t tw = r.tw_begin; tw < r.tw_end; ++tw) {
    const float* mt = r.m + (r.tile0 + tw - r.tw_begin) * kLanes;
    __m512 s[kM][kA];
#pragma GCC unroll 6
    for (int j = 0; j < kA; ++j) {
      __m512 d[kA];
#pragma GCC unroll 6
      for (int i = 0; i < kA; ++i) d[i] = _mm512_loadu_ps(mt + (i * kA + j) * r.xi_stride);
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
        __m512 y = Combine<kA>(T::kAt[b], s[a]);
        if (r.bias != nullptr) y = _mm512_add_ps(y, bias);
        const int64_t offset = (oy * r.out_w + ox) * kLanes;
        if (r.residual != nullptr) y = _mm512_add_ps(y, _mm512_loadu_ps(r.residual + offset));
        if (r.clamp == BlockedDirectClamp::kRelu) {
          y = _mm512_maskz_mov_ps(static_cast<__mmask16>(~_mm512_cmp_ps_mask(y, _mm512_setzero_ps(), _CMP_LT_OQ)), y);
        } else if (r.clamp == BlockedDirectClamp::kClip) {
          y = _mm512_min_ps(hi, _mm512_max_ps(lo, y));
        }
        _mm512_storeu_ps(r.y + offset, _mm512_maskz_mov_ps(mask, y));
      }
    }
  }
}

}  // namespace

void BlockedWinogradInputAvx512(const BlockedWinogradInput& r) {
  if (r.tile == 2) return Input<2>(r);
  Input<4>(r);
}

void BlockedWinogradProductAvx512(const BlockedWinogradProduct& r) {
  const int64_t t = r.width - 1;
  switch (r.out_blocks) {
    case 1:
      return kProducts1[static_cast<size_t>(t)](r);
    case 2:
      return kProducts2[static_cast<size_t>(t)](r);
    case 3:
      return kProducts3[static_cast<size_t>(t)](r);
    default:
      return kProducts4[static_cast<size_t>(t)](r);
  }
}

void BlockedWinogradOutputAvx512(const BlockedWinogradOutput& r) {
  if (r.tile == 2) return Output<2>(r);
  Output<4>(r);
}

}  // namespace tsr

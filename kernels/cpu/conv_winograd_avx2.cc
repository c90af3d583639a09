// AVX2 Winograd F(2x2, 3x3) and F(4x4, 3x3) transforms (compiled with -mavx2 -mfma;
// called only when ActiveCpuIsa() allows it). Vectors run over 8 tiles of a tile row
// at once: an input row is first split into its m phases (x[m * i + r]), after which
// the taps of 8 neighbouring tiles are plain contiguous loads; the row transform of
// every input row is computed once and shared by the tile rows that overlap on it.
// The constant transform matrices are template parameters of fully unrolled loops, so
// their zeros and ones fold away.
#include <immintrin.h>

#include <cstdint>

#include "kernels/cpu/avx2_lanes.h"
#include "kernels/cpu/conv_winograd_matrices.h"
#include "kernels/cpu/conv_winograd_transform.h"

namespace tsr {

namespace {

template <int kM>
using Matrices = WinogradMatrices<kM>;

// sum_q coef[q] * v[q], skipping zero coefficients and multiplying by none of +-1.
template <int kN>
__attribute__((always_inline)) inline __m256 Combine(const float (&coef)[kN], const __m256* v) {
  __m256 acc = _mm256_setzero_ps();
#pragma GCC unroll 8
  for (int q = 0; q < kN; ++q) {
    if (coef[q] == 0.0f) continue;
    if (coef[q] == 1.0f) {
      acc = _mm256_add_ps(acc, v[q]);
    } else if (coef[q] == -1.0f) {
      acc = _mm256_sub_ps(acc, v[q]);
    } else {
      acc = _mm256_fmadd_ps(_mm256_set1_ps(coef[q]), v[q], acc);
    }
  }
  return acc;
}

// Stores the first n (<= 8) lanes of v: a full store when n == 8, else through a
// stack copy (AMD's vmaskmovps stores are microcoded and slow).
inline void StoreFirst(float* dst, __m256 v, int64_t n) {
  if (n >= 8) {
    _mm256_storeu_ps(dst, v);
    return;
  }
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, v);
  for (int64_t i = 0; i < n; ++i) dst[i] = lanes[i];
}

// out[k] lane l = src[l * ld + k] for k, l < 8.
inline void Transpose8x8(const float* src, int64_t ld, __m256* out) {
#pragma GCC unroll 8
  for (int l = 0; l < 8; ++l) out[l] = _mm256_loadu_ps(src + l * ld);
  Transpose8x8(out);
}

template <int kM>
void Weights(const float* w, int64_t channels, int64_t o_begin, int64_t o_end, float* u) {
  using T = Matrices<kM>;
  constexpr int kA = T::kAlpha;
  for (int64_t o = o_begin; o < o_end; ++o) {
    for (int64_t c = 0; c < channels; c += 8) {
      const int64_t lanes = channels - c < 8 ? channels - c : 8;
      // The 9 taps of 8 channels, transposed so each vector holds one tap: taps 0-7 by
      // an 8x8 register transpose and tap 8 by scalar loads for full groups (AMD's
      // gathers are slow), through the stack for the last group.
      const float* src = w + (o * channels + c) * 9;
      __m256 g[3][3];
      if (lanes == 8) {
        __m256 t[8];
        Transpose8x8(src, 9, t);
#pragma GCC unroll 8
        for (int k = 0; k < 8; ++k) g[k / 3][k % 3] = t[k];
        g[2][2] = _mm256_setr_ps(src[8], src[17], src[26], src[35], src[44], src[53], src[62], src[71]);
      } else {
        alignas(32) float taps[9][8] = {};
        for (int64_t l = 0; l < lanes; ++l) {
          for (int k = 0; k < 9; ++k) taps[k][l] = src[l * 9 + k];
        }
        for (int k = 0; k < 9; ++k) g[k / 3][k % 3] = _mm256_load_ps(taps[k]);
      }
      // gt[k][i] = (G g)[i][k]: column k of g combined by row i of G.
      __m256 gt[3][kA];
#pragma GCC unroll 3
      for (int k = 0; k < 3; ++k) {
        const __m256 col[3] = {g[0][k], g[1][k], g[2][k]};
#pragma GCC unroll 6
        for (int i = 0; i < kA; ++i) gt[k][i] = Combine<3>(T::kG[i], col);
      }
      float* dst = u + o * kA * kA * channels + c;
#pragma GCC unroll 6
      for (int i = 0; i < kA; ++i) {
        const __m256 row[3] = {gt[0][i], gt[1][i], gt[2][i]};
#pragma GCC unroll 6
        for (int j = 0; j < kA; ++j) StoreFirst(dst + (i * kA + j) * channels, Combine<3>(T::kG[j], row), lanes);
      }
    }
  }
}

template <int kM>
void Input(const WinogradPlane& p, const float* x, int64_t th_begin, int64_t th_end, float* v, int64_t v_stride,
           float* scratch) {
  using T = Matrices<kM>;
  constexpr int kA = T::kAlpha;
  const int64_t tiles_w = p.tiles_w;
  const int64_t twp = (tiles_w + 7) / 8 * 8;
  // phase[r][i] = x[row][m * i + r - pad_left] (0 outside the row), i <= twp: the
  // taps q of tile tw are phase[q % m][tw + q / m], and q / m <= 1.
  const int64_t phase_len = twp + 8;
  float* phase = scratch;
  float* rows = phase + kM * phase_len;  // [row][j][twp]: row transforms
  const int64_t n_rows = (th_end - th_begin) * kM + 2;
  const int64_t row0 = th_begin * kM - p.pad_top;
  for (int64_t r = 0; r < n_rows; ++r) {
    float* rr = rows + r * kA * twp;
    const int64_t iy = row0 + r;
    if (iy < 0 || iy >= p.in_h) {
      for (int64_t i = 0; i < kA * twp; i += 8) _mm256_storeu_ps(rr + i, _mm256_setzero_ps());
      continue;
    }
    const float* xrow = x + iy * p.in_w;
    for (int ph = 0; ph < kM; ++ph) {
      float* dst = phase + ph * phase_len;
      // Indices i with 0 <= m * i + ph - pad_left < in_w.
      const int64_t first_num = p.pad_left - ph;
      const int64_t lo = first_num > 0 ? (first_num + kM - 1) / kM : 0;
      const int64_t last_num = p.in_w - 1 + p.pad_left - ph;
      int64_t hi = last_num < 0 ? 0 : last_num / kM + 1;
      hi = hi < twp + 1 ? hi : twp + 1;
      const int64_t lo_c = lo < hi ? lo : hi;
      for (int64_t i = 0; i < lo_c; ++i) dst[i] = 0.0f;
      const float* src = xrow + kM * lo_c + ph - p.pad_left;
      for (int64_t i = lo_c; i < hi; ++i, src += kM) dst[i] = *src;
      for (int64_t i = hi; i <= twp; ++i) dst[i] = 0.0f;
    }
    for (int64_t tw = 0; tw < twp; tw += 8) {
      __m256 d[kA];
#pragma GCC unroll 6
      for (int q = 0; q < kA; ++q) d[q] = _mm256_loadu_ps(phase + (q % kM) * phase_len + tw + q / kM);
#pragma GCC unroll 6
      for (int j = 0; j < kA; ++j) _mm256_storeu_ps(rr + j * twp + tw, Combine<kA>(T::kBt[j], d));
    }
  }
  // Whole vectors of 8 tiles: lanes past the row's last tile land on the next tile
  // row's first tiles (stored after them, th ascending) or in the row padding.
  for (int64_t th = th_begin; th < th_end; ++th) {
    const float* base = rows + (th - th_begin) * kM * kA * twp;
    float* vt = v + (th - th_begin) * tiles_w;
    for (int64_t tw = 0; tw < twp; tw += 8) {
#pragma GCC unroll 6
      for (int j = 0; j < kA; ++j) {
        __m256 d[kA];
#pragma GCC unroll 6
        for (int k = 0; k < kA; ++k) d[k] = _mm256_loadu_ps(base + (k * kA + j) * twp + tw);
#pragma GCC unroll 6
        for (int i = 0; i < kA; ++i) _mm256_storeu_ps(vt + (i * kA + j) * v_stride + tw, Combine<kA>(T::kBt[i], d));
      }
    }
  }
}

// Interleaves m vectors of 8 tiles (b[k][t] = output column m * t + k) into 8 * m
// consecutive floats.
template <int kM>
inline void Interleave(const __m256* b, float* dst);

template <>
inline void Interleave<2>(const __m256* b, float* dst) {
  const __m256 lo = _mm256_unpacklo_ps(b[0], b[1]), hi = _mm256_unpackhi_ps(b[0], b[1]);  // tiles 0,1|4,5 and 2,3|6,7
  _mm256_storeu_ps(dst, _mm256_permute2f128_ps(lo, hi, 0x20));
  _mm256_storeu_ps(dst + 8, _mm256_permute2f128_ps(lo, hi, 0x31));
}

template <>
inline void Interleave<4>(const __m256* b, float* dst) {
  const __m256 t0 = _mm256_unpacklo_ps(b[0], b[1]), t1 = _mm256_unpackhi_ps(b[0], b[1]);
  const __m256 t2 = _mm256_unpacklo_ps(b[2], b[3]), t3 = _mm256_unpackhi_ps(b[2], b[3]);
  // u_k: tile k in the low lane, tile k + 4 in the high one.
  const __m256 u0 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(1, 0, 1, 0));
  const __m256 u1 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(3, 2, 3, 2));
  const __m256 u2 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(1, 0, 1, 0));
  const __m256 u3 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(3, 2, 3, 2));
  _mm256_storeu_ps(dst, _mm256_permute2f128_ps(u0, u1, 0x20));
  _mm256_storeu_ps(dst + 8, _mm256_permute2f128_ps(u2, u3, 0x20));
  _mm256_storeu_ps(dst + 16, _mm256_permute2f128_ps(u0, u1, 0x31));
  _mm256_storeu_ps(dst + 24, _mm256_permute2f128_ps(u2, u3, 0x31));
}

template <int kM>
void Output(const WinogradPlane& p, const float* mo, int64_t mo_stride, int64_t th_begin, int64_t th_end, float bias,
            float* y) {
  using T = Matrices<kM>;
  constexpr int kA = T::kAlpha;
  const int64_t tiles_w = p.tiles_w;
  const __m256 vbias = _mm256_set1_ps(bias);
  alignas(32) float line[8 * kM];
  const int64_t plane_size = p.out_h * p.out_w;
  for (int64_t th = th_begin; th < th_end; ++th) {
    const float* mt = mo + (th - th_begin) * tiles_w;
    const int64_t oy0 = th * kM;
    const int64_t out_rows = p.out_h - oy0 < kM ? p.out_h - oy0 : kM;
    // tw descending, so that a whole-vector store running past the end of an output
    // row only touches the start of a later row, which is stored after it.
    for (int64_t tw = (tiles_w - 1) / 8 * 8; tw >= 0; tw -= 8) {
      // s[a][j] = sum_i At[a][i] M[i][j]; lanes past the last tile hold garbage (the
      // buffer is padded) that is never stored.
      __m256 s[kM][kA];
#pragma GCC unroll 6
      for (int j = 0; j < kA; ++j) {
        __m256 d[kA];
#pragma GCC unroll 6
        for (int i = 0; i < kA; ++i) d[i] = _mm256_loadu_ps(mt + (i * kA + j) * mo_stride + tw);
#pragma GCC unroll 4
        for (int a = 0; a < kM; ++a) s[a][j] = Combine<kA>(T::kAt[a], d);
      }
      const int64_t x0 = tw * kM;
      const int64_t cols = p.out_w - x0 < 8 * kM ? p.out_w - x0 : 8 * kM;
#pragma GCC unroll 4
      for (int a = 0; a < kM; ++a) {
        if (a >= out_rows) break;
        __m256 b[kM];
#pragma GCC unroll 4
        for (int k = 0; k < kM; ++k) b[k] = _mm256_add_ps(Combine<kA>(T::kAt[k], s[a]), vbias);
        const int64_t offset = (oy0 + a) * p.out_w + x0;
        float* dst = y + offset;
        if (cols == 8 * kM || offset + 8 * kM <= plane_size) {
          Interleave<kM>(b, dst);
        } else {
          Interleave<kM>(b, line);
          for (int64_t i = 0; i < cols; ++i) dst[i] = line[i];
        }
      }
    }
  }
}

}  // namespace

void WinogradWeightsAvx2(int tile, const float* w, int64_t channels, int64_t o_begin, int64_t o_end, float* u) {
  if (tile == 2) return Weights<2>(w, channels, o_begin, o_end, u);
  Weights<4>(w, channels, o_begin, o_end, u);
}

void WinogradInputAvx2(const WinogradPlane& p, const float* x, int64_t th_begin, int64_t th_end, float* v,
                       int64_t v_stride, float* scratch) {
  if (p.tile == 2) return Input<2>(p, x, th_begin, th_end, v, v_stride, scratch);
  Input<4>(p, x, th_begin, th_end, v, v_stride, scratch);
}

void WinogradOutputAvx2(const WinogradPlane& p, const float* mo, int64_t mo_stride, int64_t th_begin, int64_t th_end,
                        float bias, float* y) {
  if (p.tile == 2) return Output<2>(p, mo, mo_stride, th_begin, th_end, bias, y);
  Output<4>(p, mo, mo_stride, th_begin, th_end, bias, y);
}

}  // namespace tsr

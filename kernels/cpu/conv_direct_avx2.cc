// AVX2 + FMA loops of the direct small-channel convolution (conv_direct.h; compiled
// with -mavx2 -mfma, called only when ActiveCpuIsa() allows it). Both run over a
// flattened pixel index q of zero-padded input planes, where every (channel, tap)
// row r reads the input at q + offsets[r]: the Conv output is a sum of such rows
// scaled by broadcast weights, its filter gradient a dot product of each row with
// an output-gradient plane. Everything here but the entry points of
// conv_direct_rows.h has internal linkage: an AVX2 copy of a shared inline function
// could otherwise replace the portable one program-wide.
#include <immintrin.h>

#include <cstdint>

#include "kernels/cpu/conv_direct_rows.h"

namespace tsr {

namespace {

// The loops over the register block's fixed dimensions carry `#pragma GCC unroll`:
// unrolled, the accumulator arrays live in registers; left as loops (-O2 does not
// unroll them all), they are spilled to the stack on every multiply-add.

// Output channels [0, kMb) x pixels [q, q + 8 * kQv) of ConvDirectForwardAvx2, with
// the weights of this block of channels packed as w[r * kMb + i].
template <int kMb, int kQv>
inline void ForwardBlock(const float* xp, const int64_t* offsets, int64_t rows, const float* w, int64_t q, float* out,
                         int64_t out_stride) {
  __m256 acc[kMb][kQv];
#pragma GCC unroll 8
  for (int i = 0; i < kMb; ++i) {
#pragma GCC unroll 8
    for (int j = 0; j < kQv; ++j) acc[i][j] = _mm256_setzero_ps();
  }
  const float* x = xp + q;
  for (int64_t r = 0; r < rows; ++r, w += kMb) {
    const float* xr = x + offsets[r];
    __m256 xv[kQv];
#pragma GCC unroll 8
    for (int j = 0; j < kQv; ++j) xv[j] = _mm256_loadu_ps(xr + 8 * j);
#pragma GCC unroll 8
    for (int i = 0; i < kMb; ++i) {
      const __m256 wv = _mm256_broadcast_ss(w + i);
#pragma GCC unroll 8
      for (int j = 0; j < kQv; ++j) acc[i][j] = _mm256_fmadd_ps(wv, xv[j], acc[i][j]);
    }
  }
#pragma GCC unroll 8
  for (int i = 0; i < kMb; ++i) {
#pragma GCC unroll 8
    for (int j = 0; j < kQv; ++j) _mm256_storeu_ps(out + i * out_stride + q + 8 * j, acc[i][j]);
  }
}

template <int kMb>
void ForwardChannels(const float* xp, const int64_t* offsets, int64_t rows, const float* w, int64_t pixels, float* out,
                     int64_t out_stride) {
  for (int64_t q = 0; q < pixels; q += 8 * kDirectForwardVectors) {
    ForwardBlock<kMb, kDirectForwardVectors>(xp, offsets, rows, w, q, out, out_stride);
  }
}

// dw[i * ldw + t] += sum over images n and q in [0, pixels) of
// dy[n * dy_image + i * dy_stride + q] * xp[n * x_image + offsets[t] + q] for i < kMb,
// t < kTb: kMb x kTb vector sums, each reduced once at the end.
template <int kMb, int kTb>
void GradFilterBlock(const GradFilterImages& im, const int64_t* offsets, float* dw, int64_t ldw) {
  __m256 acc[kMb][kTb];
#pragma GCC unroll 8
  for (int i = 0; i < kMb; ++i) {
#pragma GCC unroll 8
    for (int t = 0; t < kTb; ++t) acc[i][t] = _mm256_setzero_ps();
  }
  for (int64_t n = 0; n < im.images; ++n) {
    const float* xr[kTb];
#pragma GCC unroll 8
    for (int t = 0; t < kTb; ++t) xr[t] = im.xp + n * im.x_image + offsets[t];
    const float* dy = im.dy + n * im.dy_image;
    for (int64_t q = 0; q < im.pixels; q += 8) {
      __m256 xv[kTb];
#pragma GCC unroll 8
      for (int t = 0; t < kTb; ++t) xv[t] = _mm256_loadu_ps(xr[t] + q);
#pragma GCC unroll 8
      for (int i = 0; i < kMb; ++i) {
        const __m256 d = _mm256_load_ps(dy + i * im.dy_stride + q);
#pragma GCC unroll 8
        for (int t = 0; t < kTb; ++t) acc[i][t] = _mm256_fmadd_ps(d, xv[t], acc[i][t]);
      }
    }
  }
#pragma GCC unroll 8
  for (int i = 0; i < kMb; ++i) {
#pragma GCC unroll 8
    for (int t = 0; t < kTb; ++t) {
      // Fixed reduction order: (0+4, 1+5, 2+6, 3+7), then pairs, then the last two.
      const __m128 h = _mm_add_ps(_mm256_castps256_ps128(acc[i][t]), _mm256_extractf128_ps(acc[i][t], 1));
      const __m128 p = _mm_add_ps(h, _mm_movehl_ps(h, h));
      dw[i * ldw + t] += _mm_cvtss_f32(_mm_add_ss(p, _mm_shuffle_ps(p, p, 1)));
    }
  }
}

// Taps in blocks of kTb, then the remaining fewer than kTb in one smaller block.
template <int kMb, int kTb>
void GradFilterTaps(const GradFilterImages& im, const int64_t* offsets, int64_t rows, float* dw, int64_t ldw) {
  int64_t r = 0;
  for (; r + kTb <= rows; r += kTb) GradFilterBlock<kMb, kTb>(im, offsets + r, dw + r, ldw);
  if constexpr (kTb > 1) {
    if (r < rows) GradFilterTaps<kMb, kTb - 1>(im, offsets + r, rows - r, dw + r, ldw);
  }
}

// Output channels in blocks of kMb (the remaining fewer in smaller blocks) by taps in
// blocks of kTb: kMb * kTb accumulators, kMb + kTb loads per kMb * kTb multiply-adds.
template <int kMb, int kTb>
void GradFilterChannels(GradFilterImages im, const int64_t* offsets, int64_t rows, int64_t channels_out, float* dw) {
  int64_t m = 0;
  for (; m + kMb <= channels_out; m += kMb, im.dy += kMb * im.dy_stride) {
    GradFilterTaps<kMb, kTb>(im, offsets, rows, dw + m * rows, rows);
  }
  if constexpr (kMb > 1) {
    if (m < channels_out) GradFilterChannels<kMb - 1, kTb>(im, offsets, rows, channels_out - m, dw + m * rows);
  }
}

}  // namespace

void ConvDirectForwardAvx2(const float* xp, const int64_t* offsets, int64_t rows, const float* packed_weights,
                           int64_t channels_out, int64_t pixels, float* out, int64_t out_stride) {
  for (int64_t m = 0; m < channels_out; m += kDirectForwardChannels) {
    const float* w = packed_weights + m * rows;
    float* o = out + m * out_stride;
    switch (channels_out - m < kDirectForwardChannels ? channels_out - m : kDirectForwardChannels) {
      case 4:
        ForwardChannels<4>(xp, offsets, rows, w, pixels, o, out_stride);
        break;
      case 3:
        ForwardChannels<3>(xp, offsets, rows, w, pixels, o, out_stride);
        break;
      case 2:
        ForwardChannels<2>(xp, offsets, rows, w, pixels, o, out_stride);
        break;
      default:
        ForwardChannels<1>(xp, offsets, rows, w, pixels, o, out_stride);
        break;
    }
  }
}

void ConvDirectGradFilterAvx2(const GradFilterImages& images, const int64_t* offsets, int64_t rows,
                              int64_t channels_out, float* dw) {
  // 4 x 3 when the channels come in fours (no tail block), else 3 x 4.
  if (channels_out % 4 == 0) {
    GradFilterChannels<4, 3>(images, offsets, rows, channels_out, dw);
  } else {
    GradFilterChannels<3, 4>(images, offsets, rows, channels_out, dw);
  }
}

void CopyRowsAddBiasAvx2(const float* src, int64_t src_stride, int64_t rows, int64_t width, float bias, float* dst) {
  const __m256 b = _mm256_set1_ps(bias);
  for (int64_t r = 0; r < rows; ++r, src += src_stride, dst += width) {
    int64_t i = 0;
    for (; i + 8 <= width; i += 8) _mm256_storeu_ps(dst + i, _mm256_add_ps(_mm256_loadu_ps(src + i), b));
    for (; i < width; ++i) dst[i] = src[i] + bias;
  }
}

bool AllFiniteAvx2(const float* x, int64_t n) {
  // Non-finite floats are those with all exponent bits set.
  const __m256i exponent = _mm256_set1_epi32(0x7f800000);
  __m256i bad = _mm256_setzero_si256();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i e = _mm256_and_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i)), exponent);
    bad = _mm256_or_si256(bad, _mm256_cmpeq_epi32(e, exponent));
  }
  if (!_mm256_testz_si256(bad, bad)) return false;
  for (; i < n; ++i) {
    uint32_t bits;
    __builtin_memcpy(&bits, x + i, sizeof(bits));
    if ((bits & 0x7f800000u) == 0x7f800000u) return false;
  }
  return true;
}

}  // namespace tsr

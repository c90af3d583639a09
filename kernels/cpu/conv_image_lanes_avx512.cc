// ImageLanesRowAvx512 (conv_image_lanes_row.h): blocks of up to 6 output channels x 4
// columns held in 24 registers, each tap one input vector per column and one broadcast
// weight per channel.
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "kernels/cpu/conv_image_lanes_row.h"

namespace tsr {

namespace {

constexpr int64_t kLanes = 16;
constexpr int kMaxChannels = 6;
constexpr int kMaxColumns = 4;

// Output channels [m0, m0 + M) at columns [ow0, ow0 + P) of the row.
template <int M, int P>
void Block(const ImageLanesRow& r, int64_t m0, int64_t ow0) {
  __m512 acc[M][P];
#pragma GCC unroll 6
  for (int m = 0; m < M; ++m) {
    const __m512 b = r.bias != nullptr ? _mm512_set1_ps(r.bias[m0 + m]) : _mm512_setzero_ps();
#pragma GCC unroll 4
    for (int p = 0; p < P; ++p) acc[m][p] = b;
  }
  const int64_t kw_lo = r.kw_begin[ow0 + P - 1], kw_hi = r.kw_end[ow0];
  const int64_t kw_step = r.dilation_w * kLanes;
  const int64_t weight_tap = r.out_channels;
  for (int64_t c = 0; c < r.channels; ++c) {
    for (int64_t kh = r.kh_begin; kh < r.kh_end; ++kh) {
      const float* x =
          r.x + c * r.channel_stride + (r.in_row0 + kh * r.dilation_h) * r.row_stride + ow0 * kLanes + kw_lo * kw_step;
      const float* w = r.weights + ((c * r.kernel_h + kh) * r.kernel_w + kw_lo) * weight_tap + m0;
      for (int64_t kw = kw_lo; kw < kw_hi; ++kw, x += kw_step, w += weight_tap) {
        __m512 v[P];
#pragma GCC unroll 4
        for (int p = 0; p < P; ++p) v[p] = _mm512_loadu_ps(x + p * kLanes);
#pragma GCC unroll 6
        for (int m = 0; m < M; ++m) {
          const __m512 wm = _mm512_set1_ps(w[m]);
#pragma GCC unroll 4
          for (int p = 0; p < P; ++p) acc[m][p] = _mm512_fmadd_ps(wm, v[p], acc[m][p]);
        }
      }
    }
  }
#pragma GCC unroll 6
  for (int m = 0; m < M; ++m) {
    float* y = r.y + (m0 + m) * r.y_channel_stride + ow0 * kLanes;
#pragma GCC unroll 4
    for (int p = 0; p < P; ++p) _mm512_storeu_ps(y + p * kLanes, acc[m][p]);
  }
}

template <int M>
void Columns(const ImageLanesRow& r, int64_t m0) {
  int64_t ow = 0;
  for (; ow + kMaxColumns <= r.out_w; ow += kMaxColumns) Block<M, kMaxColumns>(r, m0, ow);
  switch (r.out_w - ow) {
    case 3:
      Block<M, 3>(r, m0, ow);
      break;
    case 2:
      Block<M, 2>(r, m0, ow);
      break;
    case 1:
      Block<M, 1>(r, m0, ow);
      break;
    default:
      break;
  }
}

// Output channels [m0, m0 + M) x kernel columns [kw0, kw0 + K) of the weight gradient.
template <int M, int K>
void GradBlock(const ImageLanesGradRow& r, int64_t m0, int64_t kw0) {
  __m512 acc[M][K];
#pragma GCC unroll 6
  for (int m = 0; m < M; ++m) {
#pragma GCC unroll 4
    for (int k = 0; k < K; ++k) acc[m][k] = _mm512_setzero_ps();
  }
  const int64_t ow_lo = r.ow_begin[kw0 + K - 1], ow_hi = r.ow_end[kw0];
  const int64_t kw_step = r.dilation_w * kLanes;
  for (int64_t oh = r.oh_begin; oh < r.oh_end; ++oh) {
    const float* x = r.x + (oh + r.in_row0) * r.row_stride + (ow_lo + kw0 * r.dilation_w) * kLanes;
    const float* dy = r.dy + m0 * r.dy_channel_stride + (oh * r.out_w + ow_lo) * kLanes;
    for (int64_t ow = ow_lo; ow < ow_hi; ++ow, x += kLanes, dy += kLanes) {
      __m512 v[K];
#pragma GCC unroll 4
      for (int k = 0; k < K; ++k) v[k] = _mm512_loadu_ps(x + k * kw_step);
#pragma GCC unroll 6
      for (int m = 0; m < M; ++m) {
        const __m512 g = _mm512_loadu_ps(dy + m * r.dy_channel_stride);
#pragma GCC unroll 4
        for (int k = 0; k < K; ++k) acc[m][k] = _mm512_fmadd_ps(g, v[k], acc[m][k]);
      }
    }
  }
#pragma GCC unroll 6
  for (int m = 0; m < M; ++m) {
#pragma GCC unroll 4
    for (int k = 0; k < K; ++k) r.dw[(m0 + m) * r.dw_channel_stride + kw0 + k] = _mm512_reduce_add_ps(acc[m][k]);
  }
}

template <int M>
void GradColumns(const ImageLanesGradRow& r, int64_t m0) {
  int64_t kw = 0;
  for (; kw + kMaxColumns <= r.kernel_w; kw += kMaxColumns) GradBlock<M, kMaxColumns>(r, m0, kw);
  switch (r.kernel_w - kw) {
    case 3:
      GradBlock<M, 3>(r, m0, kw);
      break;
    case 2:
      GradBlock<M, 2>(r, m0, kw);
      break;
    case 1:
      GradBlock<M, 1>(r, m0, kw);
      break;
    default:
      break;
  }
}

}  // namespace

void ImageLanesGradRowAvx512(const ImageLanesGradRow& r) {
  for (int64_t m0 = 0; m0 < r.out_channels; m0 += kMaxChannels) {
    switch (std::min<int64_t>(kMaxChannels, r.out_channels - m0)) {
      case 6:
        GradColumns<6>(r, m0);
        break;
      case 5:
        GradColumns<5>(r, m0);
        break;
      case 4:
        GradColumns<4>(r, m0);
        break;
      case 3:
        GradColumns<3>(r, m0);
        break;
      case 2:
        GradColumns<2>(r, m0);
        break;
      default:
        GradColumns<1>(r, m0);
        break;
    }
  }
}

void ImageLanesRowAvx512(const ImageLanesRow& r) {
  for (int64_t m0 = 0; m0 < r.out_channels; m0 += kMaxChannels) {
    switch (std::min<int64_t>(kMaxChannels, r.out_channels - m0)) {
      case 6:
        Columns<6>(r, m0);
        break;
      case 5:
        Columns<5>(r, m0);
        break;
      case 4:
        Columns<4>(r, m0);
        break;
      case 3:
        Columns<3>(r, m0);
        break;
      case 2:
        Columns<2>(r, m0);
        break;
      default:
        Columns<1>(r, m0);
        break;
    }
  }
}

}  // namespace tsr

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

}  // namespace

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

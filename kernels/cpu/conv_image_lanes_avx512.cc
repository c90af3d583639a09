// ImageLanesRowAvx512 and ImageLanesGradRowAvx512 (conv_image_lanes_row.h): blocks of up
// to 6 output channels x 4 columns (output columns, or kernel columns of the weight
// gradient) held in 24 registers; per tap (or pixel) one input vector per column and one
// broadcast weight (or output-gradient vector) per channel.
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

// Runs kernel.Run<M, W>(m0, w0) over output channels [0, channels) in blocks of up to
// kMaxChannels and [0, width) in blocks of up to kMaxColumns, the block sizes as
// template arguments.
template <int M, typename Kernel>
void Widths(const Kernel& kernel, int64_t m0, int64_t width) {
  int64_t w = 0;
  for (; w + kMaxColumns <= width; w += kMaxColumns) kernel.template Run<M, kMaxColumns>(m0, w);
  switch (width - w) {
    case 3:
      kernel.template Run<M, 3>(m0, w);
      break;
    case 2:
      kernel.template Run<M, 2>(m0, w);
      break;
    case 1:
      kernel.template Run<M, 1>(m0, w);
      break;
    default:
      break;
  }
}

template <typename Kernel>
void Blocks(const Kernel& kernel, int64_t channels, int64_t width) {
  for (int64_t m0 = 0; m0 < channels; m0 += kMaxChannels) {
    switch (std::min<int64_t>(kMaxChannels, channels - m0)) {
      case 6:
        Widths<6>(kernel, m0, width);
        break;
      case 5:
        Widths<5>(kernel, m0, width);
        break;
      case 4:
        Widths<4>(kernel, m0, width);
        break;
      case 3:
        Widths<3>(kernel, m0, width);
        break;
      case 2:
        Widths<2>(kernel, m0, width);
        break;
      default:
        Widths<1>(kernel, m0, width);
        break;
    }
  }
}

// Blocks of output channels x output columns of one row.
struct RowBlocks {
  const ImageLanesRow& r;
  template <int M, int P>
  void Run(int64_t m0, int64_t ow0) const {
    Block<M, P>(r, m0, ow0);
  }
};

// Blocks of output channels x kernel columns of the weight gradient.
struct GradBlocks {
  const ImageLanesGradRow& r;
  template <int M, int K>
  void Run(int64_t m0, int64_t kw0) const {
    GradBlock<M, K>(r, m0, kw0);
  }
};

}  // namespace

void ImageLanesGradRowAvx512(const ImageLanesGradRow& r) { Blocks(GradBlocks{r}, r.out_channels, r.kernel_w); }

void ImageLanesRowAvx512(const ImageLanesRow& r) { Blocks(RowBlocks{r}, r.out_channels, r.out_w); }

}  // namespace tsr

// col2im scatter-add of ConvTranspose (conv_transpose_col2im.h): per (channel, tap)
// row, the column pixels whose image position lies inside the image are found once
// per dimension, so the inner loop over a line of pixels carries no bounds tests; a
// stride-1 line is a contiguous add, vectorized with AVX2 where available, and 2-D stride-1
// windows into images at most 16 pixels wide add whole image rows in registers.
#include "kernels/cpu/conv_transpose_col2im.h"

#include <algorithm>
#include <cstdint>

#include "kernels/cpu/conv_transpose_row.h"
#include "kernels/cpu/cpu_features.h"

namespace tsr {

namespace {

// The column positions o in [lo, hi) of dimension d whose image position
// o * stride + offset lies inside [0, w.in[d]).
void InsideRange(const Window3d& w, int d, int64_t offset, int64_t& lo, int64_t& hi) {
  const int64_t s = w.stride[d];
  lo = offset < 0 ? (-offset + s - 1) / s : 0;
  const int64_t last = w.in[d] - 1 - offset;  // largest o * stride still inside
  hi = last < 0 ? 0 : std::min(w.out[d], last / s + 1);
  lo = std::min(lo, hi);
}

}  // namespace

void Col2ImAdd(const Window3d& w, const float* col, int64_t channel_begin, int64_t channel_end, float* y) {
  const int64_t taps = w.taps();
  const int64_t pixels = w.out_size();
  const int64_t in_size = w.in_size();
  const bool avx2 = ActiveCpuIsa() >= CpuIsa::kAvx2;
  // Image rows of at most 16 pixels, stride 1: a row kernel instead of one call per line of
  // a few pixels (LeNet's 8-wide column rows into 12-wide images).
  if (avx2 && w.in[0] == 1 && w.kernel[0] == 1 && w.in[2] <= 16 && w.stride[1] == 1 && w.stride[2] == 1 &&
      w.dilation[1] == 1 && w.dilation[2] == 1) {
    for (int64_t c = channel_begin; c < channel_end; ++c) {
      Col2ImNarrowChannelAvx2(col + c * taps * pixels, pixels, w.out[1], w.out[2], w.in[1], w.in[2], w.kernel[1],
                              w.kernel[2], w.pad_begin[1], w.pad_begin[2], y + c * in_size);
    }
    return;
  }
  for (int64_t c = channel_begin; c < channel_end; ++c) {
    float* yc = y + c * in_size;
    for (int64_t t = 0; t < taps; ++t) {
      const int64_t kw = t % w.kernel[2], kh = (t / w.kernel[2]) % w.kernel[1], kd = t / (w.kernel[2] * w.kernel[1]);
      const int64_t off_d = kd * w.dilation[0] - w.pad_begin[0];
      const int64_t off_h = kh * w.dilation[1] - w.pad_begin[1];
      const int64_t off_w = kw * w.dilation[2] - w.pad_begin[2];
      int64_t d_lo, d_hi, h_lo, h_hi, w_lo, w_hi;
      InsideRange(w, 0, off_d, d_lo, d_hi);
      InsideRange(w, 1, off_h, h_lo, h_hi);
      InsideRange(w, 2, off_w, w_lo, w_hi);
      const int64_t n = w_hi - w_lo;
      if (n <= 0) continue;
      const float* row = col + (c * taps + t) * pixels;
      for (int64_t od = d_lo; od < d_hi; ++od) {
        const int64_t id = od * w.stride[0] + off_d;
        for (int64_t oh = h_lo; oh < h_hi; ++oh) {
          const int64_t ih = oh * w.stride[1] + off_h;
          const float* src = row + (od * w.out[1] + oh) * w.out[2] + w_lo;
          float* dst = yc + (id * w.in[1] + ih) * w.in[2] + w_lo * w.stride[2] + off_w;
          const int64_t stride = w.stride[2];
          if (stride == 1 && avx2) {
            AddLineAvx2(src, n, dst);
          } else {
            for (int64_t i = 0; i < n; ++i) dst[i * stride] += src[i];
          }
        }
      }
    }
  }
}

}  // namespace tsr

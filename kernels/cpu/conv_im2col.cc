// im2col: one output line (a run of output pixels along W) at a time, with the
// in-bounds part of a stride-1 line copied in one block and that of a strided line
// by a vectorized copy where the ISA allows.
#include "kernels/cpu/conv_im2col.h"

#include <algorithm>
#include <cstring>

#include "kernels/cpu/conv_im2col_row.h"
#include "kernels/cpu/cpu_features.h"

namespace tsr {

namespace {

// dst[i] = x_row[(ow + i) * stride - offset] for i in [0, n), 0 where that index
// falls outside [0, width).
void FillLine(const float* x_row, int64_t width, int64_t stride, int64_t offset, int64_t ow, int64_t n, bool avx2,
              float* dst) {
  // Output positions with an input inside [0, width): ceil(offset / stride) up to
  // floor((width - 1 + offset) / stride).
  const int64_t first = offset > 0 ? (offset + stride - 1) / stride : 0;
  const int64_t last_num = width - 1 + offset;
  const int64_t end = last_num < 0 ? 0 : last_num / stride + 1;
  const int64_t lo = std::clamp(first, ow, ow + n) - ow;
  const int64_t hi = std::max(std::clamp(end, ow, ow + n) - ow, lo);
  std::fill(dst, dst + lo, 0.0f);
  if (hi > lo) {
    const float* src = x_row + (ow + lo) * stride - offset;
    if (stride == 1) {
      std::memcpy(dst + lo, src, static_cast<size_t>(hi - lo) * sizeof(float));
    } else if (avx2) {
      StridedCopyAvx2(src, stride, hi - lo, dst + lo);
    } else {
      for (int64_t i = lo; i < hi; ++i, src += stride) dst[i] = *src;
    }
  }
  std::fill(dst + hi, dst + n, 0.0f);
}

}  // namespace

void Im2Col(const Window3d& w, const float* x, int64_t row_begin, int64_t row_end, int64_t pixel_begin,
            int64_t pixel_end, float* col) {
  const bool avx2 = ActiveCpuIsa() >= CpuIsa::kAvx2;
  const int64_t ld = pixel_end - pixel_begin;
  const int64_t taps = w.taps();
  const int64_t in_size = w.in_size();
  const int64_t plane = w.out[1] * w.out[2];
  for (int64_t r = row_begin; r < row_end; ++r) {
    float* dst_row = col + r * ld;
    if (in_size == 0) {  // every tap is padding (and x may be null)
      std::fill(dst_row, dst_row + ld, 0.0f);
      continue;
    }
    const int64_t c = r / taps, t = r % taps;
    const int64_t kw = t % w.kernel[2], kh = (t / w.kernel[2]) % w.kernel[1], kd = t / (w.kernel[2] * w.kernel[1]);
    const float* xc = x + c * in_size;
    const int64_t offset = w.pad_begin[2] - kw * w.dilation[2];
    int64_t p = pixel_begin;
    int64_t od = p / plane, oh = (p / w.out[2]) % w.out[1], ow = p % w.out[2];
    while (p < pixel_end) {
      const int64_t n = std::min(w.out[2] - ow, pixel_end - p);
      float* dst = dst_row + (p - pixel_begin);
      const int64_t id = od * w.stride[0] - w.pad_begin[0] + kd * w.dilation[0];
      const int64_t ih = oh * w.stride[1] - w.pad_begin[1] + kh * w.dilation[1];
      if (id < 0 || id >= w.in[0] || ih < 0 || ih >= w.in[1]) {
        std::fill(dst, dst + n, 0.0f);
      } else {
        FillLine(xc + (id * w.in[1] + ih) * w.in[2], w.in[2], w.stride[2], offset, ow, n, avx2, dst);
      }
      p += n;
      ow = 0;
      if (++oh == w.out[1]) {
        oh = 0;
        ++od;
      }
    }
  }
}

}  // namespace tsr

// im2col: one output line (a run of output pixels along W) at a time, with the
// in-bounds part of a stride-1 line copied in one block and that of a strided line
// by a vectorized copy where the ISA allows; and the packer that writes the same
// rows into Sgemm's nr-column strips through a small buffer of rows.
#include "kernels/cpu/conv_im2col.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/cpu/conv_im2col_row.h"
#include "kernels/cpu/cpu_features.h"

namespace tsr {

namespace {

// The output positions ow of a line whose input x_row[ow * stride - offset] lies
// inside [0, width): [first, end) (first may exceed end when there are none). The
// same for every line of an im2col row, so computed once per row.
struct LineBounds {
  int64_t first, end;
  LineBounds(int64_t width, int64_t stride, int64_t offset) {
    first = offset > 0 ? (offset + stride - 1) / stride : 0;
    const int64_t last_num = width - 1 + offset;
    end = last_num < 0 ? 0 : last_num / stride + 1;
  }
};

// dst[i] = x_row[(ow + i) * stride - offset] for i in [0, n), 0 where that index
// falls outside [0, width) (b: the line's bounds).
inline void FillLine(const float* x_row, const LineBounds& b, int64_t stride, int64_t offset, int64_t ow, int64_t n,
                     bool avx2, float* dst) {
  const int64_t lo = std::clamp(b.first, ow, ow + n) - ow;
  const int64_t hi = std::max(std::clamp(b.end, ow, ow + n) - ow, lo);
  for (int64_t i = 0; i < lo; ++i) dst[i] = 0.0f;
  if (hi > lo) {
    const float* src = x_row + (ow + lo) * stride - offset;
    if (stride == 1) {
      std::memcpy(dst + lo, src, static_cast<size_t>(hi - lo) * sizeof(float));
    } else if (avx2 && hi - lo >= 9) {  // StridedCopyAvx2's vector loop needs 9
      StridedCopyAvx2(src, stride, hi - lo, dst + lo);
    } else {
      for (int64_t i = lo; i < hi; ++i, src += stride) dst[i] = *src;
    }
  }
  for (int64_t i = hi; i < n; ++i) dst[i] = 0.0f;
}

// Row r of the column matrix for output pixels [pixel_begin, pixel_end) into dst_row.
void Im2ColRow(const Window3d& w, const float* x, int64_t r, int64_t pixel_begin, int64_t pixel_end, bool avx2,
               float* dst_row) {
  const int64_t taps = w.taps();
  const int64_t in_size = w.in_size();
  const int64_t plane = w.out[1] * w.out[2];
  if (in_size == 0) {  // every tap is padding (and x may be null)
    std::fill(dst_row, dst_row + (pixel_end - pixel_begin), 0.0f);
    return;
  }
  const int64_t c = r / taps, t = r % taps;
  const int64_t kw = t % w.kernel[2], kh = (t / w.kernel[2]) % w.kernel[1], kd = t / (w.kernel[2] * w.kernel[1]);
  const float* xc = x + c * in_size;
  const int64_t offset = w.pad_begin[2] - kw * w.dilation[2];
  const LineBounds bounds(w.in[2], w.stride[2], offset);
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
      FillLine(xc + (id * w.in[1] + ih) * w.in[2], bounds, w.stride[2], offset, ow, n, avx2, dst);
    }
    p += n;
    ow = 0;
    if (++oh == w.out[1]) {
      oh = 0;
      ++od;
    }
  }
}

// Copies `rows` rows of kNr floats, row g at line + g * width, to dst (contiguous
// rows of kNr). A fixed size, so each row compiles to vector moves.
template <int kNr>
void CopyStripRows(const float* line, int64_t width, int64_t rows, float* dst) {
  for (int64_t g = 0; g < rows; ++g) std::memcpy(dst + g * kNr, line + g * width, sizeof(float) * kNr);
}

// Lines buffered per group of rows: at most this many floats (16 KiB, L1-resident)
// and at most kMaxGroupRows rows.
constexpr int64_t kLineBufferFloats = 4096;
constexpr int64_t kMaxGroupRows = 16;

}  // namespace

void Im2Col(const Window3d& w, const float* x, int64_t row_begin, int64_t row_end, int64_t pixel_begin,
            int64_t pixel_end, float* col) {
  const bool avx2 = ActiveCpuIsa() >= CpuIsa::kAvx2;
  const int64_t ld = pixel_end - pixel_begin;
  for (int64_t r = row_begin; r < row_end; ++r) Im2ColRow(w, x, r, pixel_begin, pixel_end, avx2, col + r * ld);
}

Im2ColPacker::Im2ColPacker(const Window3d& w, const float* x) : w_(w), x_(x), avx2_(ActiveCpuIsa() >= CpuIsa::kAvx2) {}

void Im2ColPacker::Pack(int64_t p0, int64_t kc, int64_t j0, int64_t nc, int nr, float* dst) const {
  // A group of rows of the block at a time into L1-resident lines (zero past nc,
  // which pads the last strip), then copied strip by strip. Writing each row straight
  // into all strips instead would store to addresses kc * nr floats apart -- a
  // multiple of 4 KiB, so all in one L1 set -- and thrash it.
  thread_local std::vector<float> lines;
  const int64_t strips = (nc + nr - 1) / nr;
  const int64_t width = strips * nr;
  const int64_t group = std::clamp<int64_t>(kLineBufferFloats / width, 1, kMaxGroupRows);
  lines.resize(static_cast<size_t>(group * width));
  for (int64_t g = 0; g < group; ++g) std::fill(lines.data() + g * width + nc, lines.data() + (g + 1) * width, 0.0f);
  for (int64_t p = 0; p < kc; p += group) {
    const int64_t rows = std::min(group, kc - p);
    for (int64_t g = 0; g < rows; ++g) Im2ColRow(w_, x_, p0 + p + g, j0, j0 + nc, avx2_, lines.data() + g * width);
    for (int64_t s = 0; s < strips; ++s) {
      const float* src = lines.data() + s * nr;
      float* d = dst + s * kc * nr + p * nr;
      switch (nr) {
        case 8:
          CopyStripRows<8>(src, width, rows, d);
          break;
        case 16:
          CopyStripRows<16>(src, width, rows, d);
          break;
        case 32:
          CopyStripRows<32>(src, width, rows, d);
          break;
        default:
          for (int64_t g = 0; g < rows; ++g) std::memcpy(d + g * nr, src + g * width, sizeof(float) * nr);
      }
    }
  }
}

}  // namespace tsr

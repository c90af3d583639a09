// Depthwise Conv plane loop: the choice between the padded-plane AVX2 kernel and the
// row-wise loops, the padded copy's layout and scratch, and the portable inner loop.
#include "kernels/cpu/conv_depthwise.h"

#include <algorithm>
#include <vector>

#include "kernels/cpu/conv_depthwise_row.h"

namespace tsr {

namespace {

void StridedAxpyScalar(int64_t n, float a, const float* x, int64_t stride, float* y) {
  for (int64_t i = 0; i < n; ++i) y[i] += a * x[i * stride];
}

int64_t RoundUp8(int64_t n) { return (n + 7) / 8 * 8; }

// The largest input plane DepthwiseConvChannels takes: its padded copy of sixteen
// channels (64 bytes a pixel; 0.8 MiB at 112x112) should stay in L2. Moving sixteen
// planes into pixel vectors and back costs a transpose per 16 pixels each way, against
// the plane kernel's edge columns, short rows and (stride 2) deinterleaving: measured
// (bench/conv_bench.cc, one thread, MobileNetV2's 3x3 layers) the channel-blocked kernel
// is faster on every one, 1.2x at 112x112 (32@112: 41 -> 49 GFLOP/s), 1.5x at 56 with
// stride 2 (144@56/2: 17 -> 25) and 2.4-3x at 7 and 14 (960@7: 10 -> 33).
constexpr int64_t kMaxChannelBlockedPixels = 128 * 128;

// The AVX2 plane kernel on a zero-padded copy of the input (layout: see
// DepthwisePaddedPlane), held per thread and reused from plane to plane.
void DepthwisePaddedAvx2(const Window3d& w, const float* x, const float* weights, float bias, float* y) {
  DepthwisePaddedPlane p{x,
                         w.in[1],
                         w.in[2],
                         w.pad_begin[1],
                         w.pad_begin[2],
                         weights,
                         w.kernel[1],
                         w.kernel[2],
                         w.stride[1],
                         w.stride[2],
                         w.dilation[1],
                         w.dilation[2],
                         w.out[1],
                         w.out[2],
                         bias,
                         nullptr,
                         0,
                         0,
                         0};
  p.rows = (p.out_h - 1) * p.stride_h + (p.kernel_h - 1) * p.dilation_h + 1;
  const int64_t vector_w = RoundUp8(p.out_w);  // outputs computed per row, stored or not
  // Each row also takes the whole input row as the fill copies it (in blocks of 8,
  // or of 16 input columns for stride 2), even where no output reads it.
  if (p.stride_w == 1) {
    p.row_stride = RoundUp8(std::max(vector_w + (p.kernel_w - 1) * p.dilation_w, p.pad_left + RoundUp8(p.in_w)));
  } else {
    const int64_t input_half = (p.pad_left + 1) / 2 + RoundUp8((p.in_w + 1) / 2);
    p.half = RoundUp8(std::max(vector_w + (p.kernel_w - 1) * p.dilation_w / 2, input_half));
    p.row_stride = 2 * p.half;
  }
  const int64_t floats = p.rows * p.row_stride;
  thread_local std::vector<float> scratch;
  // What decides where the last fill on this thread left its zeros.
  thread_local int64_t last_layout[8] = {-1};
  if (scratch.size() < static_cast<size_t>(floats)) scratch.resize(static_cast<size_t>(floats));
  p.scratch = scratch.data();
  const int64_t layout[8] = {
      reinterpret_cast<int64_t>(p.scratch), p.in_h, p.in_w, p.pad_top, p.pad_left, p.rows, p.row_stride, p.half};
  p.zeros_present = std::equal(layout, layout + 8, last_layout);
  std::copy(layout, layout + 8, last_layout);
  DepthwisePaddedPlaneAvx2(p, y);
}

}  // namespace

bool DepthwiseChannelsApply(const Window3d& w, CpuIsa isa) {
  return isa >= CpuIsa::kAvx512 && w.dilation[1] == 1 && w.dilation[2] == 1 &&
         w.kernel[1] * w.kernel[2] <= kMaxDepthwiseBlockTaps && w.out[1] > 0 && w.out[2] > 0 &&
         w.in[1] * w.in[2] <= kMaxChannelBlockedPixels;
}

void DepthwiseConvChannels(const Window3d& w, int64_t channels, const float* x, const float* weights, const float* bias,
                           float* y) {
  DepthwiseChannelBlockAvx512({x, channels, w.in[1], w.in[2], w.pad_begin[1], w.pad_begin[2], weights, bias,
                               w.kernel[1], w.kernel[2], w.stride[1], w.stride[2], w.out[1], w.out[2], y});
}

void DepthwiseConvPlane(const Window3d& w, const float* x, const float* weights, float bias, float* y, CpuIsa isa) {
  if (w.out[1] == 0 || w.out[2] == 0) return;
  // With AVX2 and a W stride of 1 or 2 (every MobileNet depthwise layer): the whole
  // plane through one vector loop on a padded copy. The copy costs one pass over the
  // input against kernel taps passes of multiply-adds, and removes the edge columns
  // that dominate narrow planes (14 or 7 pixels) in the row-wise loops below.
  if (isa >= CpuIsa::kAvx2 && w.stride[2] <= 2) {
    DepthwisePaddedAvx2(w, x, weights, bias, y);
    return;
  }
  const int64_t out_w = w.out[2];
  // Output columns whose taps along W all lie inside the row: with AVX2 these run
  // eight at a time with the sum in a register, and the edge columns one by one;
  // otherwise each tap is applied along the whole row.
  int64_t interior_begin = (w.pad_begin[2] + w.stride[2] - 1) / w.stride[2];
  const int64_t last = w.in[2] - 1 + w.pad_begin[2] - (w.kernel[2] - 1) * w.dilation[2];
  const int64_t interior_end = last < 0 ? 0 : std::min(out_w, last / w.stride[2] + 1);
  interior_begin = std::min(interior_begin, interior_end);
  const int64_t interior_n =
      isa >= CpuIsa::kAvx2 && interior_end - interior_begin >= 8 ? interior_end - interior_begin : 0;
  const auto axpy = isa >= CpuIsa::kAvx2 ? StridedAxpyAvx2 : StridedAxpyScalar;
  for (int64_t oh = 0; oh < w.out[1]; ++oh) {
    float* y_row = y + oh * out_w;
    int64_t kh_lo, kh_hi;
    w.ValidTaps(1, oh, kh_lo, kh_hi);
    const int64_t ih_first = oh * w.stride[1] - w.pad_begin[1] + kh_lo * w.dilation[1];
    if (interior_n > 0 && kh_lo < kh_hi) {
      DepthwiseRowAvx2({x, w.in[2], ih_first, kh_hi - kh_lo, w.dilation[1], weights + kh_lo * w.kernel[2], w.kernel[2],
                        interior_begin * w.stride[2] - w.pad_begin[2], w.dilation[2], w.stride[2], interior_n, bias},
                       y_row + interior_begin);
      // The few edge columns, one output at a time.
      for (int64_t ow = 0; ow < out_w; ++ow) {
        if (ow == interior_begin) ow += interior_n;
        if (ow >= out_w) break;
        int64_t kw_lo, kw_hi;
        w.ValidTaps(2, ow, kw_lo, kw_hi);
        float sum = bias;
        for (int64_t kh = kh_lo; kh < kh_hi; ++kh) {
          const float* x_row = x + (ih_first + (kh - kh_lo) * w.dilation[1]) * w.in[2];
          for (int64_t kw = kw_lo; kw < kw_hi; ++kw) {
            sum += weights[kh * w.kernel[2] + kw] * x_row[ow * w.stride[2] - w.pad_begin[2] + kw * w.dilation[2]];
          }
        }
        y_row[ow] = sum;
      }
      continue;
    }
    // Without the vector loop: each tap along the whole row at once.
    std::fill(y_row, y_row + out_w, bias);
    for (int64_t kh = kh_lo; kh < kh_hi; ++kh) {
      const float* x_row = x + (ih_first + (kh - kh_lo) * w.dilation[1]) * w.in[2];
      for (int64_t kw = 0; kw < w.kernel[2]; ++kw) {
        // Columns whose tap kw lies inside the row: ow * stride + offset in [0, in).
        const int64_t offset = kw * w.dilation[2] - w.pad_begin[2];
        const int64_t lo = offset < 0 ? (-offset + w.stride[2] - 1) / w.stride[2] : 0;
        const int64_t tap_last = w.in[2] - 1 - offset;
        const int64_t hi = tap_last < 0 ? 0 : std::min(out_w, tap_last / w.stride[2] + 1);
        if (lo >= hi) continue;
        axpy(hi - lo, weights[kh * w.kernel[2] + kw], x_row + lo * w.stride[2] + offset, w.stride[2], y_row + lo);
      }
    }
  }
}

}  // namespace tsr

// The inner loops of the depthwise Conv, one entry point per ISA (conv_depthwise_avx2.cc,
// conv_depthwise_blocked_avx512.cc). Kept apart from conv_depthwise.h so the ISA file includes
// nothing with inline functions or templates.
#ifndef TESSERA_KERNELS_CPU_CONV_DEPTHWISE_ROW_H_
#define TESSERA_KERNELS_CPU_CONV_DEPTHWISE_ROW_H_

#include <cstdint>

namespace tsr {

// y[i] += a * x[i * stride] for i in [0, n).
void StridedAxpyAvx2(int64_t n, float a, const float* x, int64_t stride, float* y);

// n (at least 8) consecutive outputs of one output row whose taps all lie inside
// the input, eight at a time with the sum held in a register:
//   y[j] = bias + sum over i < kh_count, k < kernel_w (in that order) of
//          weights[i * kernel_w + k] * x[(ih_first + i * dilation_h) * in_w + iw_first +
//                                        j * stride_w + k * dilation_w].
struct DepthwiseRowSpan {
  const float* x;
  int64_t in_w;
  int64_t ih_first, kh_count, dilation_h;
  const float* weights;  // the kernel row of the first tap row
  int64_t kernel_w, iw_first, dilation_w, stride_w;
  int64_t n;
  float bias;
};
void DepthwiseRowAvx2(const DepthwiseRowSpan& s, float* y);

// One whole output plane through a zero-padded copy of its input, so that every
// output column runs the same vector loop (no edge columns, no gathers):
//   y[oh, ow] = bias + sum over kh < kernel_h, kw < kernel_w (in that order) of
//               weights[kh * kernel_w + kw] * x[oh * stride_h - pad_top + kh * dilation_h,
//                                               ow * stride_w - pad_left + kw * dilation_w]
// with x zero outside [0, in_h) x [0, in_w). stride_w is 1 or 2. The caller sizes the
// copy (see conv_depthwise.cc): `scratch` holds `rows` padded rows of `row_stride`
// floats, a multiple of 8 covering both the padded columns the outputs read, [0,
// round_up(out_w, 8) * stride_w + (kernel_w - 1) * dilation_w), and [0, pad_left +
// round_up(in_w, 8)) (the fill's last block); with stride_w 2 each row holds its even
// padded columns at [0, half) and its odd ones at [half, 2 * half) instead. The
// padding's zeros lie at the same places for every plane of a layout: with
// `zeros_present` the scratch already holds them (its last fill had this layout)
// and only the input is copied.
struct DepthwisePaddedPlane {
  const float* x;
  int64_t in_h, in_w, pad_top, pad_left;
  const float* weights;
  int64_t kernel_h, kernel_w, stride_h, stride_w, dilation_h, dilation_w;
  int64_t out_h, out_w;
  float bias;
  float* scratch;
  int64_t rows, row_stride, half;
  bool zeros_present;
};
void DepthwisePaddedPlaneAvx2(const DepthwisePaddedPlane& p, float* y);

// The most taps (kernel_h * kernel_w) DepthwiseChannelBlockAvx512 takes.
inline constexpr int64_t kMaxDepthwiseBlockTaps = 25;

// Up to sixteen consecutive channels of a depthwise convolution (one input plane per
// output plane) at once, channel c in vector lane c, for c < channels:
//   y[c][oh, ow] = bias[c] + sum over kh < kernel_h, kw < kernel_w (in that order) of
//                  weights[c * kernel_h * kernel_w + kh * kernel_w + kw] *
//                  x[c][oh * stride_h - pad_top + kh, ow * stride_w - pad_left + kw]
// with x zero outside [0, in_h) x [0, in_w) -- the same floats as the padded-plane
// kernel's. Planes are dense (in_h * in_w and out_h * out_w floats apart); bias may be
// null (zero); no dilation; at most kMaxDepthwiseBlockTaps taps.
struct DepthwiseChannelBlock {
  const float* x;
  int64_t channels;
  int64_t in_h, in_w, pad_top, pad_left;
  const float* weights;
  const float* bias;
  int64_t kernel_h, kernel_w, stride_h, stride_w;
  int64_t out_h, out_w;
  float* y;
};
void DepthwiseChannelBlockAvx512(const DepthwiseChannelBlock& b);

}  // namespace tsr

#endif  // TESSERA_KERNELS_CPU_CONV_DEPTHWISE_ROW_H_

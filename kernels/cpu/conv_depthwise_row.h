// The inner loops of the depthwise Conv, one entry point per ISA (the AVX2 one lives in
// conv_depthwise_avx2.cc). Kept apart from conv_depthwise.h so the ISA file includes
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

}  // namespace tsr

#endif  // TESSERA_KERNELS_CPU_CONV_DEPTHWISE_ROW_H_

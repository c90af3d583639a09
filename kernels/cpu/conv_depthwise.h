// Direct depthwise convolution (group == input channels) over one or two spatial
// dimensions: each output plane is a weighted sum of shifted rows of its single
// input plane, accumulated one tap at a time along whole output rows so the inner
// loop is a contiguous (or strided) multiply-add the vector units take directly.
// A GEMM would have one row per group here and run at a fraction of its speed.
#ifndef TESSERA_KERNELS_CPU_CONV_DEPTHWISE_H_
#define TESSERA_KERNELS_CPU_CONV_DEPTHWISE_H_

#include <cstdint>

#include "kernels/cpu/conv_window.h"
#include "kernels/cpu/cpu_features.h"

namespace tsr {

// y[oh, ow] = bias + sum over taps of weights[kh, kw] * x[ih, iw] for one plane
// (w.out[0] == w.in[0] == w.kernel[0] == 1), summed in tap order.
void DepthwiseConvPlane(const Window3d& w, const float* x, const float* weights, float bias, float* y, CpuIsa isa);

}  // namespace tsr

#endif  // TESSERA_KERNELS_CPU_CONV_DEPTHWISE_H_

// Direct depthwise convolution (group == input channels) over one or two spatial
// dimensions, one output plane at a time from its single input plane. With AVX2 and
// a W stride of 1 or 2, the plane is copied once into a zero-padded scratch (for
// stride 2 split into even and odd columns) and every output row runs one vector
// loop, eight columns per register, over blocks of 4 rows x 16 columns with the sums
// in registers. Otherwise each tap is accumulated along whole output rows, so the
// inner loop is a contiguous (or strided) multiply-add. A GEMM would have one row
// per group here and run at a fraction of the speed. With AVX-512, planes up to 128x128 go
// sixteen channels at a time instead (DepthwiseConvChannels), one channel per lane.
#ifndef TESSERA_KERNELS_CPU_CONV_DEPTHWISE_H_
#define TESSERA_KERNELS_CPU_CONV_DEPTHWISE_H_

#include <cstdint>

#include "kernels/cpu/conv_window.h"
#include "kernels/cpu/cpu_features.h"

namespace tsr {

// Whether DepthwiseConvChannels applies: AVX-512, no dilation, at most 25 taps, and
// planes small enough (up to 128x128) that the channel-blocked copies stay in L2.
bool DepthwiseChannelsApply(const Window3d& w, CpuIsa isa);

// DepthwiseConvPlane for `channels` (up to 16) consecutive planes at once, channel c's
// input at x + c * in_size, weights at weights + c * taps, bias bias[c] (bias may be
// null), output at y + c * out_size: the same floats, sixteen channels per vector (see
// DepthwiseChannelBlock in conv_depthwise_row.h). Only where DepthwiseChannelsApply.
void DepthwiseConvChannels(const Window3d& w, int64_t channels, const float* x, const float* weights, const float* bias,
                           float* y);

// y[oh, ow] = bias + sum over taps of weights[kh, kw] * x[ih, iw] for one plane
// (w.out[0] == w.in[0] == w.kernel[0] == 1), summed in tap order.
void DepthwiseConvPlane(const Window3d& w, const float* x, const float* weights, float bias, float* y, CpuIsa isa);

}  // namespace tsr

#endif  // TESSERA_KERNELS_CPU_CONV_DEPTHWISE_H_

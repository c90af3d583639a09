// Direct Conv and ConvGradFilter for convolutions with few input channels per
// output (C/group * kh * kw <= kMaxDirectConvRows), stride 1, 1-D or 2-D: LeNet's and
// the first layers of image models. There the im2col GEMM is a stack of thin per-image
// products (K or N of a few dozen) whose packing costs as much as the arithmetic. The
// direct loops (conv_direct_rows.h) instead copy each image into zero-padded planes
// whose row stride is the padded width, so that every (channel, tap) is one constant
// offset into them, and run over all pixels of an image at once:
//   - Conv: blocks of 4 output channels x 24 pixels (AVX-512: 6 x 64) in registers,
//     the input read once per tap and block, the weights broadcast;
//   - ConvGradFilter: blocks of 4 output channels x 3 taps (3 x 4 when the channels
//     do not come in fours), each a dot product of an output-gradient plane with
//     the shifted input, over all pixels of 4 images before one reduction.
// The padded width makes each row (padded width - output width) columns longer; those
// extra pixels are computed and dropped (Conv) or meet a zero gradient
// (ConvGradFilter), so a plane may be at most twice as wide as the output.
// AVX2 and up: at lower ISA levels the callers keep their GEMM paths.
#ifndef TESSERA_KERNELS_CPU_CONV_DIRECT_H_
#define TESSERA_KERNELS_CPU_CONV_DIRECT_H_

#include <cstdint>
#include <functional>

#include "kernels/cpu/conv_window.h"
#include "kernels/kernel.h"

namespace tsr {

// Largest C/group * taps the direct loops take. Their cost grows with it like the
// GEMM's, whose packing and thin products it exists to avoid; the largest case
// measured is LeNet's second layer (6 x 5 x 5 = 150), 2.9x (Conv) and 2.5x
// (ConvGradFilter) faster direct at batch 64. Larger ones keep the GEMM until measured.
inline constexpr int64_t kMaxDirectConvRows = 160;

// The same limit for a stride-1 ConvTranspose run as its equivalent Conv
// (conv_transpose_kernels.cc), where the alternative is a GEMM of depth C/group (16 in
// LeNet's input gradient) and a scatter of taps x rows. Measured at 400 (LeNet's
// 16 x 5 x 5 at batch 64, interleaved runs): 0.85-0.89 ms direct, 0.98-1.04 ms GEMM
// and scatter.
inline constexpr int64_t kMaxDirectConvTransposeRows = 400;

// Whether the direct loops take a convolution with window `w` and `c_per_group`
// input channels per group: AVX2, stride 1, no depth dimension, 1 <= C/group * taps
// <= max_rows, a padded width of at most twice the output width, and a non-empty
// output.
bool DirectConvApplies(const Window3d& w, int64_t c_per_group, int64_t max_rows = kMaxDirectConvRows);

// Called by DirectConv with output planes [plane_begin, plane_end) of y (a plane: one
// image's channel) once they are written, on the thread that wrote them: a fused
// epilogue then finds them in its cache.
using DirectConvPlanesDoneFn = std::function<void(int64_t plane_begin, int64_t plane_end)>;

// Conv: y [batch, out_channels, out] from x [batch, channels, in], weights
// [out_channels, channels / group, kernel], bias [out_channels] or null. Requires
// DirectConvApplies. Threads split the (image, group) pairs; planes_done (if any) is
// called for each pair's planes.
void DirectConv(const Window3d& w, int64_t batch, int64_t channels, int64_t out_channels, int64_t group, const float* x,
                const float* weights, const float* bias, float* y, const ParallelForFn& parallel_for,
                const DirectConvPlanesDoneFn* planes_done = nullptr);

// Whether every element of x[0, n) is finite. DirectConvGradFilter multiplies the
// dropped pixels' zero gradients by real inputs, which is exact only for finite ones.
bool AllFinite(const float* x, int64_t n);

// out[i] = parts[0 * floats + i] + parts[1 * floats + i] + ... (count parts, added in
// order): the weight gradients' per-chunk sums, added so that the result does not depend
// on which threads computed them.
void SumPartsInOrder(const float* parts, int64_t count, int64_t floats, float* out);

// ConvGradFilter: dw [out_channels, channels / group, kernel] from x [batch, channels,
// in] and dy [batch, out_channels, out]. Requires DirectConvApplies and a finite x.
// Images are summed in fixed chunks whose partial sums are added in order, so the
// result does not depend on how threads split them.
bool DirectConvGradFilter(const Window3d& w, int64_t batch, int64_t channels, int64_t out_channels, int64_t group,
                          const float* x, const float* dy, float* dw, const ParallelForFn& parallel_for);

}  // namespace tsr

#endif  // TESSERA_KERNELS_CPU_CONV_DIRECT_H_

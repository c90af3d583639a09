// Direct convolution with sixteen images in the lanes of every vector: for a batch of
// small images with few channels (LeNet's layers at batch 64) the channels and pixels
// fill vectors poorly -- six output channels, rows of 10 or 14 pixels --, while the
// images fill them exactly. Each block of sixteen images is transposed into
// [channel][row][padded column][16 images], every output is a sum of whole-vector
// fused multiply-adds over its taps with the weights broadcast, and the outputs are
// transposed back. Rows take only their valid kernel rows, columns the valid kernel
// columns of the (at most four) columns computed together: on LeNet's input gradient --
// a 5x5 "full" correlation of a 10x10 image, half of whose padded taps are zeros -- 83%
// of the multiply-adds are useful, against 51% for a convolution over the padded image.
// The weight gradient runs the same way: per block of sixteen images, each weight's sum
// of products over the output pixels stays in one vector until its lanes are added.
//
// AVX-512 only (the callers keep their other paths below it); group 1, stride 1, one or
// two spatial dimensions.
#ifndef TESSERA_KERNELS_CPU_CONV_IMAGE_LANES_H_
#define TESSERA_KERNELS_CPU_CONV_IMAGE_LANES_H_

#include <cstdint>

#include "kernels/cpu/conv_window.h"
#include "kernels/kernel.h"

namespace tsr {

// Whether ImageLanesConv takes a convolution with window `w` (over x's spatial sizes;
// w.out the output's), `channels` input channels and group 1, on `batch` images:
// AVX-512, stride 1, no depth dimension, at least one input channel and output pixel,
// at least sixteen images (one full block), at most kMaxImageLanesRows channels x
// taps, and a transposed block of input of at most kMaxImageLanesBlockBytes.
bool ImageLanesConvApplies(const Window3d& w, int64_t batch, int64_t channels, int64_t group);

inline constexpr int64_t kMaxImageLanesRows = 400;
inline constexpr int64_t kMaxImageLanesBlockBytes = int64_t{1} << 20;

// y [batch, out_channels, out] = conv(x [batch, channels, in], weights [out_channels,
// channels, kernel]) + bias [out_channels] (null: none). Requires ImageLanesConvApplies
// and finite weights (the padding's zeros meet them). Every output is its bias plus its
// taps in (channel, kernel row, kernel column) order -- a few of them zero products --,
// whatever the thread split. Threads split the blocks of sixteen images and, when there
// are few, the output rows.
void ImageLanesConv(const Window3d& w, int64_t batch, int64_t channels, int64_t out_channels, const float* x,
                    const float* weights, const float* bias, float* y, const ParallelForFn& parallel_for);

// The weight gradient of that convolution: dw [out_channels, channels, kernel] from x
// [batch, channels, in] and dy [batch, out_channels, out], written (not added to).
// Requires ImageLanesConvApplies, and a finite dy when the window is padded (a zero
// column times an infinity would not be the nothing a skipped tap adds). Each block of
// sixteen images sums its products per weight -- every output pixel where the tap reads
// inside the input, in row-major order, and for a few, a zero column --, its lanes are
// added, and the blocks' sums are added in order: the result does not depend on the
// thread split.
void ImageLanesConvGradFilter(const Window3d& w, int64_t batch, int64_t channels, int64_t out_channels, const float* x,
                              const float* dy, float* dw, const ParallelForFn& parallel_for);

}  // namespace tsr

#endif  // TESSERA_KERNELS_CPU_CONV_IMAGE_LANES_H_

// col2im for the GEMM-based ConvTranspose: the inverse direction of conv_im2col.h.
// A column matrix whose rows are (output channel, kd, kh, kw) -- the order of a
// ConvTranspose weight's trailing dimensions -- and whose columns are the
// transposed convolution's input pixels is scatter-added into the output image.
//
// The Window3d is the forward window of the Conv whose adjoint the ConvTranspose is:
// w.in is the ConvTranspose's output (the image written here), w.out its input (the
// columns), so column pixel o and tap k land on image position o * stride -
// pad_begin + k * dilation, dropped when outside [0, w.in).
#ifndef TESSERA_KERNELS_CPU_CONV_TRANSPOSE_COL2IM_H_
#define TESSERA_KERNELS_CPU_CONV_TRANSPOSE_COL2IM_H_

#include <cstdint>

#include "kernels/cpu/conv_window.h"

namespace tsr {

// For each channel c in [channel_begin, channel_end): adds rows [c * taps, (c + 1) *
// taps) of `col` ([channels * w.taps(), w.out_size()] row-major) into channel c of `y`
// ([channels, w.in_size()]). Every element of y receives its contributions in tap
// order, so the result does not depend on how the channels are split.
void Col2ImAdd(const Window3d& w, const float* col, int64_t channel_begin, int64_t channel_end, float* y);

}  // namespace tsr

#endif  // TESSERA_KERNELS_CPU_CONV_TRANSPOSE_COL2IM_H_

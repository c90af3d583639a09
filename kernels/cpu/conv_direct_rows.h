// The ISA-specific loops of the direct small-channel convolution (conv_direct.h).
// Both work on zero-padded input planes flattened to one pixel index q (row-major
// with the padded width as row stride), where (channel, tap) row r of the im2col
// matrix is the input read at q + offsets[r]: no column matrix is formed.
#ifndef TESSERA_KERNELS_CPU_CONV_DIRECT_ROWS_H_
#define TESSERA_KERNELS_CPU_CONV_DIRECT_ROWS_H_

#include <cstdint>

namespace tsr {

// ConvDirectForwardAvx2's register block: this many output channels by this many
// 8-float vectors of pixels (12 accumulators of the 16 ymm registers).
inline constexpr int64_t kDirectForwardChannels = 4;
inline constexpr int64_t kDirectForwardVectors = 3;
// ConvDirectForwardAvx2 computes pixels in steps of this many.
inline constexpr int64_t kDirectForwardPixelStep = 8 * kDirectForwardVectors;

// out[m * out_stride + q] = sum over r < rows of W[m][r] * xp[offsets[r] + q], for
// m < channels_out and q < pixels (a multiple of kDirectForwardPixelStep). The
// weights come packed in blocks of kDirectForwardChannels output channels (the last
// block may be smaller): block m0 (size mb) at packed_weights + m0 * rows, with
// W[m0 + i][r] at r * mb + i. Reads xp[offsets[r] + q] for every r and q.
void ConvDirectForwardAvx2(const float* xp, const int64_t* offsets, int64_t rows, const float* packed_weights,
                           int64_t channels_out, int64_t pixels, float* out, int64_t out_stride);

// A set of images for ConvDirectGradFilterAvx2: image n's padded input planes at
// xp + n * x_image, its output-gradient planes (zero in the dropped pixels) at
// dy + n * dy_image, channel m's at + m * dy_stride; dy and the strides 32-byte
// aligned, pixels a multiple of 8.
struct GradFilterImages {
  const float* xp;
  int64_t x_image;
  const float* dy;
  int64_t dy_stride, dy_image;
  int64_t images, pixels;
};

// dw[m * rows + r] += sum over images n and q < pixels of dy(n)[m][q] * xp(n)[offsets[r] + q]
// for m < channels_out and r < rows, each sum in an order fixed by the image count
// and `pixels` alone.
void ConvDirectGradFilterAvx2(const GradFilterImages& images, const int64_t* offsets, int64_t rows,
                              int64_t channels_out, float* dw);

// dst[r * width + i] = src[r * src_stride + i] + bias for r < rows, i < width: the
// output pixels of one channel out of ConvDirectForwardAvx2's padded rows.
void CopyRowsAddBiasAvx2(const float* src, int64_t src_stride, int64_t rows, int64_t width, float bias, float* dst);

// Whether none of x[0, n) is an infinity or NaN.
bool AllFiniteAvx2(const float* x, int64_t n);

}  // namespace tsr

#endif  // TESSERA_KERNELS_CPU_CONV_DIRECT_ROWS_H_

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

// ConvDirectForwardAvx512's: up to 6 output channels by up to 4 16-float vectors of
// pixels (24 accumulators of the 32 zmm registers; LeNet's first layer, 6 channels, is
// one block), pixels in steps of one vector.
inline constexpr int64_t kDirectForwardChannelsAvx512 = 6;
inline constexpr int64_t kDirectForwardVectorsAvx512 = 4;
inline constexpr int64_t kDirectForwardPixelStepAvx512 = 16;

// out[m * out_stride + q] = sum over r < rows of W[m][r] * xp[offsets[r] + q], for
// m < channels_out and q < pixels (a multiple of kDirectForwardPixelStep), each sum
// one multiply-add per r in order. The weights come packed in blocks of
// kDirectForwardChannels output channels (the last block may be smaller): block m0
// (size mb) at packed_weights + m0 * rows, with W[m0 + i][r] at r * mb + i. Reads
// xp[offsets[r] + q] for every r and q.
void ConvDirectForwardAvx2(const float* xp, const int64_t* offsets, int64_t rows, const float* packed_weights,
                           int64_t channels_out, int64_t pixels, float* out, int64_t out_stride);

// Where ConvDirectForwardAvx512 stores the sums of pixel vector v (pixels [16 v,
// 16 v + 16) of the padded rows): the lanes set in lanes[v] (the pixels of output
// columns, in rows that exist), packed together, at element first[v] of each output
// plane. Consecutive valid pixels are consecutive output elements, so the vector's
// valid lanes are one contiguous run of the plane however many rows it spans.
struct DirectForwardStores {
  const uint16_t* lanes;
  const int64_t* first;
};

// The same sums as ConvDirectForwardAvx2 (one multiply-add per r in order, then
// + bias[m], bias may be null), in blocks of kDirectForwardChannelsAvx512 channels
// (packed likewise), pixels a multiple of kDirectForwardPixelStepAvx512, written
// straight into the output planes y + m * y_stride through `stores`.
void ConvDirectForwardAvx512(const float* xp, const int64_t* offsets, int64_t rows, const float* packed_weights,
                             int64_t channels_out, int64_t pixels, const DirectForwardStores& stores, const float* bias,
                             float* y, int64_t y_stride);

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

// The AVX-512 inner loop of the image-lanes direct convolution (conv_image_lanes.h), in
// conv_image_lanes_avx512.cc. Kept apart from conv_image_lanes.h so the ISA file
// includes nothing with inline functions or templates.
#ifndef TESSERA_KERNELS_CPU_CONV_IMAGE_LANES_ROW_H_
#define TESSERA_KERNELS_CPU_CONV_IMAGE_LANES_ROW_H_

#include <cstdint>

namespace tsr {

// One output row of every output channel, sixteen images in the lanes of each vector.
// Input channel c, input row ih and buffer column j (input column j - pad_left: the
// buffer holds pad_left zero columns before the row and enough after it for every tap)
// lie at x + c * channel_stride + ih * row_stride + j * 16; the packed weight of input
// channel c, tap (kh, kw) and output channel m at
//   weights[((c * kernel_h + kh) * kernel_w + kw) * out_channels + m];
// output channel m, column ow at y + m * y_channel_stride + ow * 16. Every output is
//   bias[m] (0 when bias is null)
//   + sum over c ascending, kh in [kh_begin, kh_end) ascending, kw ascending in the
//     union of the valid taps of the up to four columns it is computed with
//     ([kw_begin[last column], kw_end[first column]): kw_begin and kw_end do not increase
//     along the row, as for any stride-1 window), of weight * input, one fused
//     multiply-add each,
// the taps outside a column's own valid range reading the buffer's zero columns. The
// input row of kernel row kh is in_row0 + kh * dilation_h, inside the input for the
// caller's kh range.
struct ImageLanesRow {
  const float* x;
  int64_t channels, channel_stride, row_stride;
  const float* weights;
  const float* bias;
  int64_t out_channels;
  int64_t kernel_h, kernel_w, dilation_w;
  int64_t kh_begin, kh_end, in_row0, dilation_h;
  const int64_t* kw_begin;
  const int64_t* kw_end;
  int64_t out_w;
  float* y;
  int64_t y_channel_stride;
};

void ImageLanesRowAvx512(const ImageLanesRow& r);

// The weight gradient's sums over one block of sixteen images for one input channel c
// and kernel row kh: for every output channel m and kernel column kw,
//   dw[m * dw_channel_stride + kw] = the sum of the sixteen lanes of
//     sum over oh in [oh_begin, oh_end) ascending, ow ascending in the union of the valid
//     output columns of the (at most four) kernel columns computed together, of
//     dy[m][oh][ow] * x[oh + in_row0][ow + kw * dilation_w] (one fused multiply-add each),
// x the block's channel c as ImageLanesRow's (rows row_stride floats apart, pad_left zero
// columns first), dy channel m at dy + m * dy_channel_stride, pixel (oh, ow) at
// + (oh * out_w + ow) * 16. Kernel column kw's valid output columns are [ow_begin[kw],
// ow_end[kw]), which do not increase with kw (stride 1). Output columns outside a
// column's own range read the zero columns.
struct ImageLanesGradRow {
  const float* x;
  int64_t row_stride, in_row0;
  const float* dy;
  int64_t dy_channel_stride, out_w, oh_begin, oh_end;
  int64_t out_channels, kernel_w, dilation_w;
  const int64_t* ow_begin;
  const int64_t* ow_end;
  float* dw;
  int64_t dw_channel_stride;
};

void ImageLanesGradRowAvx512(const ImageLanesGradRow& r);

}  // namespace tsr

#endif  // TESSERA_KERNELS_CPU_CONV_IMAGE_LANES_ROW_H_

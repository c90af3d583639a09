// The vectorized inner loops of ConvTranspose's col2im (conv_transpose_row_avx2.cc).
// Plain extern entry points only, so the ISA file includes nothing else.
#ifndef TESSERA_KERNELS_CPU_CONV_TRANSPOSE_ROW_H_
#define TESSERA_KERNELS_CPU_CONV_TRANSPOSE_ROW_H_

#include <cstdint>

namespace tsr {

// dst[i] += src[i] for i in [0, n); each element is one rounding of the same sum as
// the scalar loop. src and dst must not overlap.
void AddLineAvx2(const float* src, int64_t n, float* dst);

// The col2im of one channel of a 2-D, stride-1, undilated window into image rows of at most
// 16 pixels (LeNet's 12): for each kernel row kh and column row oh, the image row it lands on
// is held in two registers while the kernel_w taps' column rows are added into it, each shifted
// by its tap (masked loads: pixels falling outside the image are neither read nor added).
// `col` holds the channel's kernel_h * kernel_w rows, `pixels` floats apart, of out_h x out_w
// column pixels; y is the channel's in_h x in_w image. Every image element receives its
// contributions in tap order, as Col2ImAdd's line loop adds them: the same bits.
void Col2ImNarrowChannelAvx2(const float* col, int64_t pixels, int64_t out_h, int64_t out_w, int64_t in_h, int64_t in_w,
                             int64_t kernel_h, int64_t kernel_w, int64_t pad_top, int64_t pad_left, float* y);

}  // namespace tsr

#endif  // TESSERA_KERNELS_CPU_CONV_TRANSPOSE_ROW_H_

// im2col for the GEMM-based Conv: the window taps of a range of output pixels laid
// out as a matrix whose rows are (input channel, kd, kh, kw) -- the order of a Conv
// weight's trailing dimensions -- and whose columns are output pixels, so that
// weights [M, rows] x columns gives the output channels of those pixels.
#ifndef TESSERA_KERNELS_CPU_CONV_IM2COL_H_
#define TESSERA_KERNELS_CPU_CONV_IM2COL_H_

#include <cstdint>

#include "kernels/cpu/conv_window.h"

namespace tsr {

// Fills rows [row_begin, row_end) of the column matrix for output pixels
// [pixel_begin, pixel_end) (row-major over w.out) of one image and group. `x` points
// at the group's first input channel ([channels, w.in_size()]); row r is written at
// col + r * (pixel_end - pixel_begin). Padding taps become 0.
void Im2Col(const Window3d& w, const float* x, int64_t row_begin, int64_t row_end, int64_t pixel_begin,
            int64_t pixel_end, float* col);

}  // namespace tsr

#endif  // TESSERA_KERNELS_CPU_CONV_IM2COL_H_

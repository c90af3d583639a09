// im2col for the GEMM-based Conv: the window taps of a range of output pixels laid
// out as a matrix whose rows are (input channel, kd, kh, kw) -- the order of a Conv
// weight's trailing dimensions -- and whose columns are output pixels, so that
// weights [M, rows] x columns gives the output channels of those pixels. Either
// written out as a matrix (Im2Col), or produced block by block straight in Sgemm's
// packed B format (Im2ColPacker: implicit GEMM, no column matrix in memory).
#ifndef TESSERA_KERNELS_CPU_CONV_IM2COL_H_
#define TESSERA_KERNELS_CPU_CONV_IM2COL_H_

#include <cstdint>

#include "kernels/cpu/conv_window.h"
#include "kernels/cpu/gemm.h"

namespace tsr {

// Fills rows [row_begin, row_end) of the column matrix for output pixels
// [pixel_begin, pixel_end) (row-major over w.out) of one image and group. `x` points
// at the group's first input channel ([channels, w.in_size()]); row r is written at
// col + r * (pixel_end - pixel_begin). Padding taps become 0.
void Im2Col(const Window3d& w, const float* x, int64_t row_begin, int64_t row_end, int64_t pixel_begin,
            int64_t pixel_end, float* col);

// The column matrix of one image and group (x as for Im2Col) as Sgemm's op(B)
// ([w.taps() * channels, w.out_size()]), packed on demand by Sgemm's tasks.
class Im2ColPacker : public GemmBPacker {
 public:
  Im2ColPacker(const Window3d& w, const float* x);
  void Pack(int64_t p0, int64_t kc, int64_t j0, int64_t nc, int nr, float* dst) const override;

 private:
  const Window3d& w_;
  const float* x_;
  bool avx2_;
};

}  // namespace tsr

#endif  // TESSERA_KERNELS_CPU_CONV_IM2COL_H_

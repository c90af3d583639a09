// The vectorized line add of ConvTranspose's col2im (conv_transpose_row_avx2.cc).
// A plain extern entry point only, so the ISA file includes nothing else.
#ifndef TESSERA_KERNELS_CPU_CONV_TRANSPOSE_ROW_H_
#define TESSERA_KERNELS_CPU_CONV_TRANSPOSE_ROW_H_

#include <cstdint>

namespace tsr {

// dst[i] += src[i] for i in [0, n); each element is one rounding of the same sum as
// the scalar loop. src and dst must not overlap.
void AddLineAvx2(const float* src, int64_t n, float* dst);

}  // namespace tsr

#endif  // TESSERA_KERNELS_CPU_CONV_TRANSPOSE_ROW_H_

// The strided copy at the heart of im2col for strided convolutions, per ISA (the AVX2
// one lives in conv_im2col_avx2.cc). Plain declarations only, so the ISA file
// includes nothing with inline functions or templates.
#ifndef TESSERA_KERNELS_CPU_CONV_IM2COL_ROW_H_
#define TESSERA_KERNELS_CPU_CONV_IM2COL_ROW_H_

#include <cstdint>

namespace tsr {

// dst[i] = src[i * stride] for i in [0, n); reads nothing past src[(n - 1) * stride].
void StridedCopyAvx2(const float* src, int64_t stride, int64_t n, float* dst);

}  // namespace tsr

#endif  // TESSERA_KERNELS_CPU_CONV_IM2COL_ROW_H_

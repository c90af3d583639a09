// Cache-blocked 2-D transpose of raw elements, the inner step of the CPU Transpose
// kernel (and of any layout copy that is a batched transpose): dst[r * ld_dst + c] =
// src[c * ld_src + r] for r < rows, c < cols. 4-byte elements use an AVX2 8x8
// micro-kernel when `isa` allows (kernels/cpu/transpose_avx2.cc); other
// sizes and the scalar level use a blocked loop.
#ifndef TESSERA_KERNELS_CPU_TRANSPOSE_H_
#define TESSERA_KERNELS_CPU_TRANSPOSE_H_

#include <cstddef>
#include <cstdint>

#include "kernels/cpu/cpu_features.h"

namespace tsr {

// Transposes a rows x cols block (esize 1, 2, 4 or 8 bytes), elements as above. `isa`
// is the caller's ActiveCpuIsa(), read once per kernel run (it reads the environment).
void TransposeBlock(size_t esize, CpuIsa isa, const void* src, int64_t ld_src, void* dst, int64_t ld_dst, int64_t rows,
                    int64_t cols);

// The AVX2 build of the 4-byte case (transpose_avx2.cc); call only when the CPU has AVX2.
void TransposeBlock4Avx2(const uint32_t* src, int64_t ld_src, uint32_t* dst, int64_t ld_dst, int64_t rows,
                         int64_t cols);

}  // namespace tsr

#endif  // TESSERA_KERNELS_CPU_TRANSPOSE_H_

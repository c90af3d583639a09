// Portable blocked 2-D transpose of raw elements and the dispatch to the AVX2 4-byte
// micro-kernel (see kernels/cpu/transpose.h).
#include "kernels/cpu/transpose.h"

#include <cstdint>

namespace tsr {

namespace {

// Walks 8x8 sub-tiles so both the strided reads and the strided writes stay within a
// few cache lines at a time.
template <typename T>
void TransposeBlockScalar(const T* src, int64_t ld_src, T* dst, int64_t ld_dst, int64_t rows, int64_t cols) {
  constexpr int64_t kTile = 8;
  for (int64_t r0 = 0; r0 < rows; r0 += kTile) {
    const int64_t r1 = r0 + kTile < rows ? r0 + kTile : rows;
    for (int64_t c0 = 0; c0 < cols; c0 += kTile) {
      const int64_t c1 = c0 + kTile < cols ? c0 + kTile : cols;
      for (int64_t r = r0; r < r1; ++r) {
        for (int64_t c = c0; c < c1; ++c) dst[r * ld_dst + c] = src[c * ld_src + r];
      }
    }
  }
}

}  // namespace

void TransposeBlock(size_t esize, CpuIsa isa, const void* src, int64_t ld_src, void* dst, int64_t ld_dst, int64_t rows,
                    int64_t cols) {
  switch (esize) {
    case 1:
      TransposeBlockScalar(static_cast<const uint8_t*>(src), ld_src, static_cast<uint8_t*>(dst), ld_dst, rows, cols);
      break;
    case 2:
      TransposeBlockScalar(static_cast<const uint16_t*>(src), ld_src, static_cast<uint16_t*>(dst), ld_dst, rows, cols);
      break;
    case 4:
      if (isa >= CpuIsa::kAvx2) {
        TransposeBlock4Avx2(static_cast<const uint32_t*>(src), ld_src, static_cast<uint32_t*>(dst), ld_dst, rows, cols);
      } else {
        TransposeBlockScalar(static_cast<const uint32_t*>(src), ld_src, static_cast<uint32_t*>(dst), ld_dst, rows,
                             cols);
      }
      break;
    default:
      TransposeBlockScalar(static_cast<const uint64_t*>(src), ld_src, static_cast<uint64_t*>(dst), ld_dst, rows, cols);
      break;
  }
}

}  // namespace tsr

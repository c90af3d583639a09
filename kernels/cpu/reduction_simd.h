// The inner loops of the f32 reduction kernels (reduction_kernels.cc), one table per
// ISA level: a scalar one (reduction_scalar.cc) and an AVX2 one (reduction_avx2.cc,
// used only after runtime detection). Plain pointers and sizes only, so the AVX2
// file instantiates nothing shared with the scalar code.
#ifndef TESSERA_KERNELS_CPU_REDUCTION_SIMD_H_
#define TESSERA_KERNELS_CPU_REDUCTION_SIMD_H_

#include <cstdint>

namespace tsr {
namespace reduction_internal {

enum class FloatReduceKind : int { kSum = 0, kMax = 1, kMin = 2 };

// reduce_rows and argmax_columns handle at most this many columns per call: 4 KiB
// of each row, so that walking down rows far apart still streams whole pages (the
// prefetchers stop at 4 KiB pages), while the per-column accumulators (f32 block
// sums and double totals, 12 KiB) stay in L1.
inline constexpr int64_t kColumnBlock = 1024;

struct ReductionIsaKernels {
  // Reduces the `runs` contiguous runs of `len` (>= 1) floats that start at
  // base + run_offsets[r]; a sum is divided by `divisor` (1 for ReduceSum). Max/Min
  // return NaN when any value is NaN.
  float (*reduce_runs)(FloatReduceKind kind, const float* base, const int64_t* run_offsets, int64_t runs, int64_t len,
                       double divisor);
  // out[j] = the reduction over r < rows of base[row_offsets[r] + j], for j < width
  // (width <= kColumnBlock); sums divided by `divisor`.
  void (*reduce_rows)(FloatReduceKind kind, const float* base, const int64_t* row_offsets, int64_t rows, int64_t width,
                      double divisor, float* out);
  // The index of the maximum of p[0, n) (n >= 1), ArgMax's rules: NaN is larger than
  // everything, ties go to the first index (the last with `last`).
  int64_t (*argmax_contiguous)(const float* p, int64_t n, bool last);
  // out[j] = ArgMax over k < n of p[k * stride + j], for j < width (width <=
  // kColumnBlock, n < 2^31).
  void (*argmax_columns)(const float* p, int64_t n, int64_t stride, int64_t width, bool last, int64_t* out);
};

const ReductionIsaKernels& ScalarReductionKernels();
const ReductionIsaKernels& Avx2ReductionKernels();

}  // namespace reduction_internal
}  // namespace tsr

#endif  // TESSERA_KERNELS_CPU_REDUCTION_SIMD_H_

// The GEMM's few-rows case against a transposed B, written once over the vector width
// for gemm_avx2.cc and gemm_avx512.cc: each element of C is a dot product of a row of A
// with a row of b (column j of op(B)), both contiguous along the depth -- no packing.
// The blocked path would transpose all of B into column strips first, which for a few
// rows of C costs more than the product (a 10-class head at batch 64 runs as C^T = B^T
// A^T: ten rows against A's 64 rows).
//
// Included ONLY by the per-ISA files (see gemm_microkernel_simd.h for why everything
// here has internal linkage). Traits V as there, plus
//   static constexpr int kDotColumns;  // columns of C per block (kDotRows rows)
//   static void Sums8(const T (&v)[8], float* out);  // out[i]: v[i]'s lanes summed
// Sums8 adds each vector's lanes in one fixed order, whatever the other seven hold.
//
// Every element sees the same operations, whatever m, n, the block it falls in or the
// split of the columns: one vector sum over the kW-float chunks of the depth in order
// (fma from zero), its lanes summed by Sums8, the last k % kW products added by
// std::fma in order, then c = beta == 0 ? alpha * acc : fma(beta, c, alpha * acc).
#ifndef TESSERA_KERNELS_CPU_GEMM_DOT_SIMD_H_
#define TESSERA_KERNELS_CPU_GEMM_DOT_SIMD_H_

#include <cmath>
#include <cstdint>

namespace tsr {
namespace gemm_internal {
namespace {

template <class V>
struct SimdDot {
  using T = typename V::T;
  static constexpr int kW = V::kWidth;
  static constexpr int kRows = 2;
  static constexpr int kColumns = V::kDotColumns;
  static_assert(kRows * kColumns <= 16, "Sums8 groups of the block's accumulators");

  // C[i][j] for i < kR, j < kC: a block of rows a + i * lda against rows b + j * ldb.
  template <int kR, int kC>
  static inline void Block(int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc,
                           float alpha, float beta) {
    constexpr int kAcc = kR * kC;
    constexpr int kGroups = (kAcc + 7) / 8;
    static_assert(kGroups <= 2);
    T acc[kGroups * 8];
#pragma GCC unroll 16
    for (int i = 0; i < kGroups * 8; ++i) acc[i] = V::Zero();
    const int64_t vector_end = k / kW * kW;
    for (int64_t p = 0; p < vector_end; p += kW) {
      T av[kR];
      for (int r = 0; r < kR; ++r) av[r] = V::LoadU(a + r * lda + p);
#pragma GCC unroll 8
      for (int j = 0; j < kC; ++j) {
        T bv = V::LoadU(b + j * ldb + p);
        // Loaded once into a register for its kR uses: folded into each FMA instead (as
        // the compiler prefers), the loads, not the FMAs, bound the loop.
        asm("" : "+v"(bv));
        for (int r = 0; r < kR; ++r) acc[r * kC + j] = V::Fma(av[r], bv, acc[r * kC + j]);
      }
    }
    alignas(64) float sums[kGroups * 8];
    if constexpr (kGroups == 1) {
      V::Sums8({acc[0], acc[1], acc[2], acc[3], acc[4], acc[5], acc[6], acc[7]}, sums);
    } else {
      V::Sums8({acc[0], acc[1], acc[2], acc[3], acc[4], acc[5], acc[6], acc[7]}, sums);
      V::Sums8({acc[8], acc[9], acc[10], acc[11], acc[12], acc[13], acc[14], acc[15]}, sums + 8);
    }
    for (int r = 0; r < kR; ++r) {
      for (int j = 0; j < kC; ++j) {
        float s = sums[r * kC + j];
        for (int64_t q = vector_end; q < k; ++q) s = std::fma(a[r * lda + q], b[j * ldb + q], s);
        float& out = c[r * ldc + j];
        out = beta == 0.0f ? alpha * s : std::fma(beta, out, alpha * s);
      }
    }
  }

  // Columns [0, kC) of all m rows: the kC rows of b stay in L1 while A's rows pass.
  template <int kC>
  static inline void ColumnBlock(int64_t m, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb,
                                 float* c, int64_t ldc, float alpha, float beta) {
    int64_t i = 0;
    for (; i + kRows <= m; i += kRows) Block<kRows, kC>(k, a + i * lda, lda, b, ldb, c + i * ldc, ldc, alpha, beta);
    for (; i < m; ++i) Block<1, kC>(k, a + i * lda, lda, b, ldb, c + i * ldc, ldc, alpha, beta);
  }

  // The last n < kColumns columns as one block of exactly n (kC counts down to it).
  template <int kC>
  static inline void ColumnTail(int64_t m, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb,
                                int64_t n, float* c, int64_t ldc, float alpha, float beta) {
    if constexpr (kC > 0) {
      if (n == kC) return ColumnBlock<kC>(m, k, a, lda, b, ldb, c, ldc, alpha, beta);
      ColumnTail<kC - 1>(m, k, a, lda, b, ldb, n, c, ldc, alpha, beta);
    }
  }

  // C (m x n, row stride ldc) from A's rows (a + i * lda) and op(B)'s columns (b + j * ldb),
  // each k contiguous floats; see the top comment.
  static void Rows(int64_t m, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb, int64_t n, float* c,
                   int64_t ldc, float alpha, float beta) {
    int64_t j = 0;
    for (; j + kColumns <= n; j += kColumns) {
      ColumnBlock<kColumns>(m, k, a, lda, b + j * ldb, ldb, c + j, ldc, alpha, beta);
    }
    ColumnTail<kColumns - 1>(m, k, a, lda, b + j * ldb, ldb, n - j, c + j, ldc, alpha, beta);
  }
};

}  // namespace
}  // namespace gemm_internal
}  // namespace tsr

#endif  // TESSERA_KERNELS_CPU_GEMM_DOT_SIMD_H_

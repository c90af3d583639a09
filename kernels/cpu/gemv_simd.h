// The GEMM's one-row case (M = 1: a batch-1 Dense layer, a classifier head) written
// once over the vector width, for gemm_avx2.cc and gemm_avx512.cc: each element of C is
// a dot product of A's row with a column of op(B), read where B lies -- no packing,
// which for a [1, k] x [k, n] product would copy all of B to use each element once.
//
// Included ONLY by the per-ISA files (see gemm_microkernel_simd.h for why everything
// here has internal linkage). Traits V as there.
//
// B is plain (row p of B at b + p * ldb; a transposed B runs as dot products,
// gemm_dot_simd.h). Every element sees exactly the blocked path's operations, whatever
// the split of the columns and wherever it falls in a block: per kc block of the depth,
// acc = fma(a[p], B[p][j], acc) from zero in order of p (vector lanes, or std::fma for
// the last columns: both correctly rounded), then the first block
// c = beta == 0 ? alpha * acc : fma(beta, c, alpha * acc) and each later one
// c = fma(alpha, acc, c) -- so M = 1 gives the same bits as Sgemm with a caller-packed B.
#ifndef TESSERA_KERNELS_CPU_GEMV_SIMD_H_
#define TESSERA_KERNELS_CPU_GEMV_SIMD_H_

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace tsr {
namespace gemm_internal {
namespace {

template <class V>
struct SimdGemv {
  using T = typename V::T;
  static constexpr int kW = V::kWidth;
  // Columns per pass (their sums: 8 KiB).
  static constexpr int64_t kStreamColumns = 2048;

  static inline void Combine(float acc, float* c, float alpha, float beta, bool first) {
    if (first) {
      *c = beta == 0.0f ? alpha * acc : std::fma(beta, *c, alpha * acc);
    } else {
      *c = std::fma(alpha, acc, *c);
    }
  }

  // Columns [0, cols) of a plain B (cols a multiple of kW, at most kStreamColumns),
  // depth block [p0, p1): the block's rows are read whole, one after the other, into sums
  // kept in an L1-resident buffer -- B streams through memory as it lies, one address
  // stream that the hardware prefetcher follows from its start to its end. Strips of kW
  // columns a row apart left the prefetchers one short line per row (a 1280x1000
  // classifier ran at 11 GB/s, ONNX Runtime's at 16); four rows at a time made four
  // streams a row long each (MobileNetV2's classifier, its 5 MB of weights cold as a
  // model's run leaves them: 0.30 ms, 17 GB/s, on a Zen 4); one row at a time runs it in
  // 0.18 ms, the sums' loads and stores hidden behind B's. From L3 the two are within the
  // machine's noise of each other. Each sum still sees fma(a[p], B[p][j], .) from zero in
  // order of p.
  static inline void PlainBlock(int64_t p0, int64_t p1, int64_t cols, const float* a, const float* b, int64_t ldb,
                                float* c, float alpha, float beta) {
    alignas(64) float sums[kStreamColumns];
    for (int64_t j = 0; j < cols; j += kW) V::Store(sums + j, V::Zero());
    for (int64_t p = p0; p < p1; ++p) {
      const T ap = V::Set1(a[p]);
      const float* row = b + p * ldb;
      for (int64_t j = 0; j < cols; j += kW) V::Store(sums + j, V::Fma(ap, V::LoadU(row + j), V::Load(sums + j)));
    }
    for (int64_t j = 0; j < cols; ++j) Combine(sums[j], c + j, alpha, beta, p0 == 0);
  }

  // c[j] for j < n: see the top comment. a: k contiguous floats; kc: the blocked
  // path's depth block.
  static void Gemv(int64_t k, int64_t kc, const float* a, const float* b, int64_t ldb, int64_t n, float* c, float alpha,
                   float beta) {
    int64_t j = 0;
    const int64_t vector_n = n / kW * kW;
    for (int64_t p0 = 0; p0 < k; p0 += kc) {
      const int64_t p1 = std::min(k, p0 + kc);
      for (j = 0; j < vector_n; j += kStreamColumns) {
        PlainBlock(p0, p1, std::min(kStreamColumns, vector_n - j), a, b + j, ldb, c + j, alpha, beta);
      }
      for (j = vector_n; j < n; ++j) {
        float acc = 0.0f;
        for (int64_t p = p0; p < p1; ++p) acc = std::fma(a[p], b[p * ldb + j], acc);
        Combine(acc, c + j, alpha, beta, p0 == 0);
      }
    }
  }
};

}  // namespace
}  // namespace gemm_internal
}  // namespace tsr

#endif  // TESSERA_KERNELS_CPU_GEMV_SIMD_H_

// Internal to the GEMM: the micro-kernel contract between the driver (gemm.cc) and
// the per-ISA kernels (gemm_avx2.cc, gemm_avx512.cc, each compiled with its own ISA
// flags), and the cache blocking each one is tuned for.
#ifndef TESSERA_KERNELS_CPU_GEMM_MICROKERNEL_H_
#define TESSERA_KERNELS_CPU_GEMM_MICROKERNEL_H_

#include <cstdint>

namespace tsr {
namespace gemm_internal {

// Computes acc[mr][nr] = sum_p a[p * mr + i] * b[p * nr + j] over p < kc from packed
// panels (a: mr-row strip, b: nr-column strip, both zero padded), then writes the
// top-left m_eff x n_eff corner of C (row stride ldc):
//   first block: c = beta == 0 ? alpha * acc : fma(beta, c, alpha * acc)
//   later blocks: c = fma(alpha, acc, c)
// Edge tiles perform exactly the same per-element operations as full ones.
using MicroKernelFn = void (*)(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, int m_eff, int n_eff,
                               float alpha, float beta, bool first);

// Packs one strip of a tile's width (mr for A, nr for a transposed B) from `lines` <=
// width rows of a row-major matrix (rows src + i * ld) over depth [0, kc):
// dst[p * width + i] = i < lines ? src[i * ld + p] : 0 -- the last strip of an M or N
// that is not a multiple of the tile is zero padded. Optional: the driver's portable
// packing otherwise (a transposed A is a plain copy anyway).
using PackStripFn = void (*)(const float* src, int64_t ld, int lines, int64_t kc, float* dst);

// MicroKernelFn that reads B from a row-major matrix instead (row p of the strip at
// b + p * ldb, all nr columns present) and also writes it, packed, to b_dst: the
// first micro-tile of an nr-column strip packs it while it computes, so the packed
// strip is written to L1 and read back from there, and packing costs no separate
// pass over B. The arithmetic is exactly MicroKernelFn's.
using MicroKernelPackBFn = void (*)(int64_t kc, const float* a, const float* b, int64_t ldb, float* b_dst, float* c,
                                    int64_t ldc, int m_eff, int n_eff, float alpha, float beta, bool first);

// MicroKernelFn that reads A in place from a row-major matrix (row i of the strip at
// a + i * lda, only rows < m_eff read) instead of a packed strip: a block of A that
// only a few strips of B meet (M within one mc block) costs no packing pass, whose
// copies run at a float or two a cycle against the micro-kernel's 32 flops. With b_dst
// null, b is a packed strip (ldb unused); otherwise B is read from a row-major matrix
// and packed to b_dst as MicroKernelPackBFn does. The arithmetic is exactly
// MicroKernelFn's.
using MicroKernelRowsAFn = void (*)(int64_t kc, const float* a, int64_t lda, const float* b, int64_t ldb, float* b_dst,
                                    float* c, int64_t ldc, int m_eff, int n_eff, float alpha, float beta, bool first);
// The M = 1 product with a plain B (gemv_simd.h): c[j] for j < n from A's row a (k
// contiguous floats) and B read in place (row p at b + p * ldb), with the contract's
// alpha/beta rules; kc is the micro-kernel's depth block (it gets exactly the blocked
// path's bits).
using GemvFn = void (*)(int64_t k, int64_t kc, const float* a, const float* b, int64_t ldb, int64_t n, float* c,
                        float alpha, float beta);

// Few rows against a transposed B (gemm_dot_simd.h): C[i][j] (row stride ldc) for i < m,
// j < n, a dot product of A's row i (a + i * lda) with op(B)'s column j (b + j * ldb),
// each k contiguous floats; c = beta == 0 ? alpha * acc : fma(beta, c, alpha * acc).
using DotRowsFn = void (*)(int64_t m, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb, int64_t n,
                           float* c, int64_t ldc, float alpha, float beta);

// The epilogue's elementwise part on one row of C (gemm_epilogue_simd.h):
// c[j] = relu?(c[j] + bias[j] + *row_bias) + residual[j] for j < n, each term only
// when its pointer is set; bitwise the same at every ISA.
using EpilogueRowFn = void (*)(float* c, int64_t n, const float* bias, const float* row_bias, bool relu,
                               const float* residual);

struct MicroKernel {
  MicroKernelFn fn;
  int mr, nr;                    // register tile
  int mc, kc, nc;                // cache blocks: mc % mr == 0, nc % nr == 0
  PackStripFn pack_a_strip;      // or null
  MicroKernelPackBFn fn_pack_b;  // or null: B is packed in a separate pass
  GemvFn gemv;                   // or null: M = 1 runs the blocked path
  EpilogueRowFn epilogue_row;
  // Packs one nr-column strip of a transposed B (column j of op(B) is the row at
  // b + j * ldb): PackStripFn over columns. Or null: the driver's portable packing.
  PackStripFn pack_b_transposed_strip = nullptr;
  DotRowsFn dot_rows = nullptr;            // or null: a transposed B is packed
  MicroKernelRowsAFn fn_rows_a = nullptr;  // or null: A is always packed
};

// Defined in gemm_avx512.cc / gemm_avx2.cc / gemm.cc.
const MicroKernel& Avx512MicroKernel();
const MicroKernel& Avx2MicroKernel();
const MicroKernel& ScalarMicroKernel();

}  // namespace gemm_internal
}  // namespace tsr

#endif  // TESSERA_KERNELS_CPU_GEMM_MICROKERNEL_H_

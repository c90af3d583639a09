// Single-precision GEMM for the optimized CPU kernels:
//   C = epilogue(alpha * op(A) * op(B) + beta * C),  op(X) = X or X^T,
// row-major with leading dimensions, BLIS-style (packed A and B panels, register-
// blocked micro-kernels per ISA, MC/KC/NC cache blocking) and split over a
// ParallelForFn. Results do not depend on how the work is split across threads:
// every element of C sees the same sequence of floating-point operations.
//
// Three ways to skip Sgemm's own packing of an operand:
//   - SgemmPackedA: op(A) packed once into the micro-kernel's panels (every kc x mc
//     block of it), then used by any number of calls and threads (a convolution's
//     weights for every image of a batch);
//   - SgemmPackedB: the same for op(B) (a Dense layer's constant weights);
//   - GemmBPacker: the caller writes blocks of op(B) straight into the packed panel
//     format (an implicit-GEMM convolution fuses im2col into this packing, with no
//     column matrix in memory).
// A call with either performs exactly the same floating-point operations on every
// element of C as the plain Sgemm on the same matrices at the same ISA.
#ifndef TESSERA_KERNELS_CPU_GEMM_H_
#define TESSERA_KERNELS_CPU_GEMM_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>

#include "kernels/cpu/cpu_features.h"
#include "kernels/kernel.h"

namespace tsr {

enum class GemmActivation {
  kNone,
  kRelu,
  kGelu,  // exact: 0.5 * x * (1 + erf(x / sqrt(2)))
};

// Applied once per element after the product and the beta term, in this order:
//   y = act(alpha * op(A) op(B) + beta * C + bias[j] + row_bias[i]) + residual[i * ldr + j]
struct GemmEpilogue {
  const float* bias = nullptr;      // [N] per column (a Dense layer's bias), or null
  const float* row_bias = nullptr;  // [M] per row (a convolution's bias, rows = channels), or null
  GemmActivation activation = GemmActivation::kNone;
  const float* residual = nullptr;  // [M, ldr] row-major, or null
  int64_t ldr = 0;
  // Called last on every finished block of C — rows [row0, row0 + rows) x columns
  // [col0, col0 + cols) — while it is in cache: elementwise work of the caller's own
  // (FusedConv's activation of conv + residual, in that order). Blocks are disjoint and
  // may run concurrently.
  const std::function<void(int64_t row0, int64_t rows, int64_t col0, int64_t cols)>* block = nullptr;

  bool empty() const {
    return bias == nullptr && row_bias == nullptr && activation == GemmActivation::kNone && residual == nullptr &&
           block == nullptr;
  }
};

struct GemmOptions {
  // Micro-kernel level; unset: ActiveCpuIsa(). Capped to what the CPU supports.
  std::optional<CpuIsa> isa;
  // Splits the M or N loop; null runs on the calling thread.
  ParallelForFn parallel_for;
  GemmEpilogue epilogue;
};

// The register tile of the micro-kernel Sgemm runs at `isa` (unset: ActiveCpuIsa()):
// C is computed in mr x nr blocks, so shapes that are multiples of them waste nothing.
struct SgemmTile {
  int mr, nr;
};
SgemmTile SgemmTileFor(std::optional<CpuIsa> isa = std::nullopt);

// op(A) is [m, k], op(B) is [k, n], C is [m, n]; lda/ldb/ldc are the row strides of
// A, B, C as stored (A is [k, lda-strided m] when trans_a). beta == 0 never reads C
// (NaNs there do not propagate). m, n or k may be 0.
void Sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
           const float* b, int64_t ldb, float beta, float* c, int64_t ldc, const GemmOptions& options = {});

struct SgemmPackedAccess;
namespace gemm_internal {
struct MicroKernel;
}

namespace gemm_internal {
// What SgemmPackedA and SgemmPackedB share: one operand packed for one ISA's micro-
// kernel, `extent` rows (A) or columns (B) padded to its tile, `depth` deep, in memory
// that a repack reuses when it is large enough.
class PackedOperand {
 public:
  PackedOperand() = default;
  PackedOperand(PackedOperand&&) = default;
  PackedOperand& operator=(PackedOperand&&) = default;

  int64_t depth() const { return k_; }
  bool empty() const { return kernel_ == nullptr; }

 protected:
  friend struct ::tsr::SgemmPackedAccess;
  // Takes the identity and grows the memory to the padded operand; returns it (null
  // when empty). extent and k below 0 count as 0.
  float* Reset(const MicroKernel& kernel, int64_t extent, int64_t k, int tile);

  struct Free {
    void operator()(float* p) const;
  };
  const MicroKernel* kernel_ = nullptr;
  int64_t extent_ = 0, k_ = 0, padded_ = 0;
  std::unique_ptr<float, Free> data_;
  int64_t capacity_ = 0;
};
}  // namespace gemm_internal

// op(A) ([m, k]) packed for one ISA's micro-kernel: for each kc block of the depth, all
// of its rows in mr-row strips. Immutable once packed, so any number of threads may
// use it at once. Pack() may be called again to repack (reusing the memory when it
// is large enough); not while a Sgemm uses it.
class SgemmPackedA : public gemm_internal::PackedOperand {
 public:
  // options.isa picks the micro-kernel (as for Sgemm); options.parallel_for, when
  // set, splits the packing; the epilogue is ignored.
  void Pack(bool trans_a, int64_t m, int64_t k, const float* a, int64_t lda, const GemmOptions& options = {});

  int64_t rows() const { return extent_; }
};

// op(B) ([k, n]) packed once for one ISA's micro-kernel, for a B used by many calls (a
// layer's constant weights): for each kc block of the depth, all of its columns in
// nr-column strips. Immutable once packed; Pack() may repack (reusing the memory).
class SgemmPackedB : public gemm_internal::PackedOperand {
 public:
  // As SgemmPackedA::Pack.
  void Pack(bool trans_b, int64_t k, int64_t n, const float* b, int64_t ldb, const GemmOptions& options = {});

  int64_t columns() const { return extent_; }
};

// Writes blocks of op(B) ([k, n]) in the micro-kernel's packed format. Pack is called
// concurrently from Sgemm's tasks, so it must be safe to call from several threads.
class GemmBPacker {
 public:
  virtual ~GemmBPacker() = default;
  // Writes op(B) rows [p0, p0 + kc) x columns [j0, j0 + nc) as ceil(nc / nr) strips
  // of nr columns: element (p0 + p, j0 + s * nr + j) at dst[s * kc * nr + p * nr + j].
  // Columns past nc in the last strip must be written as 0. dst is 64-byte aligned.
  virtual void Pack(int64_t p0, int64_t kc, int64_t j0, int64_t nc, int nr, float* dst) const = 0;
};

// C = epilogue(alpha * A * op(B) + beta * C) with A packed (A.rows() x A.depth()) and
// op(B) [A.depth(), n] a strided matrix as for Sgemm. The micro-kernel is the one A
// was packed for (options.isa is ignored).
void Sgemm(const SgemmPackedA& a, bool trans_b, int64_t n, float alpha, const float* b, int64_t ldb, float beta,
           float* c, int64_t ldc, const GemmOptions& options = {});

// The same with op(B) produced by `b` (a plain A is packed as Sgemm does).
void Sgemm(const SgemmPackedA& a, const GemmBPacker& b, int64_t n, float alpha, float beta, float* c, int64_t ldc,
           const GemmOptions& options = {});
void Sgemm(bool trans_a, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
           const GemmBPacker& b, float beta, float* c, int64_t ldc, const GemmOptions& options = {});

// C = epilogue(alpha * op(A) * B + beta * C) with B packed (B.depth() x B.columns())
// and op(A) [m, B.depth()] a strided matrix as for Sgemm. The micro-kernel is the one
// B was packed for (options.isa is ignored). Bitwise the plain Sgemm on the same
// matrices, except M = 1 with a transposed B (the plain call's GEMV: gemv_simd.h).
void Sgemm(bool trans_a, int64_t m, float alpha, const float* a, int64_t lda, const SgemmPackedB& b, float beta,
           float* c, int64_t ldc, const GemmOptions& options = {});

}  // namespace tsr

#endif  // TESSERA_KERNELS_CPU_GEMM_H_

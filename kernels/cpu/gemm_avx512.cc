// The AVX-512F GEMM micro-kernel: a 14x32 tile of C in 28 zmm accumulators
// (2 B loads + 14 A broadcasts per 28 FMAs, leaving 4 of the 32 registers free;
// the shared template of gemm_microkernel_simd.h over 16-float vectors) and AVX-512
// packings of A strips and of transposed B strips.
// Compiled with -mavx512f -mfma; the driver calls it only when the CPU and OS
// support AVX-512F.
#include <immintrin.h>

#include <cstdint>

#include "kernels/cpu/avx512_transpose.h"
#include "kernels/cpu/gemm_dot_simd.h"
#include "kernels/cpu/gemm_epilogue_simd.h"
#include "kernels/cpu/gemm_microkernel.h"
#include "kernels/cpu/gemm_microkernel_simd.h"
#include "kernels/cpu/gemv_simd.h"

namespace tsr {
namespace gemm_internal {

namespace {

constexpr int kMr = 14;
constexpr int kNr = 32;

// AVX-512 vector traits for the shared micro-kernel (gemm_microkernel_simd.h).
struct Avx512Vec {
  using T = __m512;
  static constexpr int kWidth = 16;
  static T Zero() { return _mm512_setzero_ps(); }
  static T Load(const float* p) { return _mm512_load_ps(p); }
  static T LoadU(const float* p) { return _mm512_loadu_ps(p); }
  static void Store(float* p, T x) { _mm512_store_ps(p, x); }
  static void StoreU(float* p, T x) { _mm512_storeu_ps(p, x); }
  static T Broadcast(const float* p) { return _mm512_set1_ps(*p); }
  static T Set1(float x) { return _mm512_set1_ps(x); }
  static T Mul(T x, T y) { return _mm512_mul_ps(x, y); }
  static T Add(T x, T y) { return _mm512_add_ps(x, y); }
  // (Masked: GCC 12 warns that the unmasked form's undefined pass-through is uninitialized.)
  static T Max(T x, T y) { return _mm512_mask_max_ps(x, static_cast<__mmask16>(0xFFFF), x, y); }
  static T Fma(T x, T y, T z) { return _mm512_fmadd_ps(x, y, z); }

  static constexpr int kDotColumns = 8;
  // out[i] = the lanes of v[i] summed as ((l0 + l2) + (l1 + l3)) in each 128-bit quarter,
  // then (Q0 + Q1) + (Q2 + Q3): the eight vectors transposed and added in 24 shuffles
  // and adds (masked forms: see Max).
  __attribute__((always_inline)) static void Sums8(const T (&v)[8], float* out) {
    constexpr __mmask16 kAll = 0xFFFF;
    const auto pairs = [](T x, T y) {  // per quarter: x0 + x2, y0 + y2, x1 + x3, y1 + y3
      return _mm512_add_ps(_mm512_mask_unpacklo_ps(x, kAll, x, y), _mm512_mask_unpackhi_ps(x, kAll, x, y));
    };
    const auto quads = [](T x, T y) {  // per quarter: the four vectors' quarter sums
      return _mm512_add_ps(_mm512_mask_shuffle_ps(x, kAll, x, y, 0x44), _mm512_mask_shuffle_ps(x, kAll, x, y, 0xEE));
    };
    const T u0 = quads(pairs(v[0], v[1]), pairs(v[2], v[3]));
    const T u1 = quads(pairs(v[4], v[5]), pairs(v[6], v[7]));
    const T z = _mm512_add_ps(_mm512_mask_shuffle_f32x4(u0, kAll, u0, u1, 0x88),
                              _mm512_mask_shuffle_f32x4(u0, kAll, u0, u1, 0xDD));
    const T w =
        _mm512_add_ps(_mm512_mask_shuffle_f32x4(z, kAll, z, z, 0x88), _mm512_mask_shuffle_f32x4(z, kAll, z, z, 0xDD));
    _mm512_mask_storeu_ps(out, static_cast<__mmask16>(0x00FF), w);
  }
};

using Avx512Kernel = SimdMicroKernel<Avx512Vec, kMr>;
static_assert(Avx512Kernel::kNr == kNr);

// Packs a 14-row strip of a row-major A, 16 depth steps at a time: the strip's 16-float
// row loads (zero rows for the padding) transposed in registers into sixteen columns
// stored as 14 floats each, instead of 224 scalar moves.
void PackAStripAvx512(const float* a, int64_t lda, int rows, int64_t kc, float* dst) {
  static_assert(kMr == 14);
  const __mmask16 kRows = (1u << kMr) - 1;
  int64_t p = 0;
  for (; p + 16 <= kc; p += 16, dst += 16 * kMr) {
    __m512 r[16];
    for (int i = 0; i < 16; ++i) r[i] = i < rows ? _mm512_loadu_ps(a + i * lda + p) : _mm512_setzero_ps();
    Transpose16x16Avx512(r);
    for (int q = 0; q < 16; ++q) _mm512_mask_storeu_ps(dst + q * kMr, kRows, r[q]);
  }
  for (; p < kc; ++p, dst += kMr) {
    for (int i = 0; i < kMr; ++i) dst[i] = i < rows ? a[i * lda + p] : 0.0f;
  }
}

// Packs a 32-column strip of a transposed B (column j of op(B): the row at b + j * ldb),
// 16 depth steps at a time: two 16x16 blocks of rows (zero rows past `cols`) transposed
// in registers into the strip's 16-float halves, instead of 512 scalar gathers.
void PackTransposedBStripAvx512(const float* b, int64_t ldb, int cols, int64_t kc, float* dst) {
  static_assert(kNr == 32);
  int64_t p = 0;
  for (; p + 16 <= kc; p += 16, dst += 16 * kNr) {
    for (int half = 0; half < 2; ++half) {
      __m512 r[16];
      for (int j = 0; j < 16; ++j) {
        const int col = 16 * half + j;
        r[j] = col < cols ? _mm512_loadu_ps(b + col * ldb + p) : _mm512_setzero_ps();
      }
      Transpose16x16Avx512(r);
      for (int q = 0; q < 16; ++q) _mm512_storeu_ps(dst + q * kNr + 16 * half, r[q]);
    }
  }
  for (; p < kc; ++p, dst += kNr) {
    for (int j = 0; j < kNr; ++j) dst[j] = j < cols ? b[j * ldb + p] : 0.0f;
  }
}

}  // namespace

const MicroKernel& Avx512MicroKernel() {
  // Zen 4 (32 KiB L1d, 1 MiB L2): the 32-column B micro-panel (kc * 128 B = 24 KiB)
  // stays in L1d, the packed A block (mc * kc * 4 = 252 KiB) in L2, the B block
  // (kc * nc * 4 = 3 MiB) in L3. Deeper products take larger even kc blocks (and
  // fewer rows per A block): BlockedFor in gemm.cc.
  static constexpr MicroKernel kKernel{Avx512Kernel::Kernel,
                                       kMr,
                                       kNr,
                                       /*mc=*/336,
                                       /*kc=*/192,
                                       /*nc=*/4096,
                                       PackAStripAvx512,
                                       Avx512Kernel::KernelPackB,
                                       SimdGemv<Avx512Vec>::Gemv,
                                       SimdEpilogueRow<Avx512Vec>::Row,
                                       PackTransposedBStripAvx512,
                                       SimdDot<Avx512Vec>::Rows,
                                       Avx512Kernel::KernelRowsA};
  return kKernel;
}

}  // namespace gemm_internal
}  // namespace tsr

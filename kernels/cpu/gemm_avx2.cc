// The AVX2 + FMA GEMM micro-kernel: a 6x16 tile of C in 12 ymm accumulators
// (2 B loads + 6 A broadcasts per 12 FMAs; the shared template of
// gemm_microkernel_simd.h over 8-float vectors) and an AVX2 packing of A strips.
// Compiled with -mavx2 -mfma; the driver calls it only when the CPU has both.
#include <immintrin.h>

#include <cstdint>

#include "kernels/cpu/gemm_dot_simd.h"
#include "kernels/cpu/gemm_epilogue_simd.h"
#include "kernels/cpu/gemm_microkernel.h"
#include "kernels/cpu/gemm_microkernel_simd.h"
#include "kernels/cpu/gemv_simd.h"

namespace tsr {
namespace gemm_internal {

namespace {

constexpr int kMr = 6;
constexpr int kNr = 16;

// AVX2 vector traits for the shared micro-kernel (gemm_microkernel_simd.h).
struct Avx2Vec {
  using T = __m256;
  static constexpr int kWidth = 8;
  static T Zero() { return _mm256_setzero_ps(); }
  static T Load(const float* p) { return _mm256_load_ps(p); }
  static T LoadU(const float* p) { return _mm256_loadu_ps(p); }
  static void Store(float* p, T x) { _mm256_store_ps(p, x); }
  static void StoreU(float* p, T x) { _mm256_storeu_ps(p, x); }
  static T Broadcast(const float* p) { return _mm256_broadcast_ss(p); }
  static T Set1(float x) { return _mm256_set1_ps(x); }
  static T Mul(T x, T y) { return _mm256_mul_ps(x, y); }
  static T Add(T x, T y) { return _mm256_add_ps(x, y); }
  static T Max(T x, T y) { return _mm256_max_ps(x, y); }
  static T Fma(T x, T y, T z) { return _mm256_fmadd_ps(x, y, z); }

  static constexpr int kDotColumns = 4;
  // out[i] = the lanes of v[i] summed as ((l0 + l2) + (l1 + l3)) in each 128-bit half,
  // then the halves added: the eight vectors transposed and added in 21 shuffles and adds.
  __attribute__((always_inline)) static void Sums8(const T (&v)[8], float* out) {
    const auto pairs = [](T x, T y) {  // per half: x0 + x2, y0 + y2, x1 + x3, y1 + y3
      return _mm256_add_ps(_mm256_unpacklo_ps(x, y), _mm256_unpackhi_ps(x, y));
    };
    const auto quads = [](T x, T y) {  // per half: the four vectors' half sums
      return _mm256_add_ps(_mm256_shuffle_ps(x, y, 0x44), _mm256_shuffle_ps(x, y, 0xEE));
    };
    const T u0 = quads(pairs(v[0], v[1]), pairs(v[2], v[3]));
    const T u1 = quads(pairs(v[4], v[5]), pairs(v[6], v[7]));
    _mm256_storeu_ps(out, _mm256_add_ps(_mm256_permute2f128_ps(u0, u1, 0x20), _mm256_permute2f128_ps(u0, u1, 0x31)));
  }
};

using Avx2Kernel = SimdMicroKernel<Avx2Vec, kMr>;
static_assert(Avx2Kernel::kNr == kNr);

// Packs a 6-row strip of a row-major A, 8 depth steps at a time: six 8-float row loads
// (zeros for a partial strip's padding rows) transposed in registers into eight 6-float
// columns (a 4-float part from rows 0-3 and a 2-float part from rows 4-5), instead of 48
// scalar moves.
void PackAStripAvx2(const float* a, int64_t lda, int rows, int64_t kc, float* dst) {
  const float* r[kMr];
  for (int i = 0; i < kMr; ++i) r[i] = a + i * lda;
  // Row i's 8 floats at depth p, or zeros for the padding rows of a partial strip.
  const auto load = [&](int i, int64_t p) { return i < rows ? _mm256_loadu_ps(r[i] + p) : _mm256_setzero_ps(); };
  int64_t p = 0;
  for (; p + 8 <= kc; p += 8, dst += 8 * kMr) {
    const __m256 r0 = load(0, p), r1 = load(1, p);
    const __m256 r2 = load(2, p), r3 = load(3, p);
    const __m256 r4 = load(4, p), r5 = load(5, p);
    // Per 128-bit lane h (depth 4h..4h+3): t01l = r0_0 r1_0 r0_1 r1_1, ...
    const __m256 t01l = _mm256_unpacklo_ps(r0, r1), t01h = _mm256_unpackhi_ps(r0, r1);
    const __m256 t23l = _mm256_unpacklo_ps(r2, r3), t23h = _mm256_unpackhi_ps(r2, r3);
    const __m256 t45l = _mm256_unpacklo_ps(r4, r5), t45h = _mm256_unpackhi_ps(r4, r5);
    // c[q] lane h: rows 0-3 at depth 4h + q.
    const __m256 c0 = _mm256_shuffle_ps(t01l, t23l, _MM_SHUFFLE(1, 0, 1, 0));
    const __m256 c1 = _mm256_shuffle_ps(t01l, t23l, _MM_SHUFFLE(3, 2, 3, 2));
    const __m256 c2 = _mm256_shuffle_ps(t01h, t23h, _MM_SHUFFLE(1, 0, 1, 0));
    const __m256 c3 = _mm256_shuffle_ps(t01h, t23h, _MM_SHUFFLE(3, 2, 3, 2));
    const __m128 lo[4] = {_mm256_castps256_ps128(c0), _mm256_castps256_ps128(c1), _mm256_castps256_ps128(c2),
                          _mm256_castps256_ps128(c3)};
    const __m128 hi[4] = {_mm256_extractf128_ps(c0, 1), _mm256_extractf128_ps(c1, 1), _mm256_extractf128_ps(c2, 1),
                          _mm256_extractf128_ps(c3, 1)};
    // Rows 4-5 pairs: depth 0,1 in t45l's low lane, 2,3 in t45h's, 4,5 / 6,7 in the high lanes.
    const __m128 e01 = _mm256_castps256_ps128(t45l), e23 = _mm256_castps256_ps128(t45h);
    const __m128 e45 = _mm256_extractf128_ps(t45l, 1), e67 = _mm256_extractf128_ps(t45h, 1);
    const __m128 pairs[4] = {e01, e23, e45, e67};
#pragma GCC unroll 8
    for (int q = 0; q < 8; ++q) {
      float* d = dst + q * kMr;
      _mm_storeu_ps(d, q < 4 ? lo[q] : hi[q - 4]);
      const __m128 e = pairs[q / 2];
      if (q % 2 == 0) {
        _mm_storel_pi(reinterpret_cast<__m64*>(d + 4), e);
      } else {
        _mm_storeh_pi(reinterpret_cast<__m64*>(d + 4), e);
      }
    }
  }
  for (; p < kc; ++p, dst += kMr) {
    for (int i = 0; i < kMr; ++i) dst[i] = i < rows ? r[i][p] : 0.0f;
  }
}

}  // namespace

const MicroKernel& Avx2MicroKernel() {
  // Zen 4: the 16-column B micro-panel (kc * 64 B = 16 KiB) stays in L1d, the packed
  // A block (mc * kc * 4 = 144 KiB) in L2, the B block (kc * nc * 4 = 4 MiB) in L3.
  static constexpr MicroKernel kKernel{Avx2Kernel::Kernel,
                                       kMr,
                                       kNr,
                                       /*mc=*/144,
                                       /*kc=*/256,
                                       /*nc=*/4080 / kNr * kNr,
                                       PackAStripAvx2,
                                       Avx2Kernel::KernelPackB,
                                       SimdGemv<Avx2Vec>::Gemv,
                                       SimdEpilogueRow<Avx2Vec>::Row,
                                       /*pack_b_transposed_strip=*/nullptr,
                                       SimdDot<Avx2Vec>::Rows,
                                       Avx2Kernel::KernelRowsA};
  return kKernel;
}

}  // namespace gemm_internal
}  // namespace tsr

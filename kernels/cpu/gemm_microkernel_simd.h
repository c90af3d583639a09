// The GEMM micro-kernel written once over the vector width: an mr x (2 vectors)
// tile of C held in 2 * mr accumulators, 2 B loads + mr A broadcasts per 2 * mr FMAs.
// gemm_avx2.cc instantiates it with __m256 (6 x 16) and gemm_avx512.cc with __m512
// (14 x 32).
//
// Included ONLY by the per-ISA files, which pass their vector traits: every
// definition here has internal linkage (anonymous namespace), so each ISA file gets
// its own copy compiled with its own flags and no COMDAT copy can be shared across
// ISAs (the ODR hazard of templates in shared headers).
//
// Traits V provide: type T; kWidth; Zero(); Load(p) (aligned); LoadU(p); Store(p, x)
// (aligned); StoreU(p, x); Broadcast(p); Set1(x); Mul(x, y); Add(x, y) (gemv_simd.h);
// Fma(x, y, z) = x * y + z.
#ifndef TESSERA_KERNELS_CPU_GEMM_MICROKERNEL_SIMD_H_
#define TESSERA_KERNELS_CPU_GEMM_MICROKERNEL_SIMD_H_

#include <immintrin.h>

#include <cstdint>
#include <type_traits>

#include "kernels/cpu/gemm_microkernel.h"

namespace tsr {
namespace gemm_internal {
namespace {

template <class V, int kMr>
struct SimdMicroKernel {
  using T = typename V::T;
  static constexpr int kW = V::kWidth;
  static constexpr int kNr = 2 * kW;
  // Rows of B ahead of the current one that the packing variant prefetches (B is
  // read from a strided matrix that is usually in L3 or memory, one row per step).
  static constexpr int kSourcePrefetchRows = 16;

  // Writes one row of acc to C with the contract's epilogue.
  static inline void StoreRow(float* c, T acc0, T acc1, T alpha, T beta, bool beta_zero, bool first) {
    if (first) {
      const T t0 = V::Mul(alpha, acc0);
      const T t1 = V::Mul(alpha, acc1);
      if (beta_zero) {
        V::StoreU(c, t0);
        V::StoreU(c + kW, t1);
      } else {
        V::StoreU(c, V::Fma(beta, V::LoadU(c), t0));
        V::StoreU(c + kW, V::Fma(beta, V::LoadU(c + kW), t1));
      }
    } else {
      V::StoreU(c, V::Fma(alpha, acc0, V::LoadU(c)));
      V::StoreU(c + kW, V::Fma(alpha, acc1, V::LoadU(c + kW)));
    }
  }

  // kPackB: B is read from a row-major matrix (row p at b + p * ldb, all kNr columns
  // present) and each row is also written to the packed strip b_dst, so the first
  // micro-tile of a strip packs it while computing; the arithmetic is the same.
  // kRowsA: A is read in place from a row-major matrix (row i at a + i * lda), not from
  // a packed strip; rows past m_eff repeat the last one (computed, never stored).
  // Only the first kRows (>= m_eff) rows of the tile are computed: a strip of A is
  // always kMr rows wide (zero padded), but the last strip of an M that is not a
  // multiple of kMr (128 = 21 * 6 + 2) need not pay for the padding rows. Each element
  // sees the same operations whatever kRows.
  template <bool kPackB, bool kRowsA, int kRows>
  static inline void Run(int64_t kc, const float* a, int64_t lda, const float* b, int64_t ldb, float* b_dst, float* c,
                         int64_t ldc, int m_eff, int n_eff, float alpha, float beta, bool first) {
    // C is written (and, after the first kc block, read) only after the kc loop: ask
    // for its rows now so that they arrive from L2/L3 while the FMAs run instead of
    // stalling the stores. A prefetch never faults, but stay inside the tile anyway.
#pragma GCC unroll 16
    for (int i = 0; i < kRows; ++i) {
      if (i < m_eff) {
        _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc), _MM_HINT_T0);
        _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc + n_eff - 1), _MM_HINT_T0);
      }
    }
    T acc[kRows][2];
#pragma GCC unroll 16
    for (int i = 0; i < kRows; ++i) acc[i][0] = acc[i][1] = V::Zero();
    [[maybe_unused]] const float* a_rows[kRows];
    if constexpr (kRowsA) {
#pragma GCC unroll 16
      for (int i = 0; i < kRows; ++i) a_rows[i] = a + (i < m_eff ? i : m_eff - 1) * lda;
    }
#pragma GCC unroll 4
    for (int64_t p = 0; p < kc; ++p) {
      T b0, b1;
      if constexpr (kPackB) {
        const float* ahead = b + kSourcePrefetchRows * ldb;
        _mm_prefetch(reinterpret_cast<const char*>(ahead), _MM_HINT_T0);
        _mm_prefetch(reinterpret_cast<const char*>(ahead + kNr - 1), _MM_HINT_T0);
        b0 = V::LoadU(b);
        b1 = V::LoadU(b + kW);
        V::Store(b_dst, b0);
        V::Store(b_dst + kW, b1);
        b += ldb;
        b_dst += kNr;
      } else {
        b0 = V::Load(b);
        b1 = V::Load(b + kW);
        _mm_prefetch(reinterpret_cast<const char*>(b + 8 * kNr), _MM_HINT_T0);
        b += kNr;
      }
#pragma GCC unroll 16
      for (int i = 0; i < kRows; ++i) {
        T ai;
        if constexpr (kRowsA) {
          ai = V::Broadcast(a_rows[i] + p);
        } else {
          ai = V::Broadcast(a + i);
        }
        acc[i][0] = V::Fma(ai, b0, acc[i][0]);
        acc[i][1] = V::Fma(ai, b1, acc[i][1]);
      }
      if constexpr (!kRowsA) a += kMr;
    }
    const T va = V::Set1(alpha);
    const T vb = V::Set1(beta);
    const bool beta_zero = beta == 0.0f;
    if constexpr (kRows == kMr) {
      if (m_eff == kMr && n_eff == kNr) {
#pragma GCC unroll 16
        for (int i = 0; i < kMr; ++i) StoreRow(c + i * ldc, acc[i][0], acc[i][1], va, vb, beta_zero, first);
        return;
      }
    }
    // Edge tile: the same vector operations into a scratch tile, then copy the corner.
    alignas(64) float tile[kMr][kNr] = {};
    for (int i = 0; i < m_eff; ++i) {
      for (int j = 0; j < n_eff; ++j) tile[i][j] = c[i * ldc + j];
    }
#pragma GCC unroll 16
    for (int i = 0; i < kRows; ++i) StoreRow(tile[i], acc[i][0], acc[i][1], va, vb, beta_zero, first);
    for (int i = 0; i < m_eff; ++i) {
      for (int j = 0; j < n_eff; ++j) c[i * ldc + j] = tile[i][j];
    }
  }

  // Run with the fewest rows among kMr and the narrower instantiations that cover m_eff.
  template <bool kPackB, bool kRowsA>
  static inline void RunRows(int64_t kc, const float* a, int64_t lda, const float* b, int64_t ldb, float* b_dst,
                             float* c, int64_t ldc, int m_eff, int n_eff, float alpha, float beta, bool first) {
    const auto run = [&](auto rows) {
      return Run<kPackB, kRowsA, decltype(rows)::value>(kc, a, lda, b, ldb, b_dst, c, ldc, m_eff, n_eff, alpha, beta,
                                                        first);
    };
    if constexpr (kMr > 2) {
      if (m_eff <= 2) return run(std::integral_constant<int, 2>{});
    }
    if constexpr (kMr > 4) {
      if (m_eff <= 4) return run(std::integral_constant<int, 4>{});
    }
    if constexpr (kMr > 8) {
      if (m_eff <= 8) return run(std::integral_constant<int, 8>{});
    }
    // Channel counts like 24, 96 or 320 leave 10 or 12 rows in their last strip.
    if constexpr (kMr > 10) {
      if (m_eff <= 10) return run(std::integral_constant<int, 10>{});
    }
    if constexpr (kMr > 12) {
      if (m_eff <= 12) return run(std::integral_constant<int, 12>{});
    }
    run(std::integral_constant<int, kMr>{});
  }

  static void Kernel(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, int m_eff, int n_eff,
                     float alpha, float beta, bool first) {
    RunRows<false, false>(kc, a, 0, b, 0, nullptr, c, ldc, m_eff, n_eff, alpha, beta, first);
  }

  static void KernelPackB(int64_t kc, const float* a, const float* b, int64_t ldb, float* b_dst, float* c, int64_t ldc,
                          int m_eff, int n_eff, float alpha, float beta, bool first) {
    RunRows<true, false>(kc, a, 0, b, ldb, b_dst, c, ldc, m_eff, n_eff, alpha, beta, first);
  }

  static void KernelRowsA(int64_t kc, const float* a, int64_t lda, const float* b, int64_t ldb, float* b_dst, float* c,
                          int64_t ldc, int m_eff, int n_eff, float alpha, float beta, bool first) {
    if (b_dst != nullptr) {
      return RunRows<true, true>(kc, a, lda, b, ldb, b_dst, c, ldc, m_eff, n_eff, alpha, beta, first);
    }
    RunRows<false, true>(kc, a, lda, b, 0, nullptr, c, ldc, m_eff, n_eff, alpha, beta, first);
  }
};

}  // namespace
}  // namespace gemm_internal
}  // namespace tsr

#endif  // TESSERA_KERNELS_CPU_GEMM_MICROKERNEL_SIMD_H_

// AVX2 inner loops of the f32 reductions (see reduction_simd.h). Compiled with
// -mavx2 -mfma; reduction_kernels.cc calls them only when the CPU has AVX2.
//
// Sums: the reference accumulates in double and rounds once. Here blocks of at most
// 16 values per f32 lane (512 values in four vectors horizontally, 16 rows
// vertically) are summed in f32 and each block's partial sums are added into double
// accumulators, so the error is a few f32 ulps of the block sums whatever the length
// (rather than growing with it), at the speed of f32 adds.
//
// Max/Min: _mm256_max_ps returns its second operand when either is NaN, so NaN is
// tracked separately (an unordered compare) and made sticky, as in the reference.
//
// Everything here has internal linkage apart from Avx2ReductionKernels; no templates
// from shared headers are instantiated (their COMDAT copies would carry AVX2 code).
#include <immintrin.h>

#include <cstdint>

#include "kernels/cpu/reduction_simd.h"

namespace tsr {
namespace reduction_internal {

namespace {

constexpr int64_t kBlockRows = 16;         // f32 adds per lane before widening to double
constexpr int64_t kHorizontalBlock = 512;  // = 4 vectors x 8 lanes x kBlockRows

inline bool IsNan(float x) { return x != x; }

inline double HorizontalSum(__m256d v) {
  const __m128d s = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
  return _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)));
}

// Widens the 8 lanes of v and adds them into d0 (low 4) and d1 (high 4).
inline void AddWidened(__m256 v, __m256d& d0, __m256d& d1) {
  d0 = _mm256_add_pd(d0, _mm256_cvtps_pd(_mm256_castps256_ps128(v)));
  d1 = _mm256_add_pd(d1, _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)));
}

// Adds p[0, len) into the double accumulators d0, d1 and `tail`.
inline void SumRun(const float* p, int64_t len, __m256d& d0, __m256d& d1, double& tail) {
  int64_t i = 0;
  while (len - i >= 32) {
    const int64_t avail = (len - i) & ~int64_t{31};
    const int64_t end = i + (avail < kHorizontalBlock ? avail : kHorizontalBlock);
    __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps(), a2 = _mm256_setzero_ps(), a3 = _mm256_setzero_ps();
    for (; i < end; i += 32) {
      a0 = _mm256_add_ps(a0, _mm256_loadu_ps(p + i));
      a1 = _mm256_add_ps(a1, _mm256_loadu_ps(p + i + 8));
      a2 = _mm256_add_ps(a2, _mm256_loadu_ps(p + i + 16));
      a3 = _mm256_add_ps(a3, _mm256_loadu_ps(p + i + 24));
    }
    AddWidened(_mm256_add_ps(a0, a1), d0, d1);
    AddWidened(_mm256_add_ps(a2, a3), d0, d1);
  }
  for (; i + 8 <= len; i += 8) AddWidened(_mm256_loadu_ps(p + i), d0, d1);
  for (; i < len; ++i) tail += p[i];
}

// Max (kMax) or min over p[0, len) folded into the vector accumulator `acc`, the
// scalar one `sacc`, and the NaN flags `nan` / `snan`.
template <bool kMax>
inline void ExtremumRun(const float* p, int64_t len, __m256& acc, __m256& nan, float& sacc, bool& snan) {
  int64_t i = 0;
  __m256 a1 = acc, a2 = acc, a3 = acc;
  for (; i + 32 <= len; i += 32) {
    const __m256 x0 = _mm256_loadu_ps(p + i), x1 = _mm256_loadu_ps(p + i + 8);
    const __m256 x2 = _mm256_loadu_ps(p + i + 16), x3 = _mm256_loadu_ps(p + i + 24);
    // One unordered compare covers two vectors: true when either lane is NaN.
    nan = _mm256_or_ps(nan, _mm256_or_ps(_mm256_cmp_ps(x0, x1, _CMP_UNORD_Q), _mm256_cmp_ps(x2, x3, _CMP_UNORD_Q)));
    if (kMax) {
      acc = _mm256_max_ps(acc, x0), a1 = _mm256_max_ps(a1, x1), a2 = _mm256_max_ps(a2, x2);
      a3 = _mm256_max_ps(a3, x3);
    } else {
      acc = _mm256_min_ps(acc, x0), a1 = _mm256_min_ps(a1, x1), a2 = _mm256_min_ps(a2, x2);
      a3 = _mm256_min_ps(a3, x3);
    }
  }
  if (kMax) {
    acc = _mm256_max_ps(_mm256_max_ps(acc, a1), _mm256_max_ps(a2, a3));
  } else {
    acc = _mm256_min_ps(_mm256_min_ps(acc, a1), _mm256_min_ps(a2, a3));
  }
  for (; i + 8 <= len; i += 8) {
    const __m256 x = _mm256_loadu_ps(p + i);
    nan = _mm256_or_ps(nan, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
    acc = kMax ? _mm256_max_ps(acc, x) : _mm256_min_ps(acc, x);
  }
  for (; i < len; ++i) {
    const float x = p[i];
    snan |= IsNan(x);
    if (kMax ? x > sacc : x < sacc) sacc = x;
  }
}

template <bool kMax>
float ExtremumRuns(const float* base, const int64_t* run_offsets, int64_t runs, int64_t len) {
  const float identity = kMax ? -__builtin_inff() : __builtin_inff();
  __m256 acc = _mm256_set1_ps(identity), nan = _mm256_setzero_ps();
  float sacc = identity;
  bool snan = false;
  for (int64_t r = 0; r < runs; ++r) ExtremumRun<kMax>(base + run_offsets[r], len, acc, nan, sacc, snan);
  if (snan || _mm256_movemask_ps(nan) != 0) return __builtin_nanf("");
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, acc);
  for (float x : lanes) {
    if (kMax ? x > sacc : x < sacc) sacc = x;
  }
  return sacc;
}

float ReduceRuns(FloatReduceKind kind, const float* base, const int64_t* run_offsets, int64_t runs, int64_t len,
                 double divisor) {
  if (kind == FloatReduceKind::kMax) return ExtremumRuns<true>(base, run_offsets, runs, len);
  if (kind == FloatReduceKind::kMin) return ExtremumRuns<false>(base, run_offsets, runs, len);
  __m256d d0 = _mm256_setzero_pd(), d1 = _mm256_setzero_pd();
  double tail = 0.0;
  for (int64_t r = 0; r < runs; ++r) SumRun(base + run_offsets[r], len, d0, d1, tail);
  return static_cast<float>((HorizontalSum(_mm256_add_pd(d0, d1)) + tail) / divisor);
}

void SumRows(const float* base, const int64_t* row_offsets, int64_t rows, int64_t width, double divisor, float* out) {
  alignas(32) float block[kColumnBlock];
  alignas(32) double acc[kColumnBlock];
  const int64_t vec_width = width & ~int64_t{7};
  for (int64_t j = 0; j < width; ++j) acc[j] = 0.0;
  for (int64_t r0 = 0; r0 < rows; r0 += kBlockRows) {
    const int64_t r1 = rows - r0 < kBlockRows ? rows : r0 + kBlockRows;
    const float* first = base + row_offsets[r0];
    for (int64_t j = 0; j < width; ++j) block[j] = first[j];
    for (int64_t r = r0 + 1; r < r1; ++r) {
      const float* p = base + row_offsets[r];
      // Rows far apart start new pages, where hardware prefetch stops: fetch the
      // next row's lines ahead of their use.
      const float* next = base + row_offsets[r + 1 < rows ? r + 1 : r];
      int64_t j = 0;
      for (; j + 32 <= vec_width; j += 32) {
        _mm_prefetch(reinterpret_cast<const char*>(next + j), _MM_HINT_T0);
        _mm_prefetch(reinterpret_cast<const char*>(next + j + 16), _MM_HINT_T0);
        _mm256_store_ps(block + j, _mm256_add_ps(_mm256_load_ps(block + j), _mm256_loadu_ps(p + j)));
        _mm256_store_ps(block + j + 8, _mm256_add_ps(_mm256_load_ps(block + j + 8), _mm256_loadu_ps(p + j + 8)));
        _mm256_store_ps(block + j + 16, _mm256_add_ps(_mm256_load_ps(block + j + 16), _mm256_loadu_ps(p + j + 16)));
        _mm256_store_ps(block + j + 24, _mm256_add_ps(_mm256_load_ps(block + j + 24), _mm256_loadu_ps(p + j + 24)));
      }
      for (; j < vec_width; j += 8) {
        _mm256_store_ps(block + j, _mm256_add_ps(_mm256_load_ps(block + j), _mm256_loadu_ps(p + j)));
      }
      for (; j < width; ++j) block[j] += p[j];
    }
    int64_t j = 0;
    for (; j < vec_width; j += 4) {
      _mm256_store_pd(acc + j, _mm256_add_pd(_mm256_load_pd(acc + j), _mm256_cvtps_pd(_mm_load_ps(block + j))));
    }
    for (; j < width; ++j) acc[j] += block[j];
  }
  const __m256d inv = _mm256_set1_pd(divisor);
  int64_t j = 0;
  for (; j < vec_width; j += 4) _mm_storeu_ps(out + j, _mm256_cvtpd_ps(_mm256_div_pd(_mm256_load_pd(acc + j), inv)));
  for (; j < width; ++j) out[j] = static_cast<float>(acc[j] / divisor);
}

template <bool kMax>
void ExtremumRows(const float* base, const int64_t* row_offsets, int64_t rows, int64_t width, float* out) {
  const int64_t vec_width = width & ~int64_t{7};
  const float identity = kMax ? -__builtin_inff() : __builtin_inff();
  for (int64_t j = 0; j < width; ++j) out[j] = identity;
  for (int64_t r = 0; r < rows; ++r) {
    const float* p = base + row_offsets[r];
    int64_t j = 0;
    for (; j < vec_width; j += 8) {
      const __m256 acc = _mm256_loadu_ps(out + j), x = _mm256_loadu_ps(p + j);
      // A NaN x wins the max (second operand); a NaN acc is kept by the blend.
      const __m256 m = kMax ? _mm256_max_ps(acc, x) : _mm256_min_ps(acc, x);
      _mm256_storeu_ps(out + j, _mm256_blendv_ps(m, acc, _mm256_cmp_ps(acc, acc, _CMP_UNORD_Q)));
    }
    for (; j < width; ++j) {
      const float x = p[j];
      if (IsNan(x) || (kMax ? x > out[j] : x < out[j])) out[j] = x;
    }
  }
}

void ReduceRows(FloatReduceKind kind, const float* base, const int64_t* row_offsets, int64_t rows, int64_t width,
                double divisor, float* out) {
  switch (kind) {
    case FloatReduceKind::kSum:
      return SumRows(base, row_offsets, rows, width, divisor, out);
    case FloatReduceKind::kMax:
      return ExtremumRows<true>(base, row_offsets, rows, width, out);
    case FloatReduceKind::kMin:
      return ExtremumRows<false>(base, row_offsets, rows, width, out);
  }
}

// The maximum (with its NaN flag), then the first (or last) position holding it:
// equal values compare equal whatever their zero's sign, as ties do in the reference.
int64_t ArgMaxContiguous(const float* p, int64_t n, bool last) {
  const int64_t zero = 0;
  const float m = ExtremumRuns<true>(p, &zero, 1, n);
  if (IsNan(m)) {
    if (last) {
      for (int64_t i = n - 1; i > 0; --i) {
        if (IsNan(p[i])) return i;
      }
      return 0;
    }
    for (int64_t i = 0; i < n; ++i) {
      if (IsNan(p[i])) return i;
    }
    return 0;
  }
  const __m256 mv = _mm256_set1_ps(m);
  if (last) {
    int64_t i = n;
    for (; i >= 8; i -= 8) {
      const int mask = _mm256_movemask_ps(_mm256_cmp_ps(_mm256_loadu_ps(p + i - 8), mv, _CMP_EQ_OQ));
      if (mask != 0) return i - 8 + (31 - __builtin_clz(static_cast<unsigned>(mask)));
    }
    for (--i; i > 0; --i) {
      if (p[i] == m) return i;
    }
    return 0;
  }
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const int mask = _mm256_movemask_ps(_mm256_cmp_ps(_mm256_loadu_ps(p + i), mv, _CMP_EQ_OQ));
    if (mask != 0) return i + __builtin_ctz(static_cast<unsigned>(mask));
  }
  for (; i < n; ++i) {
    if (p[i] == m) return i;
  }
  return 0;
}

inline bool Replaces(float x, float best, bool last) {
  if (IsNan(best)) return last && IsNan(x);
  if (IsNan(x)) return true;
  return last ? x >= best : x > best;
}

void ArgMaxColumns(const float* p, int64_t n, int64_t stride, int64_t width, bool last, int64_t* out) {
  alignas(32) float best[kColumnBlock];
  alignas(32) int32_t index[kColumnBlock];
  const int64_t vec_width = width & ~int64_t{7};
  for (int64_t j = 0; j < width; ++j) best[j] = p[j], index[j] = 0;
  const __m256 last_mask = _mm256_castsi256_ps(_mm256_set1_epi32(last ? -1 : 0));
  for (int64_t k = 1; k < n; ++k) {
    const float* row = p + k * stride;
    const __m256 kv = _mm256_castsi256_ps(_mm256_set1_epi32(static_cast<int32_t>(k)));
    int64_t j = 0;
    for (; j < vec_width; j += 8) {
      const __m256 x = _mm256_loadu_ps(row + j), b = _mm256_load_ps(best + j);
      const __m256 nan_b = _mm256_cmp_ps(b, b, _CMP_UNORD_Q), nan_x = _mm256_cmp_ps(x, x, _CMP_UNORD_Q);
      const __m256 greater = last ? _mm256_cmp_ps(x, b, _CMP_GE_OQ) : _mm256_cmp_ps(x, b, _CMP_GT_OQ);
      // The reference's rule: a NaN best moves only to a later NaN (with last); else
      // a NaN or a larger (or, with last, equal) x replaces it.
      const __m256 replace = _mm256_or_ps(_mm256_andnot_ps(nan_b, _mm256_or_ps(nan_x, greater)),
                                          _mm256_and_ps(last_mask, _mm256_and_ps(nan_b, nan_x)));
      _mm256_store_ps(best + j, _mm256_blendv_ps(b, x, replace));
      float* idx = reinterpret_cast<float*>(index + j);
      _mm256_store_ps(idx, _mm256_blendv_ps(_mm256_load_ps(idx), kv, replace));
    }
    for (; j < width; ++j) {
      if (Replaces(row[j], best[j], last)) best[j] = row[j], index[j] = static_cast<int32_t>(k);
    }
  }
  for (int64_t j = 0; j < width; ++j) out[j] = index[j];
}

}  // namespace

const ReductionIsaKernels& Avx2ReductionKernels() {
  static constexpr ReductionIsaKernels kKernels = {ReduceRuns, ReduceRows, ArgMaxContiguous, ArgMaxColumns};
  return kKernels;
}

}  // namespace reduction_internal
}  // namespace tsr

// AVX2 elementwise row loops (see elementwise_loops.h). Each op is a function on one
// vector of 8 lanes; a row runs it over full vectors and then once over a padded
// copy of the tail, so every element, wherever it falls, gets the same computation.
// Compiled with -mavx2 -mfma: everything here has internal linkage except
// ElementwiseLoopsAvx2(), and nothing from the standard library is used.
#include <immintrin.h>

#include <cstdint>

#include "kernels/cpu/elementwise_loops.h"

namespace tsr {

namespace {

constexpr int64_t kLanes = 8;

// Loads lane i from p[i * step] for i < n (step 0 or 1), `pad` elsewhere.
inline __m256 LoadPartial(const float* p, int64_t step, int64_t n, float pad) {
  float buf[kLanes];
  for (int64_t i = 0; i < kLanes; ++i) buf[i] = i < n ? p[i * step] : pad;
  return _mm256_loadu_ps(buf);
}

inline void StorePartial(float* p, __m256 v, int64_t n) {
  float buf[kLanes];
  _mm256_storeu_ps(buf, v);
  for (int64_t i = 0; i < n; ++i) p[i] = buf[i];
}

// 8 lanes of a 0/-1 compare mask as 8 bools.
inline void StoreMaskAsBools(bool* p, __m256 mask, int64_t n) {
  const __m256i bits = _mm256_srli_epi32(_mm256_castps_si256(mask), 31);
  const __m128i words = _mm_packs_epi32(_mm256_castsi256_si128(bits), _mm256_extracti128_si256(bits, 1));
  const __m128i bytes = _mm_packus_epi16(words, words);
  if (n == kLanes) {
    _mm_storel_epi64(reinterpret_cast<__m128i*>(p), bytes);
  } else {
    alignas(16) unsigned char buf[16];
    _mm_store_si128(reinterpret_cast<__m128i*>(buf), bytes);
    for (int64_t i = 0; i < n; ++i) p[i] = buf[i] != 0;
  }
}

inline __m256 IsNan(__m256 v) { return _mm256_cmp_ps(v, v, _CMP_UNORD_Q); }

struct AddOp {
  static __m256 Apply(__m256 a, __m256 b) { return _mm256_add_ps(a, b); }
};
struct SubOp {
  static __m256 Apply(__m256 a, __m256 b) { return _mm256_sub_ps(a, b); }
};
struct MulOp {
  static __m256 Apply(__m256 a, __m256 b) { return _mm256_mul_ps(a, b); }
};
struct DivOp {
  static __m256 Apply(__m256 a, __m256 b) { return _mm256_div_ps(a, b); }
};
// max_ps(b, a) is "b > a ? b : a", which gives a when either is NaN; a NaN b must win
// only when a is not NaN.
struct MaxOp {
  static __m256 Apply(__m256 a, __m256 b) {
    const __m256 take_b = _mm256_andnot_ps(IsNan(a), IsNan(b));
    return _mm256_blendv_ps(_mm256_max_ps(b, a), b, take_b);
  }
};
struct MinOp {
  static __m256 Apply(__m256 a, __m256 b) {
    const __m256 take_b = _mm256_andnot_ps(IsNan(a), IsNan(b));
    return _mm256_blendv_ps(_mm256_min_ps(b, a), b, take_b);
  }
};
struct EqualOp {
  static __m256 Apply(__m256 a, __m256 b) { return _mm256_cmp_ps(a, b, _CMP_EQ_OQ); }
};
struct LessOp {
  static __m256 Apply(__m256 a, __m256 b) { return _mm256_cmp_ps(a, b, _CMP_LT_OQ); }
};
struct GreaterOp {
  static __m256 Apply(__m256 a, __m256 b) { return _mm256_cmp_ps(a, b, _CMP_GT_OQ); }
};

// Runs Op over a row; Store writes one vector (n lanes valid). The step pattern is
// decided once per row so the loads in the main loop are plain or broadcast.
template <typename Op, typename Out, typename Store>
inline void BinaryLoop(const float* a, int64_t as, const float* b, int64_t bs, Out* out, int64_t n, Store store) {
  int64_t i = 0;
  if (as == 1 && bs == 1) {
    for (; i + kLanes <= n; i += kLanes)
      store(out + i, Op::Apply(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i)), kLanes);
  } else if (as == 0 && bs == 1) {
    const __m256 va = _mm256_set1_ps(*a);
    for (; i + kLanes <= n; i += kLanes) store(out + i, Op::Apply(va, _mm256_loadu_ps(b + i)), kLanes);
  } else if (as == 1 && bs == 0) {
    const __m256 vb = _mm256_set1_ps(*b);
    for (; i + kLanes <= n; i += kLanes) store(out + i, Op::Apply(_mm256_loadu_ps(a + i), vb), kLanes);
  } else {
    const __m256 v = Op::Apply(_mm256_set1_ps(*a), _mm256_set1_ps(*b));
    for (; i + kLanes <= n; i += kLanes) store(out + i, v, kLanes);
  }
  if (i < n) {
    const __m256 va = LoadPartial(a + i * as, as, n - i, 1.0f);
    const __m256 vb = LoadPartial(b + i * bs, bs, n - i, 1.0f);
    store(out + i, Op::Apply(va, vb), n - i);
  }
}

inline void StoreFloats(float* p, __m256 v, int64_t n) {
  if (n == kLanes) {
    _mm256_storeu_ps(p, v);
  } else {
    StorePartial(p, v, n);
  }
}

template <typename Op>
void BinaryRow(const float* a, int64_t as, const float* b, int64_t bs, float* out, int64_t n) {
  BinaryLoop<Op>(a, as, b, bs, out, n, StoreFloats);
}

template <typename Op>
void CompareRow(const float* a, int64_t as, const float* b, int64_t bs, bool* out, int64_t n) {
  BinaryLoop<Op>(a, as, b, bs, out, n, StoreMaskAsBools);
}

// Lanes of cond (bytes, step 0 or 1) that are false, as a float mask.
inline __m256 FalseMask(const bool* c, int64_t cs, int64_t n) {
  __m128i bytes;
  if (cs == 0) {
    bytes = _mm_set1_epi8(static_cast<char>(*c));
  } else if (n == kLanes) {
    bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(c));
  } else {
    alignas(16) unsigned char buf[16] = {};
    for (int64_t i = 0; i < n; ++i) buf[i] = c[i] ? 1 : 0;
    bytes = _mm_load_si128(reinterpret_cast<const __m128i*>(buf));
  }
  const __m256i words = _mm256_cvtepu8_epi32(bytes);
  return _mm256_castsi256_ps(_mm256_cmpeq_epi32(words, _mm256_setzero_si256()));
}

void WhereRow(const bool* c, int64_t cs, const float* x, int64_t xs, const float* y, int64_t ys, float* out,
              int64_t n) {
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    const __m256 vx = xs == 1 ? _mm256_loadu_ps(x + i) : _mm256_set1_ps(*x);
    const __m256 vy = ys == 1 ? _mm256_loadu_ps(y + i) : _mm256_set1_ps(*y);
    _mm256_storeu_ps(out + i, _mm256_blendv_ps(vx, vy, FalseMask(c + i * cs, cs, kLanes)));
  }
  if (i < n) {
    const __m256 vx = LoadPartial(x + i * xs, xs, n - i, 0.0f);
    const __m256 vy = LoadPartial(y + i * ys, ys, n - i, 0.0f);
    StorePartial(out + i, _mm256_blendv_ps(vx, vy, FalseMask(c + i * cs, cs, n - i)), n - i);
  }
}

// Runs f (one vector to one vector) over a row, the tail through a padded copy.
template <typename F>
inline void UnaryLoop(const float* x, float* y, int64_t n, F f) {
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) _mm256_storeu_ps(y + i, f(_mm256_loadu_ps(x + i)));
  if (i < n) StorePartial(y + i, f(LoadPartial(x + i, 1, n - i, 1.0f)), n - i);
}

inline __m256 SignMask() { return _mm256_set1_ps(-0.0f); }

void AbsRow(const float* x, float* y, int64_t n) {
  UnaryLoop(x, y, n, [](__m256 v) { return _mm256_andnot_ps(SignMask(), v); });
}
void NegRow(const float* x, float* y, int64_t n) {
  UnaryLoop(x, y, n, [](__m256 v) { return _mm256_xor_ps(SignMask(), v); });
}
void SqrtRow(const float* x, float* y, int64_t n) {
  UnaryLoop(x, y, n, [](__m256 v) { return _mm256_sqrt_ps(v); });
}
void ReciprocalRow(const float* x, float* y, int64_t n) {
  UnaryLoop(x, y, n, [](__m256 v) { return _mm256_div_ps(_mm256_set1_ps(1.0f), v); });
}
// In double, as the reference: 1/sqrt rounded twice in f32 could differ by an ulp.
void RsqrtRow(const float* x, float* y, int64_t n) {
  UnaryLoop(x, y, n, [](__m256 v) {
    const __m256d one = _mm256_set1_pd(1.0);
    const __m256d lo = _mm256_div_pd(one, _mm256_sqrt_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(v))));
    const __m256d hi = _mm256_div_pd(one, _mm256_sqrt_pd(_mm256_cvtps_pd(_mm256_extractf128_ps(v, 1))));
    return _mm256_set_m128(_mm256_cvtpd_ps(hi), _mm256_cvtpd_ps(lo));
  });
}
// Clears lanes below zero: -0 and NaN stay, as "x < 0 ? 0 : x".
void ReluRow(const float* x, float* y, int64_t n) {
  UnaryLoop(x, y, n, [](__m256 v) { return _mm256_andnot_ps(_mm256_cmp_ps(v, _mm256_setzero_ps(), _CMP_LT_OQ), v); });
}
// alpha * x in double and rounded once, as the reference (alpha is a double attribute).
void LeakyReluRow(const float* x, float* y, int64_t n, double alpha) {
  const __m256d va = _mm256_set1_pd(alpha);
  UnaryLoop(x, y, n, [va](__m256 v) {
    const __m256d lo = _mm256_mul_pd(va, _mm256_cvtps_pd(_mm256_castps256_ps128(v)));
    const __m256d hi = _mm256_mul_pd(va, _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)));
    const __m256 scaled = _mm256_set_m128(_mm256_cvtpd_ps(hi), _mm256_cvtpd_ps(lo));
    return _mm256_blendv_ps(scaled, v, _mm256_cmp_ps(v, _mm256_setzero_ps(), _CMP_GE_OQ));
  });
}
// max_ps(lo, v) is "lo > v ? lo : v": v when either is NaN, as ONNX's "v < lo".
void ClipRow(const float* x, float* y, int64_t n, float lo, float hi) {
  const __m256 vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi);
  UnaryLoop(x, y, n, [vlo, vhi](__m256 v) { return _mm256_min_ps(vhi, _mm256_max_ps(vlo, v)); });
}

constexpr ElementwiseLoops kAvx2Loops = {
    .add = BinaryRow<AddOp>,
    .sub = BinaryRow<SubOp>,
    .mul = BinaryRow<MulOp>,
    .div = BinaryRow<DivOp>,
    .max = BinaryRow<MaxOp>,
    .min = BinaryRow<MinOp>,
    .equal = CompareRow<EqualOp>,
    .less = CompareRow<LessOp>,
    .greater = CompareRow<GreaterOp>,
    .where = WhereRow,
    .abs = AbsRow,
    .neg = NegRow,
    .sqrt = SqrtRow,
    .reciprocal = ReciprocalRow,
    .rsqrt = RsqrtRow,
    .relu = ReluRow,
    .leaky_relu = LeakyReluRow,
    .clip = ClipRow,
};

}  // namespace

const ElementwiseLoops& ElementwiseLoopsAvx2() { return kAvx2Loops; }

}  // namespace tsr

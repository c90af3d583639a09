// AVX2 + FMA vector math (see vector_math.h). Each function works on 8 lanes; arrays
// run full vectors and then one padded vector for the tail, so an element's result
// does not depend on where it falls.
//
// Accuracy, measured by tests/kernels/cpu/vector_math_test.cc against double-precision
// std:: formulas over every 1009th f32 bit pattern plus special values (error in ulp of
// the exact result; results below 2^-100 in magnitude count in ulp of 2^-100):
//   exp 0.88, log 0.89, tanh 1.41, sigmoid 2.11, silu 2.91, softplus 2.57,
//   gelu_tanh 2.23, erf 2.36, gelu_erf 3.82.
//
// Compiled with -mavx2 -mfma: everything has internal linkage except VectorMathAvx2(),
// and nothing from the standard library is used here.
#include <immintrin.h>

#include <cstdint>

#include "kernels/cpu/vector_math.h"

namespace tsr {

namespace {

constexpr int64_t kLanes = 8;

inline __m256 Set(float v) { return _mm256_set1_ps(v); }
inline __m256 IsNan(__m256 v) { return _mm256_cmp_ps(v, v, _CMP_UNORD_Q); }
inline __m256 Abs(__m256 v) { return _mm256_andnot_ps(Set(-0.0f), v); }

// ln 2 split so that n * kLn2Hi is exact for |n| < 2^15.
constexpr float kLn2Hi = 0.693359375f;
constexpr float kLn2Lo = -2.12194440e-4f;

// e^x: x = n ln2 + r, |r| <= ln2/2, e^r by its Taylor polynomial of degree 7
// (truncation < 6e-9 relative), times 2^n applied in two halves so that results
// in the subnormal range round once and 2^128 * (r < 0) stays finite.
inline __m256 Exp(__m256 x) {
  // max_ps/min_ps return their second operand for NaN: x passes through as NaN.
  const __m256 xc = _mm256_min_ps(Set(89.0f), _mm256_max_ps(Set(-110.0f), x));
  const __m256 n =
      _mm256_round_ps(_mm256_mul_ps(xc, Set(1.44269504088896341f)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, Set(kLn2Hi), xc);
  r = _mm256_fnmadd_ps(n, Set(kLn2Lo), r);
  __m256 p = Set(1.0f / 5040);
  p = _mm256_fmadd_ps(p, r, Set(1.0f / 720));
  p = _mm256_fmadd_ps(p, r, Set(1.0f / 120));
  p = _mm256_fmadd_ps(p, r, Set(1.0f / 24));
  p = _mm256_fmadd_ps(p, r, Set(1.0f / 6));
  p = _mm256_fmadd_ps(p, r, Set(0.5f));
  p = _mm256_fmadd_ps(p, r, Set(1.0f));
  p = _mm256_fmadd_ps(p, r, Set(1.0f));
  const __m256i ni = _mm256_cvtps_epi32(n);
  const __m256i n1 = _mm256_srai_epi32(ni, 1);
  const __m256i n2 = _mm256_sub_epi32(ni, n1);
  const __m256i bias = _mm256_set1_epi32(127);
  const __m256 s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n1, bias), 23));
  const __m256 s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n2, bias), 23));
  const __m256 y = _mm256_mul_ps(_mm256_mul_ps(p, s1), s2);
  return _mm256_blendv_ps(y, x, IsNan(x));
}

// log x: x = m 2^e with m in [sqrt(1/2), sqrt(2)), f = m - 1 (exact), s = f / (2 + f),
// log(1 + f) = 2 atanh(s) = f - s (f - R(s^2)) with R the series of 2 s^2k / (2k+1).
inline __m256 Log(__m256 x) {
  const __m256 tiny = _mm256_cmp_ps(x, Set(1.17549435e-38f), _CMP_LT_OQ);  // subnormal (or <= 0)
  const __m256 xs = _mm256_blendv_ps(x, _mm256_mul_ps(x, Set(8388608.0f)), tiny);
  const __m256i bits = _mm256_castps_si256(xs);
  __m256 e = _mm256_cvtepi32_ps(_mm256_sub_epi32(_mm256_srli_epi32(bits, 23), _mm256_set1_epi32(127)));
  e = _mm256_sub_ps(e, _mm256_and_ps(tiny, Set(23.0f)));
  __m256 m = _mm256_castsi256_ps(
      _mm256_or_si256(_mm256_and_si256(bits, _mm256_set1_epi32(0x007FFFFF)), _mm256_set1_epi32(0x3F800000)));
  const __m256 big = _mm256_cmp_ps(m, Set(1.41421356f), _CMP_GT_OQ);
  m = _mm256_blendv_ps(m, _mm256_mul_ps(m, Set(0.5f)), big);
  e = _mm256_add_ps(e, _mm256_and_ps(big, Set(1.0f)));
  const __m256 f = _mm256_sub_ps(m, Set(1.0f));
  const __m256 s = _mm256_div_ps(f, _mm256_add_ps(Set(2.0f), f));
  const __m256 z = _mm256_mul_ps(s, s);
  __m256 r = Set(2.0f / 11);
  r = _mm256_fmadd_ps(r, z, Set(2.0f / 9));
  r = _mm256_fmadd_ps(r, z, Set(2.0f / 7));
  r = _mm256_fmadd_ps(r, z, Set(2.0f / 5));
  r = _mm256_fmadd_ps(r, z, Set(2.0f / 3));
  r = _mm256_mul_ps(r, z);
  const __m256 log1p = _mm256_fnmadd_ps(s, _mm256_sub_ps(f, r), f);
  __m256 y = _mm256_fmadd_ps(e, Set(kLn2Hi), _mm256_fmadd_ps(e, Set(kLn2Lo), log1p));
  y = _mm256_blendv_ps(y, Set(-__builtin_inff()), _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_EQ_OQ));
  y = _mm256_blendv_ps(y, Set(__builtin_nanf("")), _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_LT_OQ));
  const __m256 passthrough = _mm256_or_ps(IsNan(x), _mm256_cmp_ps(x, Set(__builtin_inff()), _CMP_EQ_OQ));
  return _mm256_blendv_ps(y, x, passthrough);
}

// tanh: the Taylor series for |x| < 0.55 (no cancellation), else
// sign(x) (1 - 2 / (e^2|x| + 1)), which saturates to 1 (and e^2|x| to inf) correctly.
inline __m256 Tanh(__m256 x) {
  const __m256 a = Abs(x);
  const __m256 z = _mm256_mul_ps(x, x);
  __m256 p = Set(6404582.0f / 10854718875.0f);
  p = _mm256_fmadd_ps(p, z, Set(-929569.0f / 638512875.0f));
  p = _mm256_fmadd_ps(p, z, Set(21844.0f / 6081075.0f));
  p = _mm256_fmadd_ps(p, z, Set(-1382.0f / 155925.0f));
  p = _mm256_fmadd_ps(p, z, Set(62.0f / 2835.0f));
  p = _mm256_fmadd_ps(p, z, Set(-17.0f / 315.0f));
  p = _mm256_fmadd_ps(p, z, Set(2.0f / 15.0f));
  p = _mm256_fmadd_ps(p, z, Set(-1.0f / 3.0f));
  const __m256 small = _mm256_fmadd_ps(_mm256_mul_ps(p, z), a, a);
  const __m256 t = Exp(_mm256_add_ps(a, a));
  const __m256 large = _mm256_sub_ps(Set(1.0f), _mm256_div_ps(Set(2.0f), _mm256_add_ps(t, Set(1.0f))));
  // Both forms on |x|, then x's sign (so -0 stays -0).
  const __m256 y = _mm256_blendv_ps(large, small, _mm256_cmp_ps(a, Set(0.55f), _CMP_LT_OQ));
  return _mm256_or_ps(y, _mm256_and_ps(x, Set(-0.0f)));
}

// 1 / (1 + e^-x) in the stable form of the reference: e = e^-|x| <= 1.
inline __m256 Sigmoid(__m256 x) {
  const __m256 e = Exp(_mm256_xor_ps(Abs(x), Set(-0.0f)));
  const __m256 d = _mm256_add_ps(Set(1.0f), e);
  const __m256 num = _mm256_blendv_ps(Set(1.0f), e, _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_LT_OQ));
  return _mm256_div_ps(num, d);
}

inline __m256 Silu(__m256 x) { return _mm256_mul_ps(x, Sigmoid(x)); }

// max(x, 0) + log1p(e^-|x|), log1p(u) as log(1 + u) * u / ((1 + u) - 1), which
// cancels the rounding of 1 + u (u itself when 1 + u rounds to 1).
inline __m256 Softplus(__m256 x) {
  const __m256 u = Exp(_mm256_xor_ps(Abs(x), Set(-0.0f)));
  const __m256 w = _mm256_add_ps(Set(1.0f), u);
  const __m256 wm1 = _mm256_sub_ps(w, Set(1.0f));
  const __m256 ratio =
      _mm256_div_ps(u, _mm256_blendv_ps(wm1, Set(1.0f), _mm256_cmp_ps(wm1, _mm256_setzero_ps(), _CMP_EQ_OQ)));
  const __m256 log1p =
      _mm256_blendv_ps(_mm256_mul_ps(Log(w), ratio), u, _mm256_cmp_ps(wm1, _mm256_setzero_ps(), _CMP_EQ_OQ));
  return _mm256_add_ps(_mm256_max_ps(x, _mm256_setzero_ps()), log1p);
}

// 0.5 x (1 + tanh(v)) = x / (1 + e^-2v): no cancellation for negative x, and the
// reference's NaN for x = -inf (-inf / inf) and inf for x = inf. The argument -2v is
// computed in double and split into f32 hi + lo, e^(hi + lo) = e^hi (1 + lo): rounding
// it to f32 would cost |2v| / 2 ulp, 10 ulp at x = -4.
inline __m256 GeluTanh(__m256 x) {
  const __m256d k = _mm256_set1_pd(-2.0 * 0.797884560802865355);  // -2 sqrt(2/pi)
  const __m256d c = _mm256_set1_pd(0.044715);
  const __m256d one = _mm256_set1_pd(1.0);
  auto arg = [&](__m128 half) {
    const __m256d xd = _mm256_cvtps_pd(half);
    return _mm256_mul_pd(_mm256_mul_pd(k, xd), _mm256_fmadd_pd(_mm256_mul_pd(xd, xd), c, one));
  };
  const __m256d arg_lo = arg(_mm256_castps256_ps128(x));
  const __m256d arg_hi = arg(_mm256_extractf128_ps(x, 1));
  const __m128 hi_lo = _mm256_cvtpd_ps(arg_lo), hi_hi = _mm256_cvtpd_ps(arg_hi);
  const __m256 hi = _mm256_set_m128(hi_hi, hi_lo);
  const __m256 lo = _mm256_set_m128(_mm256_cvtpd_ps(_mm256_sub_pd(arg_hi, _mm256_cvtps_pd(hi_hi))),
                                    _mm256_cvtpd_ps(_mm256_sub_pd(arg_lo, _mm256_cvtps_pd(hi_lo))));
  const __m256 e_hi = Exp(hi);
  // Only where e^hi is finite and normal (inf + inf * lo could be NaN).
  const __m256 e =
      _mm256_blendv_ps(e_hi, _mm256_fmadd_ps(e_hi, lo, e_hi), _mm256_cmp_ps(Abs(hi), Set(88.0f), _CMP_LT_OQ));
  return _mm256_div_ps(x, _mm256_add_ps(Set(1.0f), e));
}

// Horner evaluation of c[0] t^(n-1) + ... + c[n-1].
template <int N>
inline __m256 Polynomial(const float (&c)[N], __m256 t) {
  __m256 p = Set(c[0]);
  for (int i = 1; i < N; ++i) p = _mm256_fmadd_ps(p, t, Set(c[i]));
  return p;
}

// erf(x) / x = sum 2/sqrt(pi) (-1)^n x^2n / (n! (2n+1)): the Taylor series up to x^22,
// for |x| < 1 (truncation < 2e-9 relative).
constexpr float kErfTaylor[] = {-1.22905552e-09f, 1.48071928e-08f, -1.63658441e-07f, 1.64621144e-06f,
                                -1.49256502e-05f, 0.000120553326f, -0.000854832702f, 0.00522397785f,
                                -0.0268661715f,   0.112837918f,    -0.376126379f,    1.12837923f};
// e^(z^2) erfc(z) by Chebyshev interpolation of degree 14 in t = (z - 2.25) / 1.75 on
// [0.5, 4] and of degree 12 in t = (z - 7) / 3 on [4, 10] (2.5 and 1.7 ulp in f32
// evaluation).
constexpr float kErfcNear[] = {4.62508106e-05f, -0.000110326866f, 8.4809566e-05f,  -0.000179004812f, 0.000624523265f,
                               -0.00133122422f, 0.00256892294f,   -0.00513092941f, 0.0100137508f,    -0.0187790375f,
                               0.0339419544f,   -0.0589635223f,   0.0979774296f,   -0.154851392f,    0.231087252f};
constexpr float kErfcFar[] = {2.23077564e-06f,  -5.86150327e-06f, 8.04159299e-06f,  -2.05530614e-05f, 6.11694268e-05f,
                              -0.000154823632f, 0.000383288774f,  -0.000953709532f, 0.00235456089f,   -0.00575906783f,
                              0.0139608793f,    -0.033535216f,    0.0798000544f};

// erfc(z) for z >= 0.5 given z^2 = sq_hi + sq_lo exactly (NaN passes through):
// e^-sq_hi (1 - sq_lo) times the interpolant (held at z = 10 beyond, where e^-z^2 is 0).
inline __m256 ErfcFromSquare(__m256 z, __m256 sq_hi, __m256 sq_lo) {
  const __m256 zc = _mm256_min_ps(Set(10.0f), z);
  const __m256 near = Polynomial(kErfcNear, _mm256_mul_ps(_mm256_sub_ps(zc, Set(2.25f)), Set(1.0f / 1.75f)));
  const __m256 far = Polynomial(kErfcFar, _mm256_mul_ps(_mm256_sub_ps(zc, Set(7.0f)), Set(1.0f / 3.0f)));
  const __m256 r = _mm256_blendv_ps(near, far, _mm256_cmp_ps(zc, Set(4.0f), _CMP_GE_OQ));
  const __m256 e_hi = Exp(_mm256_xor_ps(sq_hi, Set(-0.0f)));
  return _mm256_mul_ps(_mm256_fnmadd_ps(e_hi, sq_lo, e_hi), r);
}

// erfc(z) for z >= 1, z^2 split by an FMA. Beyond 11, e^-z^2 is 0 (and z^2 must not
// overflow).
inline __m256 ErfcAtLeastOne(__m256 z) {
  z = _mm256_min_ps(Set(11.0f), z);
  const __m256 hi = _mm256_mul_ps(z, z);
  return ErfcFromSquare(z, hi, _mm256_fmsub_ps(z, z, hi));
}

// erf(|x|) with |x|'s sign: the Taylor series below 1, 1 - erfc above (1 from 4 on,
// where erfc < 2^-25).
inline __m256 Erf(__m256 x) {
  const __m256 a = Abs(x);
  const __m256 small = _mm256_mul_ps(a, Polynomial(kErfTaylor, _mm256_mul_ps(a, a)));
  __m256 y = _mm256_sub_ps(Set(1.0f), ErfcAtLeastOne(a));
  y = _mm256_blendv_ps(y, Set(1.0f), _mm256_cmp_ps(a, Set(4.0f), _CMP_GE_OQ));
  y = _mm256_blendv_ps(y, small, _mm256_cmp_ps(a, Set(1.0f), _CMP_LT_OQ));
  return _mm256_or_ps(y, _mm256_and_ps(x, Set(-0.0f)));
}

// x Phi(x) with Phi(x) = (1 + erf(z)) / 2, z = x / sqrt(2); for z <= -0.5 as erfc(-z) / 2,
// which keeps its relative accuracy in the tail instead of cancelling against 1.
inline __m256 GeluErf(__m256 x) {
  const __m256 z = _mm256_mul_ps(x, Set(0.707106781186547524f));
  // One erfc for both sides, from z^2 = x^2 / 2 of the exact x (x / sqrt(2) is rounded,
  // and e^-z^2 would amplify that by 2 z^2): Phi = 1 - erfc(z) / 2 from z >= 1 on,
  // erfc(-z) / 2 up to z = -0.5; between, 1/2 (1 + erf(z)) by erf's Taylor series.
  const __m256 a = _mm256_min_ps(Set(15.5f), Abs(x));
  const __m256 sq = _mm256_mul_ps(a, a);
  const __m256 sq_lo = _mm256_fmsub_ps(a, a, sq);
  const __m256 half_erfc =
      _mm256_mul_ps(Set(0.5f), ErfcFromSquare(_mm256_mul_ps(a, Set(0.707106781186547524f)),
                                              _mm256_mul_ps(Set(0.5f), sq), _mm256_mul_ps(Set(0.5f), sq_lo)));
  const __m256 erf_small = _mm256_mul_ps(z, Polynomial(kErfTaylor, _mm256_mul_ps(z, z)));
  __m256 phi = _mm256_mul_ps(Set(0.5f), _mm256_add_ps(Set(1.0f), erf_small));
  phi = _mm256_blendv_ps(phi, _mm256_sub_ps(Set(1.0f), half_erfc), _mm256_cmp_ps(z, Set(1.0f), _CMP_GE_OQ));
  phi = _mm256_blendv_ps(phi, half_erfc, _mm256_cmp_ps(z, Set(-0.5f), _CMP_LE_OQ));
  return _mm256_mul_ps(x, phi);
}

inline __m256 LoadTail(const float* p, int64_t n, float pad) {
  float buf[kLanes];
  for (int64_t i = 0; i < kLanes; ++i) buf[i] = i < n ? p[i] : pad;
  return _mm256_loadu_ps(buf);
}

inline void StoreTail(float* p, __m256 v, int64_t n) {
  float buf[kLanes];
  _mm256_storeu_ps(buf, v);
  for (int64_t i = 0; i < n; ++i) p[i] = buf[i];
}

template <__m256 (*F)(__m256)>
void ArrayOf(const float* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) _mm256_storeu_ps(y + i, F(_mm256_loadu_ps(x + i)));
  if (i < n) StoreTail(y + i, F(LoadTail(x + i, n - i, 1.0f)), n - i);
}

float HorizontalMax(__m256 v) {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_shuffle_ps(m, m, 1));
  return _mm_cvtss_f32(m);
}

float MaxOf(const float* x, int64_t n) {
  __m256 m0 = Set(-__builtin_inff()), m1 = m0;
  int64_t i = 0;
  for (; i + 2 * kLanes <= n; i += 2 * kLanes) {
    m0 = _mm256_max_ps(m0, _mm256_loadu_ps(x + i));
    m1 = _mm256_max_ps(m1, _mm256_loadu_ps(x + i + kLanes));
  }
  for (; i + kLanes <= n; i += kLanes) m0 = _mm256_max_ps(m0, _mm256_loadu_ps(x + i));
  if (i < n) m1 = _mm256_max_ps(m1, LoadTail(x + i, n - i, -__builtin_inff()));
  return HorizontalMax(_mm256_max_ps(m0, m1));
}

inline __m256d AddAsDoubles(__m256d acc, __m256 v) {
  acc = _mm256_add_pd(acc, _mm256_cvtps_pd(_mm256_castps256_ps128(v)));
  return _mm256_add_pd(acc, _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)));
}

double ExpShiftedSum(const float* x, float shift, float* y, int64_t n) {
  const __m256 s = Set(shift);
  __m256d acc0 = _mm256_setzero_pd(), acc1 = _mm256_setzero_pd();
  int64_t i = 0;
  for (; i + 2 * kLanes <= n; i += 2 * kLanes) {
    const __m256 e0 = Exp(_mm256_sub_ps(_mm256_loadu_ps(x + i), s));
    const __m256 e1 = Exp(_mm256_sub_ps(_mm256_loadu_ps(x + i + kLanes), s));
    _mm256_storeu_ps(y + i, e0);
    _mm256_storeu_ps(y + i + kLanes, e1);
    acc0 = AddAsDoubles(acc0, e0);
    acc1 = AddAsDoubles(acc1, e1);
  }
  for (; i + kLanes <= n; i += kLanes) {
    const __m256 e = Exp(_mm256_sub_ps(_mm256_loadu_ps(x + i), s));
    _mm256_storeu_ps(y + i, e);
    acc0 = AddAsDoubles(acc0, e);
  }
  if (i < n) {
    const __m256 e = Exp(_mm256_sub_ps(LoadTail(x + i, n - i, 0.0f), s));
    StoreTail(y + i, e, n - i);
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256 valid = _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n - i)), lane));
    acc1 = AddAsDoubles(acc1, _mm256_and_ps(e, valid));
  }
  const __m256d acc = _mm256_add_pd(acc0, acc1);
  __m128d h = _mm_add_pd(_mm256_castpd256_pd128(acc), _mm256_extractf128_pd(acc, 1));
  h = _mm_add_sd(h, _mm_unpackhi_pd(h, h));
  return _mm_cvtsd_f64(h);
}

void ExpSub(const float* x, const float* shift, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    _mm256_storeu_ps(y + i, Exp(_mm256_sub_ps(_mm256_loadu_ps(x + i), _mm256_loadu_ps(shift + i))));
  }
  if (i < n)
    StoreTail(y + i, Exp(_mm256_sub_ps(LoadTail(x + i, n - i, 0.0f), LoadTail(shift + i, n - i, 0.0f))), n - i);
}

constexpr VectorMath kAvx2Math = {
    .exp = ArrayOf<Exp>,
    .log = ArrayOf<Log>,
    .tanh = ArrayOf<Tanh>,
    .erf = ArrayOf<Erf>,
    .sigmoid = ArrayOf<Sigmoid>,
    .silu = ArrayOf<Silu>,
    .softplus = ArrayOf<Softplus>,
    .gelu_tanh = ArrayOf<GeluTanh>,
    .gelu_erf = ArrayOf<GeluErf>,
    .max = MaxOf,
    .exp_shifted_sum = ExpShiftedSum,
    .exp_sub = ExpSub,
};

}  // namespace

const VectorMath& VectorMathAvx2() { return kAvx2Math; }

}  // namespace tsr

// AVX2 loops of the f32 optimizer updates (see optimizer_rows.h). Momentum: in f32, eight
// elements per vector, one fused multiply-add per step. The others: four elements per
// vector, widened to double, each operation of the reference's expression one vector
// instruction in the same order, rounded once back to f32 (vcvtpd2ps rounds to nearest
// as the scalar cast does; vsqrtpd and vdivpd round correctly as std::sqrt and / do).
// The tail (fewer than four elements) runs the portable loops. Compiled with -mavx2 -mfma:
// contraction into fused multiply-adds is switched off below, since a fused a * b + c
// rounds once where the reference rounds twice. optimizer_kernels.cc calls these only
// when the CPU has AVX2.
//
// Everything here has internal linkage apart from Avx2OptimizerRows.
#include <immintrin.h>

#include <cstdint>

#include "kernels/cpu/optimizer_rows.h"

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

namespace tsr {
namespace optimizer_internal {

namespace {

constexpr int64_t kLanes = 4;

inline __m256d Load(const float* p) { return _mm256_cvtps_pd(_mm_loadu_ps(p)); }
inline void Store(float* p, __m256d x) { _mm_storeu_ps(p, _mm256_cvtpd_ps(x)); }
inline __m256d Splat(double x) { return _mm256_set1_pd(x); }

void Sgd(const SgdParams& h, const float* p, const float* g, int64_t n, float* new_p) {
  const __m256d lr = Splat(h.lr), wd = Splat(h.weight_decay);
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    const __m256d pi = Load(p + i);
    // pi - lr * (g + wd * pi)
    Store(new_p + i, _mm256_sub_pd(pi, _mm256_mul_pd(lr, _mm256_add_pd(Load(g + i), _mm256_mul_pd(wd, pi)))));
  }
  PortableOptimizerRows().sgd(h, p + i, g + i, n - i, new_p + i);
}

// In f32, eight elements per vector, each step one fused multiply-add (optimizer_rows.h);
// the portable loop's std::fma gives the same bits for the tail.
void Momentum(const MomentumParams& h, const float* p, const float* v, const float* g, int64_t n, float* new_p,
              float* new_v) {
  constexpr int64_t kFloatLanes = 8;
  const __m256 neg_lr = _mm256_set1_ps(-h.lr), mu = _mm256_set1_ps(h.momentum), wd = _mm256_set1_ps(h.weight_decay);
  int64_t i = 0;
  for (; i + kFloatLanes <= n; i += kFloatLanes) {
    const __m256 pi = _mm256_loadu_ps(p + i);
    const __m256 gi = _mm256_fmadd_ps(wd, pi, _mm256_loadu_ps(g + i));
    const __m256 vi = _mm256_fmadd_ps(mu, _mm256_loadu_ps(v + i), gi);
    // Nesterov steps along gi + mu * vi, plain momentum along vi.
    const __m256 step = h.nesterov ? _mm256_fmadd_ps(mu, vi, gi) : vi;
    _mm256_storeu_ps(new_v + i, vi);
    _mm256_storeu_ps(new_p + i, _mm256_fmadd_ps(neg_lr, step, pi));
  }
  PortableOptimizerRows().momentum(h, p + i, v + i, g + i, n - i, new_p + i, new_v + i);
}

void Adam(const AdamParams& h, const float* p, const float* m, const float* v, const float* g, int64_t n, float* new_p,
          float* new_m, float* new_v) {
  const __m256d lr = Splat(h.lr), wd = Splat(h.weight_decay), decay = Splat(h.lr * h.weight_decay);
  const __m256d b1 = Splat(h.beta1), b2 = Splat(h.beta2), c1 = Splat(1 - h.beta1), c2 = Splat(1 - h.beta2);
  const __m256d corr1 = Splat(h.correction1), corr2 = Splat(h.correction2), eps = Splat(h.epsilon);
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    __m256d pi = Load(p + i);
    __m256d gi = Load(g + i);
    if (h.decoupled) {
      pi = _mm256_sub_pd(pi, _mm256_mul_pd(decay, pi));  // pi - (lr * wd) * pi
    } else {
      gi = _mm256_add_pd(gi, _mm256_mul_pd(wd, pi));
    }
    const __m256d mi = _mm256_add_pd(_mm256_mul_pd(b1, Load(m + i)), _mm256_mul_pd(c1, gi));
    const __m256d vi = _mm256_add_pd(_mm256_mul_pd(b2, Load(v + i)), _mm256_mul_pd(_mm256_mul_pd(c2, gi), gi));
    Store(new_m + i, mi);
    Store(new_v + i, vi);
    // pi - (lr * (mi / c1)) / (sqrt(vi / c2) + eps)
    const __m256d numerator = _mm256_mul_pd(lr, _mm256_div_pd(mi, corr1));
    const __m256d denominator = _mm256_add_pd(_mm256_sqrt_pd(_mm256_div_pd(vi, corr2)), eps);
    Store(new_p + i, _mm256_sub_pd(pi, _mm256_div_pd(numerator, denominator)));
  }
  PortableOptimizerRows().adam(h, p + i, m + i, v + i, g + i, n - i, new_p + i, new_m + i, new_v + i);
}

void RmsProp(const RmsPropParams& h, const float* p, const float* s, const float* g, int64_t n, float* new_p,
             float* new_s) {
  const __m256d lr = Splat(h.lr), rho = Splat(h.rho), c = Splat(1 - h.rho), eps = Splat(h.epsilon);
  const __m256d wd = Splat(h.weight_decay);
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    const __m256d pi = Load(p + i);
    const __m256d gi = _mm256_add_pd(Load(g + i), _mm256_mul_pd(wd, pi));
    const __m256d si = _mm256_add_pd(_mm256_mul_pd(rho, Load(s + i)), _mm256_mul_pd(_mm256_mul_pd(c, gi), gi));
    Store(new_s + i, si);
    // pi - (lr * gi) / (sqrt(si) + eps)
    const __m256d step = _mm256_div_pd(_mm256_mul_pd(lr, gi), _mm256_add_pd(_mm256_sqrt_pd(si), eps));
    Store(new_p + i, _mm256_sub_pd(pi, step));
  }
  PortableOptimizerRows().rmsprop(h, p + i, s + i, g + i, n - i, new_p + i, new_s + i);
}

}  // namespace

const OptimizerRowKernels& Avx2OptimizerRows() {
  static constexpr OptimizerRowKernels kRows{&Sgd, &Momentum, &Adam, &RmsProp};
  return kRows;
}

}  // namespace optimizer_internal
}  // namespace tsr

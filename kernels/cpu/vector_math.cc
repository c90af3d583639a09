// Scalar vector math (see vector_math.h): std:: functions in double, rounded once to
// f32, the formulas of the reference kernels (the Gelus rearranged not to cancel); and
// the ISA dispatch.
#include "kernels/cpu/vector_math.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace tsr {

namespace {

template <typename G>
void Map(const float* x, float* y, int64_t n, G g) {
  for (int64_t i = 0; i < n; ++i) y[i] = static_cast<float>(g(static_cast<double>(x[i])));
}

double StableSigmoid(double x) {
  if (x >= 0) return 1.0 / (1.0 + std::exp(-x));
  const double e = std::exp(x);
  return e / (1.0 + e);
}

void ExpArray(const float* x, float* y, int64_t n) {
  Map(x, y, n, [](double v) { return std::exp(v); });
}
void LogArray(const float* x, float* y, int64_t n) {
  Map(x, y, n, [](double v) { return std::log(v); });
}
void TanhArray(const float* x, float* y, int64_t n) {
  Map(x, y, n, [](double v) { return std::tanh(v); });
}
void ErfArray(const float* x, float* y, int64_t n) {
  Map(x, y, n, [](double v) { return std::erf(v); });
}
void SigmoidArray(const float* x, float* y, int64_t n) { Map(x, y, n, StableSigmoid); }
void SiluArray(const float* x, float* y, int64_t n) {
  Map(x, y, n, [](double v) { return v * StableSigmoid(v); });
}
void SoftplusArray(const float* x, float* y, int64_t n) {
  Map(x, y, n, [](double v) { return std::isnan(v) ? v : std::max(v, 0.0) + std::log1p(std::exp(-std::fabs(v))); });
}
// The Gelus in forms that do not cancel for negative x (the reference's do, so in the
// far negative tail these are the more accurate): 1 + tanh(u) = 2 / (1 + e^-2u) and
// 1 + erf(-z) = erfc(z).
void GeluTanhArray(const float* x, float* y, int64_t n) {
  const double k = -2.0 * std::sqrt(2.0 / M_PI);
  Map(x, y, n, [k](double v) { return v / (1.0 + std::exp(k * (v + 0.044715 * v * v * v))); });
}
void GeluErfArray(const float* x, float* y, int64_t n) {
  Map(x, y, n, [](double v) { return 0.5 * v * std::erfc(-v / std::sqrt(2.0)); });
}

float MaxOf(const float* x, int64_t n) {
  float m = x[0];
  for (int64_t i = 1; i < n; ++i) m = std::max(m, x[i]);
  return m;
}

double ExpShiftedSum(const float* x, float shift, float* y, int64_t n) {
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    y[i] = std::exp(x[i] - shift);
    sum += y[i];
  }
  return sum;
}

void ExpSub(const float* x, const float* shift, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = std::exp(x[i] - shift[i]);
}

constexpr VectorMath kScalarMath = {
    .exp = ExpArray,
    .log = LogArray,
    .tanh = TanhArray,
    .erf = ErfArray,
    .sigmoid = SigmoidArray,
    .silu = SiluArray,
    .softplus = SoftplusArray,
    .gelu_tanh = GeluTanhArray,
    .gelu_erf = GeluErfArray,
    .max = MaxOf,
    .exp_shifted_sum = ExpShiftedSum,
    .exp_sub = ExpSub,
};

}  // namespace

const VectorMath& VectorMathFor(CpuIsa isa) {
  return SupportedCpuIsa(isa) >= CpuIsa::kAvx2 ? VectorMathAvx2() : kScalarMath;
}

}  // namespace tsr

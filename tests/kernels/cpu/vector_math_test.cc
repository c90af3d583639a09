// Tests of kernels/cpu/vector_math.h at every ISA level the machine supports: each
// function against double-precision std:: formulas over a sweep of f32 bit patterns
// (every 4099th, all exponents and signs; the bounds quoted in vector_math_avx2.cc were
// measured with every 1009th) plus special values, with a ulp bound; and the Softmax
// row primitives.
#include "kernels/cpu/vector_math.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "kernels/cpu/cpu_features.h"
#include "tests/kernels/cpu/cpu_test_util.h"

namespace tsr {
namespace {

using testing::SupportedIsas;

double StableSigmoid(double x) {
  if (x >= 0) return 1.0 / (1.0 + std::exp(-x));
  const double e = std::exp(x);
  return e / (1.0 + e);
}

struct Function {
  std::string name;
  VecUnaryFn VectorMath::*member;
  double (*exact)(double);
  double max_ulp;  // AVX2's bound; the scalar versions must be correctly rounded (0.5)
};

std::vector<Function> Functions() {
  return {
      {"exp", &VectorMath::exp, [](double x) { return std::exp(x); }, 1.0},
      {"log", &VectorMath::log, [](double x) { return std::log(x); }, 1.0},
      {"tanh", &VectorMath::tanh, [](double x) { return std::tanh(x); }, 1.5},
      {"sigmoid", &VectorMath::sigmoid, StableSigmoid, 2.5},
      {"silu", &VectorMath::silu, [](double x) { return x * StableSigmoid(x); }, 3.0},
      {"softplus", &VectorMath::softplus,
       [](double x) { return std::isnan(x) ? x : std::max(x, 0.0) + std::log1p(std::exp(-std::fabs(x))); }, 3.0},
      // The Gelus in forms that do not cancel for negative x: 1 + tanh(u) = 2 / (1 + e^-2u)
      // and 1 + erf(-z) = erfc(z).
      {"gelu_tanh", &VectorMath::gelu_tanh,
       [](double x) { return x / (1.0 + std::exp(-2.0 * std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x))); }, 2.5},
      {"erf", &VectorMath::erf, [](double x) { return std::erf(x); }, 3.0},
      {"gelu_erf", &VectorMath::gelu_erf, [](double x) { return 0.5 * x * std::erfc(-x / std::sqrt(2.0)); }, 4.0},
  };
}

float FromBits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// |got - want| in units of the last place of want rounded to f32 (of 2^-100 for
// smaller results).
double UlpError(float got, double want) {
  const double magnitude = std::max(std::fabs(static_cast<double>(static_cast<float>(want))), std::ldexp(1.0, -100));
  int exponent;
  std::frexp(magnitude, &exponent);  // magnitude in [2^(exponent-1), 2^exponent)
  const double ulp = std::ldexp(1.0, exponent - 24);
  return std::fabs(static_cast<double>(got) - want) / ulp;
}

std::vector<float> SweepInputs() {
  std::vector<float> x;
  for (uint64_t bits = 0; bits <= 0xFFFFFFFFu; bits += 4099) x.push_back(FromBits(static_cast<uint32_t>(bits)));
  const float inf = std::numeric_limits<float>::infinity();
  for (float v : {0.0f,          -0.0f,          inf,      -inf,       std::numeric_limits<float>::quiet_NaN(),
                  88.72283f,     88.72284f,      89.0f,    -87.33655f, -103.97208f,
                  -104.0f,       -110.0f,        -1000.0f, 1e-45f,     1e-38f,
                  1.0f,          -1.0f,          0.55f,    -0.55f,     std::nextafter(0.55f, 0.0f),
                  3.4028235e38f, -3.4028235e38f, 1e-20f,   -1e-20f}) {
    x.push_back(v);
  }
  return x;
}

class VectorMathTest : public ::testing::TestWithParam<CpuIsa> {};

TEST_P(VectorMathTest, FunctionsWithinUlpBound) {
  const CpuIsa isa = GetParam();
  if (SupportedCpuIsa(isa) != isa) GTEST_SKIP() << "CPU lacks " << CpuIsaName(isa);
  const VectorMath& math = VectorMathFor(isa);
  const std::vector<float> x = SweepInputs();
  std::vector<float> y(x.size());
  for (const Function& f : Functions()) {
    SCOPED_TRACE(absl::StrCat(f.name, " isa=", CpuIsaName(isa)));
    (math.*f.member)(x.data(), y.data(), static_cast<int64_t>(x.size()));
    const double bound = isa == CpuIsa::kScalar ? 0.5 : f.max_ulp;
    double worst = 0;
    float worst_x = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      const double want = f.exact(static_cast<double>(x[i]));
      const float want_f = static_cast<float>(want);
      if (std::isnan(want)) {
        ASSERT_TRUE(std::isnan(y[i])) << "x=" << x[i] << " got " << y[i];
      } else if (std::isinf(want_f)) {
        ASSERT_EQ(y[i], want_f) << "x=" << x[i];
      } else {
        const double err = UlpError(y[i], want);
        if (err > worst) {
          worst = err;
          worst_x = x[i];
        }
      }
    }
    EXPECT_LE(worst, bound) << "worst at x=" << worst_x;
    ::testing::Test::RecordProperty(absl::StrCat(f.name, "_", CpuIsaName(isa), "_max_ulp"), absl::StrCat(worst));
    std::printf("%s %s: max %.3f ulp (x=%g)\n", f.name.c_str(), std::string(CpuIsaName(isa)).c_str(), worst, worst_x);
  }
}

// Exact values the kernels depend on: overflow and underflow thresholds, specials.
TEST_P(VectorMathTest, SpecialValues) {
  const CpuIsa isa = GetParam();
  if (SupportedCpuIsa(isa) != isa) GTEST_SKIP() << "CPU lacks " << CpuIsaName(isa);
  const VectorMath& math = VectorMathFor(isa);
  const float inf = std::numeric_limits<float>::infinity();
  auto one = [](VecUnaryFn fn, float v) {
    float out;
    fn(&v, &out, 1);
    return out;
  };
  EXPECT_EQ(one(math.exp, 89.0f), inf);
  EXPECT_EQ(one(math.exp, inf), inf);
  EXPECT_EQ(one(math.exp, -inf), 0.0f);
  EXPECT_EQ(one(math.exp, -1000.0f), 0.0f);
  EXPECT_EQ(one(math.exp, -104.0f), static_cast<float>(std::exp(-104.0)));  // subnormal
  EXPECT_EQ(one(math.exp, 0.0f), 1.0f);
  EXPECT_EQ(one(math.log, 0.0f), -inf);
  EXPECT_EQ(one(math.log, -0.0f), -inf);
  EXPECT_TRUE(std::isnan(one(math.log, -1.0f)));
  EXPECT_EQ(one(math.log, inf), inf);
  EXPECT_EQ(one(math.log, 1.0f), 0.0f);
  EXPECT_EQ(one(math.tanh, inf), 1.0f);
  EXPECT_EQ(one(math.tanh, -inf), -1.0f);
  EXPECT_TRUE(std::signbit(one(math.tanh, -0.0f)));
  EXPECT_EQ(one(math.sigmoid, -inf), 0.0f);
  EXPECT_EQ(one(math.sigmoid, inf), 1.0f);
  EXPECT_TRUE(std::isnan(one(math.silu, -inf)));  // -inf * 0, as the reference
  EXPECT_EQ(one(math.softplus, inf), inf);
  EXPECT_EQ(one(math.softplus, -inf), 0.0f);
  EXPECT_EQ(one(math.gelu_tanh, inf), inf);
  EXPECT_TRUE(std::isnan(one(math.gelu_tanh, -inf)));
  EXPECT_EQ(one(math.erf, inf), 1.0f);
  EXPECT_EQ(one(math.erf, -inf), -1.0f);
  for (auto fn : {math.exp, math.log, math.tanh, math.sigmoid, math.silu, math.softplus, math.gelu_tanh, math.erf,
                  math.gelu_erf}) {
    EXPECT_TRUE(std::isnan(one(fn, std::numeric_limits<float>::quiet_NaN())));
  }
}

// Arrays of every length up to 40 (vector bodies and tails), in place too: each
// element equals the single-element result.
TEST_P(VectorMathTest, TailsMatchSingleElements) {
  const CpuIsa isa = GetParam();
  if (SupportedCpuIsa(isa) != isa) GTEST_SKIP() << "CPU lacks " << CpuIsaName(isa);
  const VectorMath& math = VectorMathFor(isa);
  const uint32_t seed = 7;
  SCOPED_TRACE(absl::StrCat("seed=", seed));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-20.0f, 20.0f);
  for (const Function& f : Functions()) {
    const VecUnaryFn fn = math.*f.member;
    for (int64_t n = 1; n <= 40; ++n) {
      std::vector<float> x(static_cast<size_t>(n));
      for (float& v : x) v = dist(rng);
      std::vector<float> y = x;
      fn(y.data(), y.data(), n);  // in place
      for (int64_t i = 0; i < n; ++i) {
        float single;
        fn(&x[i], &single, 1);
        ASSERT_EQ(std::memcmp(&single, &y[i], 4), 0) << f.name << " n=" << n << " i=" << i;
      }
    }
  }
}

TEST_P(VectorMathTest, SoftmaxPrimitives) {
  const CpuIsa isa = GetParam();
  if (SupportedCpuIsa(isa) != isa) GTEST_SKIP() << "CPU lacks " << CpuIsaName(isa);
  const VectorMath& math = VectorMathFor(isa);
  for (uint32_t seed : {1u, 2u, 3u}) {
    std::mt19937 rng(seed);
    for (int64_t n : {1, 3, 8, 17, 1023}) {
      SCOPED_TRACE(absl::StrCat("seed=", seed, " n=", n));
      std::vector<float> x(static_cast<size_t>(n)), shift(static_cast<size_t>(n)), y(static_cast<size_t>(n));
      std::uniform_real_distribution<float> dist(-30.0f, 30.0f);
      for (float& v : x) v = dist(rng);
      for (float& v : shift) v = dist(rng);
      float want_max = x[0];
      for (float v : x) want_max = std::max(want_max, v);
      EXPECT_EQ(math.max(x.data(), n), want_max);
      const double sum = math.exp_shifted_sum(x.data(), want_max, y.data(), n);
      double want_sum = 0;
      for (int64_t i = 0; i < n; ++i) {
        const double e = std::exp(static_cast<double>(x[i] - want_max));
        EXPECT_NEAR(y[i], e, 3e-7 * e);
        want_sum += y[i];
      }
      EXPECT_NEAR(sum, want_sum, 1e-12 * want_sum);
      math.exp_sub(x.data(), shift.data(), y.data(), n);
      for (int64_t i = 0; i < n; ++i) {
        const double e = std::exp(static_cast<double>(x[i] - shift[i]));
        EXPECT_NEAR(y[i], e, 3e-7 * e);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllIsas, VectorMathTest, ::testing::Values(CpuIsa::kScalar, CpuIsa::kAvx2, CpuIsa::kAvx512),
                         [](const ::testing::TestParamInfo<CpuIsa>& info) {
                           return std::string(CpuIsaName(info.param));
                         });

}  // namespace
}  // namespace tsr

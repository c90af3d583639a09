// Gradients of the ONNX math and activation ops added with graph/autodiff/math_grads.cc
// (and the new entries of elementwise_grads.cc and activation_grads.cc), checked against
// central differences in f64 on randomized shapes (fixed, printed seeds). Inputs keep
// clear of each op's kinks and domain edges, where no derivative exists.
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/graph/autodiff/gradient_check_util.h"

namespace tsr {
namespace {

using testing::ExpectGradientsMatchNumeric;
using testing::GradCheck;
using testing::RandomF64;

// Uniform in [lo, hi) but at least `gap` away from every point of `kinks`.
Tensor RandomAvoiding(std::mt19937& rng, const Shape& shape, double lo, double hi, const std::vector<double>& kinks,
                      double gap = 0.05) {
  Tensor t(DType::kF64, shape);
  std::uniform_real_distribution<double> dist(lo, hi);
  for (double& x : t.flat<double>()) {
    bool near = true;
    while (near) {
      x = dist(rng);
      near = false;
      for (double k : kinks) near = near || std::fabs(x - k) < gap;
    }
  }
  return t;
}

// A shape of rank 1-4 with dims 1-4.
Shape RandomShape(std::mt19937& rng) {
  std::uniform_int_distribution<int> rank(1, 4), dim(1, 4);
  std::vector<int64_t> dims(rank(rng));
  for (int64_t& d : dims) d = dim(rng);
  return Shape(dims);
}

TEST(MathGradsTest, TrigonometricAndHyperbolic) {
  uint32_t seed = 1000;
  struct Case {
    const char* op;
    double lo, hi;
  };
  for (const Case& c : {Case{"Sin", -3, 3}, Case{"Cos", -3, 3}, Case{"Tan", -1.2, 1.2}, Case{"Asin", -0.9, 0.9},
                        Case{"Acos", -0.9, 0.9}, Case{"Atan", -3, 3}, Case{"Sinh", -2, 2}, Case{"Cosh", -2, 2},
                        Case{"Asinh", -3, 3}, Case{"Acosh", 1.1, 4}, Case{"Atanh", -0.9, 0.9}}) {
    std::mt19937 rng(seed);
    ExpectGradientsMatchNumeric({c.op, {RandomF64(rng, RandomShape(rng), c.lo, c.hi)}, {}, {0}}, seed++);
  }
}

TEST(MathGradsTest, PiecewiseConstantOpsHaveZeroGradient) {
  uint32_t seed = 1100;
  for (const char* op : {"Floor", "Ceil", "Round", "Sign"}) {
    std::mt19937 rng(seed);
    // Jumps at the integers (Floor, Ceil), the halves (Round) and 0 (Sign).
    const Tensor x =
        RandomAvoiding(rng, RandomShape(rng), -3, 3, {-3, -2.5, -2, -1.5, -1, -0.5, 0, 0.5, 1, 1.5, 2, 2.5});
    ExpectGradientsMatchNumeric({op, {x}, {}, {0}}, seed++);
  }
}

TEST(MathGradsTest, FloatModBroadcasts) {
  uint32_t seed = 1200;
  const std::vector<std::pair<Shape, Shape>> shapes = {{{3, 4}, {3, 4}}, {{2, 3}, {3}}, {{4}, {}}, {{1, 3}, {2, 1}}};
  for (const auto& [sa, sb] : shapes) {
    std::mt19937 rng(seed);
    // Dividends in [-5, 5), divisors of either sign away from 0: a/b crosses no integer
    // within the difference step unless a sample lands on one (the seeds avoid it).
    Tensor a = RandomF64(rng, sa, -5, 5);
    Tensor b = RandomAvoiding(rng, sb, -2, 2, {0}, 0.5);
    ExpectGradientsMatchNumeric({"Mod", {a, b}, {{"fmod", AttrValue::Int(1)}}, {0, 1}}, seed++);
  }
}

TEST(MathGradsTest, PReluRandomBroadcastShapes) {
  for (uint32_t seed = 1300; seed < 1310; ++seed) {
    std::mt19937 rng(seed);
    const Shape x_shape = RandomShape(rng);
    // The slope: a suffix of x's dims (possibly empty: a scalar), each kept or set to 1.
    std::uniform_int_distribution<int> keep(0, x_shape.rank());
    std::bernoulli_distribution ones(0.4);
    std::vector<int64_t> slope_dims;
    for (int d = x_shape.rank() - keep(rng); d < x_shape.rank(); ++d) {
      slope_dims.push_back(ones(rng) ? 1 : x_shape.dim(d));
    }
    SCOPED_TRACE(absl::StrCat("x ", x_shape.ToString(), " slope ", Shape(slope_dims).ToString()));
    ExpectGradientsMatchNumeric(
        {"PRelu", {RandomF64(rng, x_shape, -2, 2), RandomF64(rng, Shape(slope_dims), -1, 1)}, {}, {0, 1}}, seed);
  }
}

TEST(MathGradsTest, Activations) {
  uint32_t seed = 1400;
  struct Case {
    const char* op;
    AttrMap attrs;
    double lo, hi;
    std::vector<double> kinks;
  };
  const std::vector<Case> cases = {
      {"Elu", {{"alpha", AttrValue::Float(0.7)}}, -3, 3, {0}},
      {"Elu", {}, -3, 3, {0}},
      {"Selu", {}, -3, 3, {0}},
      {"Celu", {{"alpha", AttrValue::Float(0.6)}}, -3, 3, {0}},
      {"HardSigmoid", {}, -4, 4, {-2.5, 2.5}},
      {"HardSigmoid", {{"alpha", AttrValue::Float(0.4)}, {"beta", AttrValue::Float(0.3)}}, -3, 3, {-0.75, 1.75}},
      {"HardSwish", {}, -5, 5, {-3, 3}},
      {"Softsign", {}, -3, 3, {}},
      {"ThresholdedRelu", {{"alpha", AttrValue::Float(0.3)}}, -2, 2, {0.3}},
      {"Shrink", {{"lambd", AttrValue::Float(0.5)}, {"bias", AttrValue::Float(0.2)}}, -2, 2, {-0.5, 0.5}},
  };
  for (const Case& c : cases) {
    std::mt19937 rng(seed);
    ExpectGradientsMatchNumeric({c.op, {RandomAvoiding(rng, RandomShape(rng), c.lo, c.hi, c.kinks)}, c.attrs, {0}},
                                seed++);
  }
}

}  // namespace
}  // namespace tsr

// Gradients of BatchNormalization (training form, through the batch statistics;
// inference form, through scale, B, X and the given mean and variance) and
// LayerNormalization (X, Scale, B; several axes and broadcast parameters) against
// central differences in f64, on randomized values with printed seeds.
#include <cstdint>
#include <optional>
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

// X of `x`; parameters of [C] (C = 1 for a 1-D X).
std::vector<std::optional<Tensor>> BatchNormInputs(std::mt19937& rng, const Shape& x) {
  const Shape c({x.rank() == 1 ? 1 : x.dim(1)});
  return {RandomF64(rng, x, -2, 2), RandomF64(rng, c, 0.5, 2), RandomF64(rng, c), RandomF64(rng, c),
          RandomF64(rng, c, 0.5, 2)};
}

TEST(NormalizationGradsTest, BatchNormalizationTrainingThroughBatchStatistics) {
  uint32_t seed = 4000;
  for (const Shape& x : {Shape({4, 3, 2, 3}), Shape({5, 2}), Shape({6}), Shape({2, 3, 5}), Shape({3, 2, 2, 2, 2})}) {
    SCOPED_TRACE(x.ToString());
    std::mt19937 rng(seed);
    const AttrMap attrs = {{"training_mode", AttrValue::Int(1)}, {"epsilon", AttrValue::Float(1e-3)}};
    ExpectGradientsMatchNumeric(GradCheck{"BatchNormalization", BatchNormInputs(rng, x), attrs, {0, 1, 2}}, seed++);
  }
}

TEST(NormalizationGradsTest, BatchNormalizationInference) {
  uint32_t seed = 4100;
  for (const Shape& x : {Shape({2, 3, 2, 3}), Shape({5, 2}), Shape({6}), Shape({2, 3, 4})}) {
    SCOPED_TRACE(x.ToString());
    std::mt19937 rng(seed);
    ExpectGradientsMatchNumeric(
        GradCheck{
            "BatchNormalization", BatchNormInputs(rng, x), {{"epsilon", AttrValue::Float(0.01)}}, {0, 1, 2, 3, 4}},
        seed++);
  }
}

TEST(NormalizationGradsTest, LayerNormalization) {
  struct Case {
    Shape x;
    int64_t axis;
    Shape scale;
    std::optional<Shape> bias;
  };
  const Case cases[] = {
      {{3, 5}, -1, {5}, Shape({5})},        {{2, 3, 4}, -1, {4}, std::nullopt}, {{2, 3, 4}, 1, {3, 4}, Shape({3, 4})},
      {{2, 3, 4}, -2, {4}, Shape({1, 4})},  // broadcast onto the normalized [3, 4]
      {{2, 3, 4}, 0, {2, 3, 4}, Shape({})}, {{4, 1, 6}, 2, {1}, Shape({6})},
  };
  uint32_t seed = 4200;
  for (const Case& c : cases) {
    SCOPED_TRACE(absl::StrCat(c.x.ToString(), " axis=", c.axis));
    std::mt19937 rng(seed);
    std::vector<std::optional<Tensor>> inputs = {RandomF64(rng, c.x, -2, 2), RandomF64(rng, c.scale, 0.5, 2)};
    std::vector<int> wrt = {0, 1};
    if (c.bias) {
      inputs.push_back(RandomF64(rng, *c.bias));
      wrt.push_back(2);
    }
    const AttrMap attrs = {{"axis", AttrValue::Int(c.axis)}, {"epsilon", AttrValue::Float(1e-3)}};
    ExpectGradientsMatchNumeric(GradCheck{"LayerNormalization", inputs, attrs, wrt}, seed++);
  }
}

}  // namespace
}  // namespace tsr

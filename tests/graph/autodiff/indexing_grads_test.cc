// Gradients of Gather (any axis, any index rank, repeated and negative indices),
// Slice (positive, negative and skipping steps, subsets of axes), constant-mode Pad
// (padding, cropping, axes, the constant itself) and Tile against central differences
// in f64, on randomized values with printed seeds.
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/graph/autodiff/gradient_check_util.h"

namespace tsr {
namespace {

using testing::ExpectGradientsMatchNumeric;
using testing::GradCheck;
using testing::RandomF64;

Tensor Ints(const std::vector<int64_t>& values) {
  return Tensor::FromVector<int64_t>(Shape({static_cast<int64_t>(values.size())}), values);
}

TEST(IndexingGradsTest, Gather) {
  struct Case {
    Shape data;
    Tensor indices;
    int64_t axis;
  };
  const Case cases[] = {
      {{5, 3}, Tensor::FromVector<int64_t>(Shape({2, 3}), {0, 4, 4, -1, 2, 0}), 0},
      {{5, 3}, Tensor::FromVector<int32_t>(Shape({4}), {2, 2, -3, 1}), 1},
      {{2, 4, 3}, Tensor::Scalar<int64_t>(-2), -1},
      {{2, 4, 3}, Tensor::FromVector<int64_t>(Shape({3, 1, 2}), {3, 0, 3, 3, -4, 1}), 1},
      {{4}, Tensor::FromVector<int64_t>(Shape({0}), {}), 0},
  };
  uint32_t seed = 5000;
  for (const Case& c : cases) {
    SCOPED_TRACE(absl::StrCat(c.data.ToString(), " indices", c.indices.shape().ToString(), " axis=", c.axis));
    std::mt19937 rng(seed);
    ExpectGradientsMatchNumeric(
        GradCheck{"Gather", {RandomF64(rng, c.data), c.indices}, {{"axis", AttrValue::Int(c.axis)}}, {0}}, seed++);
  }
}

TEST(IndexingGradsTest, Slice) {
  struct Case {
    std::vector<int64_t> starts, ends;
    std::optional<std::vector<int64_t>> axes, steps;
  };
  const Case cases[] = {
      {{1, 0}, {4, 5}, std::nullopt, std::nullopt},
      {{0, 1}, {6, 5}, std::vector<int64_t>{0, 1}, std::vector<int64_t>{2, 3}},
      {{-1}, {-100}, std::vector<int64_t>{0}, std::vector<int64_t>{-2}},
      {{4, -2}, {0, 0}, std::vector<int64_t>{-1, 0}, std::vector<int64_t>{-1, -3}},
      {{2}, {2}, std::vector<int64_t>{1}, std::nullopt},  // empty
      {{-4}, {100}, std::vector<int64_t>{1}, std::vector<int64_t>{3}},
  };
  uint32_t seed = 5100;
  for (const Case& c : cases) {
    std::mt19937 rng(seed);
    std::vector<std::optional<Tensor>> inputs = {RandomF64(rng, {6, 5}), Ints(c.starts), Ints(c.ends)};
    inputs.push_back(c.axes ? std::optional<Tensor>(Ints(*c.axes)) : std::nullopt);
    inputs.push_back(c.steps ? std::optional<Tensor>(Ints(*c.steps)) : std::nullopt);
    ExpectGradientsMatchNumeric(GradCheck{"Slice", inputs, {}, {0}}, seed++);
  }
}

TEST(IndexingGradsTest, ConstantPad) {
  struct Case {
    std::vector<int64_t> pads;
    std::optional<std::vector<int64_t>> axes;
  };
  const Case cases[] = {
      {{1, 0, 2, 3}, std::nullopt}, {{-1, 2, 1, -2}, std::nullopt},  // crop the first rows and last columns
      {{0, 0, 0, 0}, std::nullopt}, {{2, -1}, std::vector<int64_t>{-1}}, {{-2, 1}, std::vector<int64_t>{0}},
  };
  uint32_t seed = 5200;
  for (const Case& c : cases) {
    std::mt19937 rng(seed);
    std::vector<std::optional<Tensor>> inputs = {RandomF64(rng, {4, 5}), Ints(c.pads), Tensor::Scalar<double>(0.7)};
    if (c.axes) inputs.push_back(Ints(*c.axes));
    ExpectGradientsMatchNumeric(GradCheck{"Pad", inputs, {}, {0, 2}}, seed++);
  }
}

TEST(IndexingGradsTest, Tile) {
  uint32_t seed = 5300;
  for (const auto& [shape, repeats] : std::vector<std::pair<Shape, std::vector<int64_t>>>{
           {{2, 3}, {2, 3}}, {{3}, {4}}, {{2, 1, 3}, {1, 4, 2}}, {{2, 2}, {1, 1}}, {{2, 3}, {0, 2}}}) {
    std::mt19937 rng(seed);
    ExpectGradientsMatchNumeric(GradCheck{"Tile", {RandomF64(rng, shape), Ints(repeats)}, {}, {0}}, seed++);
  }
}

}  // namespace
}  // namespace tsr

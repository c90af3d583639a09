// Gradients of Gather (any axis, any index rank, repeated and negative indices),
// Slice (positive, negative and skipping steps, subsets of axes), constant-mode Pad
// (padding, cropping, axes, the constant itself), reflect/edge/wrap Pad, Tile,
// GatherElements and ScatterElements ('none' and 'add') against central differences
// in f64, on randomized values with printed seeds.
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/autodiff/gradients.h"
#include "graph/builder/graph_builder.h"
#include "graph/builder/ops.h"
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

// Reflect, edge and wrap copy elements several times (wrap and edge more than once
// per side when the pad exceeds the axis); negative pads crop.
TEST(IndexingGradsTest, ReflectEdgeWrapPad) {
  struct Case {
    std::string mode;
    std::vector<int64_t> pads;
    std::optional<std::vector<int64_t>> axes;
  };
  const Case cases[] = {
      {"reflect", {2, 1, 1, 4}, std::nullopt}, {"reflect", {3, 0}, std::vector<int64_t>{0}},
      {"edge", {2, 3, 0, 1}, std::nullopt},    {"edge", {4, -1}, std::vector<int64_t>{-1}},
      {"wrap", {5, 2, 1, 7}, std::nullopt},    {"wrap", {-1, 2, 1, -2}, std::nullopt},
      {"reflect", {0, 0, 0, 0}, std::nullopt},
  };
  uint32_t seed = 5250;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.mode);
    std::mt19937 rng(seed);
    std::vector<std::optional<Tensor>> inputs = {RandomF64(rng, {4, 5}), Ints(c.pads), std::nullopt};
    if (c.axes) inputs.push_back(Ints(*c.axes));
    ExpectGradientsMatchNumeric(GradCheck{"Pad", inputs, {{"mode", AttrValue::String(c.mode)}}, {0}}, seed++);
  }
}

TEST(IndexingGradsTest, GatherElementsAndScatterElements) {
  uint32_t seed = 5400;
  std::mt19937 rng(seed);
  // Repeated and negative indices along each axis.
  const Tensor rows = Tensor::FromVector<int64_t>(Shape({2, 3}), {0, -1, 2, 2, 0, 2});
  const Tensor cols = Tensor::FromVector<int32_t>(Shape({3, 2}), {1, 1, -3, 0, 2, 1});
  ExpectGradientsMatchNumeric({"GatherElements", {RandomF64(rng, {3, 3}), rows}, {{"axis", AttrValue::Int(0)}}, {0}},
                              seed++);
  ExpectGradientsMatchNumeric({"GatherElements", {RandomF64(rng, {3, 3}), cols}, {{"axis", AttrValue::Int(-1)}}, {0}},
                              seed++);
  // 'none' with distinct indices per column (repeats are undefined in ONNX), 'add'
  // with repeats.
  const Tensor distinct = Tensor::FromVector<int64_t>(Shape({2, 3}), {0, 2, 1, 2, 0, 0});
  ExpectGradientsMatchNumeric({"ScatterElements",
                               {RandomF64(rng, {3, 3}), distinct, RandomF64(rng, {2, 3})},
                               {{"axis", AttrValue::Int(0)}},
                               {0, 2}},
                              seed++);
  ExpectGradientsMatchNumeric({"ScatterElements",
                               {RandomF64(rng, {3, 3}), cols, RandomF64(rng, {3, 2})},
                               {{"axis", AttrValue::Int(1)}, {"reduction", AttrValue::String("add")}},
                               {0, 2}},
                              seed++);
}

TEST(IndexingGradsTest, ScatterElementsMulHasNoGradient) {
  GraphBuilder b;
  Output data = b.Input("data", DType::kF64, {2, 2});
  Output updates = b.Input("updates", DType::kF64, {1, 2});
  Output y = ops::ScatterElements(b, data, ops::Const(b, Tensor::FromVector<int64_t>(Shape({1, 2}), {0, 1})), updates,
                                  0, "mul");
  Gradients(b, ops::ReduceSum(b, y, std::vector<int64_t>{}, false), {data});
  absl::StatusOr<Graph> g = b.Finish();
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("reduction 'mul' has no gradient"), std::string::npos) << g.status();
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

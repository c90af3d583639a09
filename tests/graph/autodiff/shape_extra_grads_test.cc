// Gradients of Trilu, DepthToSpace (DCR and CRD), SpaceToDepth, ReverseSequence,
// Resize (nearest, linear, cubic, tf_crop_and_resize), GatherND, ScatterND ('none'
// and 'add') and Compress (with and without an axis) against central differences in
// f64, on random values with printed seeds.
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/dtype.h"
#include "gtest/gtest.h"
#include "tests/graph/autodiff/gradient_check_util.h"

namespace tsr {
namespace {

using testing::ExpectGradientsMatchNumeric;
using testing::GradCheck;
using testing::RandomF64;

Tensor Ints(Shape shape, const std::vector<int64_t>& values) { return Tensor::FromVector<int64_t>(shape, values); }
Tensor Ints(const std::vector<int64_t>& values) { return Ints(Shape({static_cast<int64_t>(values.size())}), values); }
Tensor Floats(const std::vector<float>& values) {
  return Tensor::FromVector<float>(Shape({static_cast<int64_t>(values.size())}), values);
}
Tensor Bools(const std::vector<bool>& values) {
  Tensor t(DType::kBool, Shape({static_cast<int64_t>(values.size())}));
  for (size_t i = 0; i < values.size(); ++i) t.data<bool>()[i] = values[i];
  return t;
}

TEST(ShapeExtraGradsTest, Trilu) {
  uint32_t seed = 7100;
  for (int upper : {0, 1}) {
    for (int64_t k : {-1, 0, 2}) {
      SCOPED_TRACE(absl::StrCat("upper=", upper, " k=", k));
      std::mt19937 rng(seed);
      ExpectGradientsMatchNumeric(GradCheck{"Trilu",
                                            {RandomF64(rng, Shape({2, 3, 4})), Tensor::Scalar<int64_t>(k)},
                                            {{"upper", AttrValue::Int(upper)}},
                                            {0}},
                                  seed++);
    }
  }
}

TEST(ShapeExtraGradsTest, DepthToSpaceAndSpaceToDepth) {
  uint32_t seed = 7200;
  for (const char* mode : {"DCR", "CRD"}) {
    SCOPED_TRACE(mode);
    std::mt19937 rng(seed);
    ExpectGradientsMatchNumeric(GradCheck{"DepthToSpace",
                                          {RandomF64(rng, Shape({2, 8, 2, 3}))},
                                          {{"blocksize", AttrValue::Int(2)}, {"mode", AttrValue::String(mode)}},
                                          {0}},
                                seed++);
  }
  std::mt19937 rng(seed);
  ExpectGradientsMatchNumeric(
      GradCheck{"SpaceToDepth", {RandomF64(rng, Shape({1, 2, 4, 6}))}, {{"blocksize", AttrValue::Int(2)}}, {0}}, seed);
}

TEST(ShapeExtraGradsTest, ReverseSequence) {
  std::mt19937 rng(7300);
  ExpectGradientsMatchNumeric(
      GradCheck{"ReverseSequence", {RandomF64(rng, Shape({4, 3, 2})), Ints({4, 0, 2})}, {}, {0}}, 7300);
  ExpectGradientsMatchNumeric(GradCheck{"ReverseSequence",
                                        {RandomF64(rng, Shape({3, 4})), Ints({1, 3, 4})},
                                        {{"time_axis", AttrValue::Int(1)}, {"batch_axis", AttrValue::Int(0)}},
                                        {0}},
                              7301);
}

TEST(ShapeExtraGradsTest, Resize) {
  struct Case {
    const char* mode;
    const char* coordinates;
    std::vector<float> scales;  // or sizes when empty
    std::vector<int64_t> sizes;
  };
  const Case cases[] = {
      {"nearest", "half_pixel", {1, 1, 2, 1.5f}, {}},     {"nearest", "asymmetric", {}, {1, 2, 2, 5}},
      {"linear", "half_pixel", {1, 1, 2, 2}, {}},         {"linear", "align_corners", {1, 1, 0.6f, 1.7f}, {}},
      {"linear", "pytorch_half_pixel", {}, {1, 2, 5, 1}}, {"cubic", "half_pixel", {1, 1, 2, 0.75f}, {}},
      {"cubic", "asymmetric", {}, {1, 2, 4, 7}},
  };
  uint32_t seed = 7400;
  for (const Case& c : cases) {
    SCOPED_TRACE(absl::StrCat(c.mode, " ", c.coordinates));
    std::mt19937 rng(seed);
    std::vector<std::optional<Tensor>> inputs = {RandomF64(rng, Shape({1, 2, 3, 4})), std::nullopt};
    if (c.sizes.empty()) {
      inputs.push_back(Floats(c.scales));
    } else {
      inputs.push_back(std::nullopt);
      inputs.push_back(Ints(c.sizes));
    }
    ExpectGradientsMatchNumeric(GradCheck{"Resize",
                                          inputs,
                                          {{"mode", AttrValue::String(c.mode)},
                                           {"coordinate_transformation_mode", AttrValue::String(c.coordinates)}},
                                          {0}},
                                seed++);
  }
  // tf_crop_and_resize: the extrapolated outputs do not depend on X.
  std::mt19937 rng(seed);
  ExpectGradientsMatchNumeric(
      GradCheck{"Resize",
                {RandomF64(rng, Shape({2, 4})), Floats({0, 0.2f, 1, 1.4f}), std::nullopt, Ints({2, 5})},
                {{"mode", AttrValue::String("linear")},
                 {"coordinate_transformation_mode", AttrValue::String("tf_crop_and_resize")},
                 {"extrapolation_value", AttrValue::Float(3)}},
                {0}},
      seed);
}

TEST(ShapeExtraGradsTest, GatherNDWithRepeatedTuples) {
  std::mt19937 rng(7500);
  ExpectGradientsMatchNumeric(
      GradCheck{"GatherND", {RandomF64(rng, Shape({3, 2, 4})), Ints(Shape({3, 2}), {0, 1, 2, 0, 0, 1})}, {}, {0}},
      7500);
  ExpectGradientsMatchNumeric(
      GradCheck{
          "GatherND", {RandomF64(rng, Shape({3, 4})), Ints(Shape({2, 2, 2}), {0, 0, 2, 3, -1, 1, 1, 2})}, {}, {0}},
      7501);
}

TEST(ShapeExtraGradsTest, ScatterND) {
  uint32_t seed = 7600;
  for (const char* reduction : {"none", "add"}) {
    SCOPED_TRACE(reduction);
    std::mt19937 rng(seed);
    ExpectGradientsMatchNumeric(
        GradCheck{"ScatterND",
                  {RandomF64(rng, Shape({4, 3})), Ints(Shape({2, 1}), {3, 1}), RandomF64(rng, Shape({2, 3}))},
                  {{"reduction", AttrValue::String(reduction)}},
                  {0, 2}},
        seed++);
  }
}

TEST(ShapeExtraGradsTest, Compress) {
  std::mt19937 rng(7700);
  ExpectGradientsMatchNumeric(
      GradCheck{
          "Compress", {RandomF64(rng, Shape({3, 4})), Bools({true, false, true})}, {{"axis", AttrValue::Int(0)}}, {0}},
      7700);
  ExpectGradientsMatchNumeric(
      GradCheck{"Compress", {RandomF64(rng, Shape({2, 3})), Bools({false, true, true, false, true})}, {}, {0}}, 7701);
}

}  // namespace
}  // namespace tsr

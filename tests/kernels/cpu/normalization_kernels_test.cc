// Tests of the cpu f32 LayerNormalization and BatchNormalization (inference and
// training) against the reference kernels at every ISA level, single- and
// multi-threaded: LayerNorm over axis -1, -2, 1 and 0 with full and broadcast
// Scale/B (B present or absent) and its Mean/InvStdDev outputs; BatchNorm of ranks
// 1..4 with batch 1, few and many channels, momentum and epsilon variants and the
// running statistics; vector-tail sizes and zero-size dims.
#include <cstdint>
#include <optional>
#include <random>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/attribute.h"
#include "graph/tensor.h"
#include "gtest/gtest.h"
#include "tests/kernels/cpu/cpu_test_util.h"

namespace tsr {
namespace {

using testing::ExpectCpuMatchesReference;
using testing::RandomF32;

// The reference works in double; the kernels compute statistics with double block
// accumulation and normalize in f32, a few f32 ulps from it.
constexpr double kTolerance = 2e-5;

class CpuNormalizationTest : public testing::CpuIsaTest {};

struct LayerNormCase {
  Shape x;
  int64_t axis;
  Shape scale;
  std::optional<Shape> bias;
};

TEST_P(CpuNormalizationTest, LayerNormalization) {
  const std::vector<LayerNormCase> cases = {
      {{3, 17}, -1, {17}, Shape{17}},
      {{3, 17}, -1, {17}, std::nullopt},
      {{1, 1}, -1, {1}, Shape{1}},
      {{5, 3}, 1, {3}, Shape{1}},
      {{2, 5, 1023}, -1, {1023}, Shape{1023}},
      {{2, 5, 1023}, -2, {5, 1023}, Shape{1023}},
      {{2, 5, 1023}, -2, {5, 1}, std::nullopt},
      {{4, 3, 17}, 1, {3, 17}, Shape{3, 17}},
      {{4, 3, 17}, 1, {1, 17}, Shape{3, 1}},
      {{4, 3, 17}, 0, {4, 3, 17}, Shape{17}},
      {{2, 3, 4, 5}, -3, {3, 4, 5}, Shape{4, 5}},
      {{6, 768}, -1, {768}, Shape{768}},
      {{3, 2000}, 1, {2000}, Shape{2000}},
      {{0, 8}, -1, {8}, Shape{8}},
      {{3, 0}, -1, {0}, Shape{0}},
  };
  uint32_t seed = 100;
  for (const LayerNormCase& c : cases) {
    for (double epsilon : {1e-5, 0.1}) {
      SCOPED_TRACE(absl::StrCat("seed=", ++seed, " x=", c.x.ToString(), " axis=", c.axis, " scale=", c.scale.ToString(),
                                " bias=", c.bias ? c.bias->ToString() : "absent", " epsilon=", epsilon));
      std::mt19937 rng(seed);
      std::vector<std::optional<Tensor>> inputs = {RandomF32(rng, c.x, -2.0f, 3.0f),
                                                   RandomF32(rng, c.scale, 0.5f, 2.0f)};
      if (c.bias) inputs.push_back(RandomF32(rng, *c.bias));
      const AttrMap attrs = {{"axis", AttrValue::Int(c.axis)}, {"epsilon", AttrValue::Float(epsilon)}};
      ExpectCpuMatchesReference("LayerNormalization", inputs, attrs, kTolerance);
    }
  }
}

// A large mean over a small spread: a one-pass E[x^2] - E[x]^2 in f32 would lose the
// variance; the two-pass statistics keep it.
TEST_P(CpuNormalizationTest, LayerNormalizationLargeOffset) {
  std::mt19937 rng(200);
  const AttrMap attrs = {{"axis", AttrValue::Int(-1)}};
  ExpectCpuMatchesReference(
      "LayerNormalization",
      {RandomF32(rng, {4, 1000}, 999.0f, 1001.0f), RandomF32(rng, {1000}), RandomF32(rng, {1000})}, attrs, kTolerance);
}

// bfloat16 statistics are left to the reference kernel.
TEST_P(CpuNormalizationTest, LayerNormalizationBf16StashFallsBack) {
  std::mt19937 rng(300);
  const AttrMap attrs = {{"axis", AttrValue::Int(-1)}, {"stash_type", AttrValue::Int(16)}};
  ExpectCpuMatchesReference("LayerNormalization", {RandomF32(rng, {3, 17}), RandomF32(rng, {17})}, attrs, 0.0);
}

std::vector<std::optional<Tensor>> BatchNormInputs(std::mt19937& rng, const Shape& x, float x_offset = 0.0f) {
  const int64_t channels = x.rank() == 1 ? 1 : x.dim(1);
  return {RandomF32(rng, x, x_offset - 1.0f, x_offset + 2.0f), RandomF32(rng, {channels}, 0.5f, 2.0f),
          RandomF32(rng, {channels}), RandomF32(rng, {channels}), RandomF32(rng, {channels}, 0.5f, 2.0f)};
}

TEST_P(CpuNormalizationTest, BatchNormalization) {
  // Few channels (per-plane statistics) and >= 8 (per-channel), batch 1, ranks 1..4.
  const std::vector<Shape> shapes = {{1},           {7},          {1023},     {1, 3},        {4, 9},
                                     {1, 3, 17},    {2, 5, 1023}, {3, 8, 17}, {1, 16, 3, 5}, {2, 3, 4, 4},
                                     {5, 12, 7, 3}, {1, 1, 1, 1}, {0, 3, 4},  {2, 3, 0},     {0, 9, 2}};
  uint32_t seed = 400;
  for (const Shape& shape : shapes) {
    for (int training : {0, 1}) {
      for (double momentum : {0.9, 0.0, 1.0}) {
        if (!training && momentum != 0.9) continue;
        for (double epsilon : {1e-5, 0.5}) {
          SCOPED_TRACE(absl::StrCat("seed=", ++seed, " x=", shape.ToString(), " training_mode=", training,
                                    " momentum=", momentum, " epsilon=", epsilon));
          std::mt19937 rng(seed);
          const AttrMap attrs = {{"training_mode", AttrValue::Int(training)},
                                 {"momentum", AttrValue::Float(momentum)},
                                 {"epsilon", AttrValue::Float(epsilon)}};
          ExpectCpuMatchesReference("BatchNormalization", BatchNormInputs(rng, shape), attrs, kTolerance);
        }
      }
    }
  }
}

// Training statistics of data far from zero (two-pass variance) over planes longer
// than one summation block.
TEST_P(CpuNormalizationTest, BatchNormalizationTrainingLargeOffset) {
  std::mt19937 rng(500);
  const AttrMap attrs = {{"training_mode", AttrValue::Int(1)}};
  for (const Shape& shape : std::vector<Shape>{{3, 2, 700}, {2, 9, 600}}) {
    SCOPED_TRACE(shape.ToString());
    ExpectCpuMatchesReference("BatchNormalization", BatchNormInputs(rng, shape, 500.0f), attrs, kTolerance);
  }
}

TSR_INSTANTIATE_FOR_ALL_ISAS(CpuNormalizationTest);

}  // namespace
}  // namespace tsr

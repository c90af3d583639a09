// Tests of the cpu f32 BatchNormalizationGrad and LayerNormalizationGrad
// (kernels/cpu/normalization_grad_kernels.cc) against the reference kernels at every
// ISA level, single- and multi-threaded: BatchNorm of ranks 1..5 through each of its
// schedules (tiny planes reduced by columns, few channels split into pieces, many
// channels one per thread, planes longer than a piece), LayerNorm over positive and
// negative axes, vector-tail sizes 1/3/17/1023, zero-size dims, both epsilons, data
// with a large mean, and results bit-identical for every thread count.
#include <cstdint>
#include <optional>
#include <random>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "graph/attribute.h"
#include "graph/tensor.h"
#include "gtest/gtest.h"
#include "kernels/run_op.h"
#include "tests/kernels/cpu/cpu_test_util.h"

namespace tsr {
namespace {

using testing::ExpectCpuMatchesReference;
using testing::ExpectSameTensor;
using testing::RandomF32;
using testing::ThreadedParallelFor;

// The reference works in double; the kernels sum f32 blocks into double and compute
// each element in f32, a few f32 ulps from it.
constexpr double kTolerance = 2e-5;

class CpuNormalizationGradTest : public testing::CpuIsaTest {};

// X uniform in [lo, hi), G (dY times the scale) uniform in [-1, 1).
std::vector<std::optional<Tensor>> Inputs(std::mt19937& rng, const Shape& x, float lo = -2.0f, float hi = 3.0f) {
  return {RandomF32(rng, x, lo, hi), RandomF32(rng, x)};
}

// The cpu kernel at 2, 3 and 5 threads gives exactly what it gives on one.
void ExpectSameForEveryThreadCount(absl::string_view op, const std::vector<std::optional<Tensor>>& inputs,
                                   const AttrMap& attrs) {
  RunOpOptions options;
  options.device = kCpuDevice;
  options.fall_back_to_reference = false;
  absl::StatusOr<std::vector<Tensor>> single = RunOp(op, inputs, attrs, options);
  ASSERT_TRUE(single.ok()) << single.status();
  for (int threads : {2, 3, 5}) {
    options.parallel_for = ThreadedParallelFor(threads);
    absl::StatusOr<std::vector<Tensor>> got = RunOp(op, inputs, attrs, options);
    ASSERT_TRUE(got.ok()) << got.status();
    for (size_t o = 0; o < got->size(); ++o) {
      EXPECT_TRUE((*got)[o].BitwiseEquals((*single)[o])) << op << " output " << o << " threads=" << threads;
    }
  }
}

TEST_P(CpuNormalizationGradTest, BatchNormalizationGrad) {
  const std::vector<Shape> shapes = {
      // Rank 1 (one channel) and rank 2 ([N, C]: the column schedule).
      {1},
      {3},
      {17},
      {1023},
      {1, 1},
      {3, 17},
      {17, 3},
      {64, 1023},
      // Planes under 8 elements: columns.
      {2, 3, 4},
      {5, 17, 1, 7},
      {3, 2, 1, 1, 3},
      // Few channels: pieces in parallel.
      {2, 1, 17},
      {1, 3, 17, 17},
      {3, 7, 1023},
      {2, 2, 3, 3, 3},
      // Many channels: one channel per thread.
      {3, 17, 5, 5},
      {2, 64, 33},
      {1, 9, 8},
      // Planes longer than a piece (16384), in both schedules.
      {2, 3, 20000},
      {2, 8, 17000},
      {1, 1, 40000},
      // Zero-size dims.
      {0},
      {0, 3},
      {0, 3, 4, 4},
      {2, 0, 5},
      {2, 3, 0},
      {2, 17, 4, 0},
  };
  uint32_t seed = 1000;
  for (const Shape& shape : shapes) {
    for (double epsilon : {1e-5, 0.1}) {
      SCOPED_TRACE(absl::StrCat("seed=", ++seed, " x=", shape.ToString(), " epsilon=", epsilon));
      std::mt19937 rng(seed);
      ExpectCpuMatchesReference("BatchNormalizationGrad", Inputs(rng, shape), {{"epsilon", AttrValue::Float(epsilon)}},
                                kTolerance);
    }
  }
}

// The default epsilon (attribute absent).
TEST_P(CpuNormalizationGradTest, DefaultEpsilon) {
  std::mt19937 rng(1100);
  ExpectCpuMatchesReference("BatchNormalizationGrad", Inputs(rng, {4, 9, 6, 6}), {}, kTolerance);
  ExpectCpuMatchesReference("LayerNormalizationGrad", Inputs(rng, {4, 9, 36}), {}, kTolerance);
}

TEST_P(CpuNormalizationGradTest, LayerNormalizationGrad) {
  struct Case {
    Shape x;
    int64_t axis;
  };
  const std::vector<Case> cases = {
      {{1, 1}, -1},       {{3, 1}, -1},       {{3, 3}, 1},     {{3, 17}, -1},   {{17, 3}, 0},
      {{2, 5, 1023}, -1}, {{2, 5, 1023}, -2}, {{4, 3, 17}, 1}, {{4, 3, 17}, 0}, {{4, 3, 17}, -3},
      {{2, 3, 4, 5}, -3}, {{6, 768}, -1},     {{3, 2000}, 1},  {{1023}, 0},     {{1023}, -1},
      {{0, 8}, -1},       {{3, 0}, -1},       {{2, 0, 5}, 2},  {{5, 2, 0}, 1},
  };
  uint32_t seed = 2000;
  for (const Case& c : cases) {
    for (double epsilon : {1e-5, 0.1}) {
      SCOPED_TRACE(absl::StrCat("seed=", ++seed, " x=", c.x.ToString(), " axis=", c.axis, " epsilon=", epsilon));
      std::mt19937 rng(seed);
      ExpectCpuMatchesReference("LayerNormalizationGrad", Inputs(rng, c.x),
                                {{"axis", AttrValue::Int(c.axis)}, {"epsilon", AttrValue::Float(epsilon)}}, kTolerance);
    }
  }
}

// A large mean over a small spread: computing x - mean with only the f32 mean (or
// a one-pass E[x^2] - E[x]^2) would lose the variance and Normalized.
TEST_P(CpuNormalizationGradTest, LargeMean) {
  std::mt19937 rng(3000);
  ExpectCpuMatchesReference("LayerNormalizationGrad", Inputs(rng, {4, 1000}, 999.0f, 1001.0f), {}, kTolerance);
  ExpectCpuMatchesReference("BatchNormalizationGrad", Inputs(rng, {3, 9, 300}, 999.0f, 1001.0f), {}, kTolerance);
  ExpectCpuMatchesReference("BatchNormalizationGrad", Inputs(rng, {3, 2, 300}, 999.0f, 1001.0f), {}, kTolerance);
  ExpectCpuMatchesReference("BatchNormalizationGrad", Inputs(rng, {300, 9}, 999.0f, 1001.0f), {}, kTolerance);
}

// Every schedule sums in an order fixed by the shape alone.
TEST_P(CpuNormalizationGradTest, SameResultForEveryThreadCount) {
  std::mt19937 rng(4000);
  for (const Shape& shape : std::vector<Shape>{{64, 33}, {3, 2, 20000}, {2, 12, 17000}, {5, 8, 1, 3}}) {
    SCOPED_TRACE(shape.ToString());
    ExpectSameForEveryThreadCount("BatchNormalizationGrad", Inputs(rng, shape), {});
  }
  ExpectSameForEveryThreadCount("LayerNormalizationGrad", Inputs(rng, {37, 129}), {{"axis", AttrValue::Int(-1)}});
}

TSR_INSTANTIATE_FOR_ALL_ISAS(CpuNormalizationGradTest);

}  // namespace
}  // namespace tsr

// Gradients of MaxPool, AveragePool and GlobalAveragePool against central
// differences in f64: strides, explicit and auto pads, dilations, ceil_mode (windows
// running into and past the end padding), count_include_pad, overlapping windows,
// 1-D to 3-D, and randomized 2-D windows with printed seeds. MaxPool inputs hold
// distinct values at least 0.01 apart, so no window has a tie that a difference of
// 1e-6 could flip.
#include <algorithm>
#include <cstdint>
#include <numeric>
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

AttrValue Ints(std::vector<int64_t> v) { return AttrValue::Ints(std::move(v)); }

// A shuffled ramp: distinct values 0.01 apart, centred on 0.
Tensor DistinctF64(std::mt19937& rng, const Shape& shape) {
  Tensor t(DType::kF64, shape);
  std::vector<int64_t> order(static_cast<size_t>(t.num_elements()));
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  const double half = static_cast<double>(order.size()) / 2;
  for (size_t i = 0; i < order.size(); ++i) t.flat<double>()[i] = 0.01 * (static_cast<double>(order[i]) - half);
  return t;
}

struct PoolCase {
  Shape x;
  AttrMap attrs;
};

const std::vector<PoolCase>& WindowCases() {
  static const auto* cases = new std::vector<PoolCase>{
      {{2, 2, 4, 4}, {{"kernel_shape", Ints({2, 2})}, {"strides", Ints({2, 2})}}},
      // Overlapping windows: one element can be the maximum of several.
      {{1, 2, 5, 5}, {{"kernel_shape", Ints({3, 3})}}},
      {{1, 1, 6, 5}, {{"kernel_shape", Ints({3, 2})}, {"strides", Ints({2, 1})}, {"pads", Ints({1, 0, 1, 1})}}},
      {{1, 2, 7, 7}, {{"kernel_shape", Ints({2, 2})}, {"dilations", Ints({2, 3})}, {"pads", Ints({1, 1, 0, 2})}}},
      // ceil_mode: the last window runs into the end padding (6 = 2*2 + 2: one more
      // window; 7 with pads: the extra window starts inside the padding and is dropped).
      {{1, 1, 6, 6}, {{"kernel_shape", Ints({3, 3})}, {"strides", Ints({2, 2})}, {"ceil_mode", AttrValue::Int(1)}}},
      {{1, 2, 7, 5},
       {{"kernel_shape", Ints({2, 3})},
        {"strides", Ints({3, 2})},
        {"pads", Ints({1, 0, 1, 1})},
        {"ceil_mode", AttrValue::Int(1)}}},
      {{1, 2, 5, 6},
       {{"kernel_shape", Ints({3, 3})}, {"strides", Ints({2, 2})}, {"auto_pad", AttrValue::String("SAME_UPPER")}}},
      {{1, 2, 6, 5},
       {{"kernel_shape", Ints({2, 3})}, {"strides", Ints({2, 2})}, {"auto_pad", AttrValue::String("SAME_LOWER")}}},
      {{2, 3, 9}, {{"kernel_shape", Ints({3})}, {"strides", Ints({2})}, {"pads", Ints({1, 1})}}},
      {{1, 1, 4, 4, 3}, {{"kernel_shape", Ints({2, 2, 2})}, {"strides", Ints({2, 1, 1})}}},
  };
  return *cases;
}

TEST(PoolGradsTest, MaxPool) {
  uint32_t seed = 3000;
  for (const PoolCase& c : WindowCases()) {
    SCOPED_TRACE(c.x.ToString());
    std::mt19937 rng(seed);
    ExpectGradientsMatchNumeric(GradCheck{"MaxPool", {DistinctF64(rng, c.x)}, c.attrs, {0}}, seed++);
  }
}

TEST(PoolGradsTest, AveragePool) {
  uint32_t seed = 3100;
  for (int include_pad = 0; include_pad < 2; ++include_pad) {
    for (const PoolCase& c : WindowCases()) {
      SCOPED_TRACE(absl::StrCat(c.x.ToString(), " count_include_pad=", include_pad));
      std::mt19937 rng(seed);
      AttrMap attrs = c.attrs;
      attrs["count_include_pad"] = AttrValue::Int(include_pad);
      ExpectGradientsMatchNumeric(GradCheck{"AveragePool", {RandomF64(rng, c.x)}, attrs, {0}}, seed++);
    }
  }
}

TEST(PoolGradsTest, RandomizedWindows) {
  for (uint32_t seed = 3200; seed < 3212; ++seed) {
    std::mt19937 rng(seed);
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    std::vector<int64_t> kernel = {pick(1, 3), pick(1, 3)}, strides = {pick(1, 3), pick(1, 3)};
    std::vector<int64_t> pads = {pick(0, kernel[0] - 1), pick(0, kernel[1] - 1), pick(0, kernel[0] - 1),
                                 pick(0, kernel[1] - 1)};
    const Shape x{pick(1, 2), pick(1, 2), kernel[0] + pick(0, 4), kernel[1] + pick(0, 4)};
    const AttrMap attrs = {{"kernel_shape", Ints(kernel)},
                           {"strides", Ints(strides)},
                           {"pads", Ints(pads)},
                           {"ceil_mode", AttrValue::Int(pick(0, 1))},
                           {"count_include_pad", AttrValue::Int(pick(0, 1))}};
    SCOPED_TRACE(absl::StrCat("X", x.ToString(), " kernel=", kernel[0], ",", kernel[1], " strides=", strides[0], ",",
                              strides[1], " pads=", pads[0], ",", pads[1], ",", pads[2], ",", pads[3]));
    ExpectGradientsMatchNumeric(GradCheck{"AveragePool", {RandomF64(rng, x)}, attrs, {0}}, seed);
    AttrMap max_attrs = attrs;
    max_attrs.erase("count_include_pad");
    ExpectGradientsMatchNumeric(GradCheck{"MaxPool", {DistinctF64(rng, x)}, max_attrs, {0}}, seed);
  }
}

TEST(PoolGradsTest, GlobalAveragePool) {
  uint32_t seed = 3300;
  for (const Shape& x : {Shape({2, 3, 4, 5}), Shape({1, 2, 7}), Shape({2, 1, 2, 3, 2}), Shape({1, 1, 1, 1})}) {
    std::mt19937 rng(seed);
    ExpectGradientsMatchNumeric(GradCheck{"GlobalAveragePool", {RandomF64(rng, x)}, {}, {0}}, seed++);
  }
}

}  // namespace
}  // namespace tsr

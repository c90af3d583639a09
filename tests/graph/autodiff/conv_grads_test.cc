// Conv's gradients (input through ConvTranspose, weight through ConvGradFilter, bias)
// and ConvTranspose's (input through Conv, weight through ConvGradFilter, bias)
// against central differences in f64: fixed cases covering every attribute (strides
// with positions no window reaches, explicit and auto pads, dilations, groups,
// depthwise with and without a channel multiplier, 1-D and 3-D) and randomized 2-D
// convolutions with printed seeds.
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

struct ConvCase {
  Shape x, w;
  AttrMap attrs;
  bool bias = true;
};

// Conv's bias has W.dim(0) channels, ConvTranspose's W.dim(1) * group.
void CheckConv(const ConvCase& c, uint32_t seed, const std::string& op = "Conv") {
  SCOPED_TRACE(absl::StrCat(op, " X", c.x.ToString(), " W", c.w.ToString()));
  std::mt19937 rng(seed);
  std::vector<std::optional<Tensor>> inputs = {RandomF64(rng, c.x), RandomF64(rng, c.w)};
  std::vector<int> wrt = {0, 1};
  if (c.bias) {
    const auto group = c.attrs.find("group");
    const int64_t g = group == c.attrs.end() ? 1 : group->second.i();
    inputs.push_back(RandomF64(rng, Shape({op == "Conv" ? c.w.dim(0) : c.w.dim(1) * g})));
    wrt.push_back(2);
  }
  ExpectGradientsMatchNumeric(GradCheck{op, inputs, c.attrs, wrt}, seed);
}

AttrValue Ints(std::vector<int64_t> v) { return AttrValue::Ints(std::move(v)); }

TEST(ConvGradsTest, EveryAttribute) {
  const std::vector<ConvCase> cases = {
      {{2, 3, 5, 5}, {4, 3, 3, 3}, {}},
      {{1, 2, 5, 4}, {3, 2, 2, 2}, {}, /*bias=*/false},
      {{1, 2, 7, 6}, {3, 2, 3, 2}, {{"strides", Ints({2, 2})}, {"pads", Ints({1, 0, 2, 1})}}},
      // Stride 3 over 8 leaves trailing input positions that no window reads.
      {{1, 1, 8, 8}, {2, 1, 3, 3}, {{"strides", Ints({3, 3})}}},
      {{1, 2, 7, 7}, {2, 2, 2, 3}, {{"dilations", Ints({2, 1})}, {"pads", Ints({1, 1, 1, 1})}}},
      {{1, 2, 9, 8}, {2, 2, 3, 2}, {{"dilations", Ints({2, 3})}, {"strides", Ints({2, 1})}}},
      {{2, 4, 5, 5}, {6, 2, 3, 3}, {{"group", AttrValue::Int(2)}, {"pads", Ints({1, 1, 1, 1})}}},
      // Depthwise, then depthwise with a channel multiplier of 2.
      {{1, 3, 6, 6}, {3, 1, 3, 3}, {{"group", AttrValue::Int(3)}, {"strides", Ints({2, 2})}}},
      {{1, 3, 5, 5}, {6, 1, 3, 3}, {{"group", AttrValue::Int(3)}, {"pads", Ints({1, 1, 1, 1})}}},
      {{1, 2, 5, 6}, {3, 2, 3, 3}, {{"auto_pad", AttrValue::String("SAME_UPPER")}, {"strides", Ints({2, 2})}}},
      {{1, 2, 6, 5}, {3, 2, 2, 3}, {{"auto_pad", AttrValue::String("SAME_LOWER")}, {"strides", Ints({2, 3})}}},
      {{1, 2, 6, 5}, {2, 2, 3, 3}, {{"auto_pad", AttrValue::String("VALID")}, {"strides", Ints({2, 2})}}},
      // 1-D and 3-D.
      {{2, 3, 9}, {2, 3, 4}, {{"strides", Ints({2})}, {"pads", Ints({1, 2})}, {"dilations", Ints({2})}}},
      {{1, 2, 4, 4, 3}, {2, 2, 2, 2, 2}, {{"strides", Ints({2, 1, 1})}, {"pads", Ints({0, 1, 0, 1, 0, 1})}}},
  };
  uint32_t seed = 1000;
  for (const ConvCase& c : cases) CheckConv(c, seed++);
}

TEST(ConvGradsTest, RandomizedTwoDimensional) {
  for (uint32_t seed = 2000; seed < 2012; ++seed) {
    std::mt19937 rng(seed);
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    const int64_t group = pick(1, 2);
    const int64_t c = group * pick(1, 2), m = group * pick(1, 2);
    std::vector<int64_t> kernel = {pick(1, 3), pick(1, 3)}, strides = {pick(1, 3), pick(1, 3)},
                         dilations = {pick(1, 2), pick(1, 2)};
    std::vector<int64_t> pads = {pick(0, 2), pick(0, 2), pick(0, 2), pick(0, 2)};
    Shape x{pick(1, 2), c};
    for (int i = 0; i < 2; ++i) {
      const int64_t span = (kernel[i] - 1) * dilations[i] + 1;
      x.AddDim(std::max<int64_t>(span - pads[i] - pads[i + 2], 1) + pick(0, 4));
    }
    ConvCase cc{x,
                Shape({m, c / group, kernel[0], kernel[1]}),
                {{"group", AttrValue::Int(group)},
                 {"strides", Ints(strides)},
                 {"dilations", Ints(dilations)},
                 {"pads", Ints(pads)}},
                pick(0, 1) == 1};
    SCOPED_TRACE(absl::StrCat("group=", group, " strides=", strides[0], ",", strides[1], " dilations=", dilations[0],
                              ",", dilations[1], " pads=", pads[0], ",", pads[1], ",", pads[2], ",", pads[3]));
    CheckConv(cc, seed);
  }
}

// ConvTranspose: W is [C, M/group, k...].
TEST(ConvGradsTest, ConvTransposeEveryAttribute) {
  const std::vector<ConvCase> cases = {
      {{2, 3, 4, 4}, {3, 2, 3, 3}, {}},
      {{1, 2, 3, 4}, {2, 3, 2, 2}, {{"strides", Ints({2, 2})}}, /*bias=*/false},
      {{1, 2, 4, 3}, {2, 2, 3, 2}, {{"strides", Ints({2, 3})}, {"pads", Ints({1, 0, 1, 1})}}},
      // output_padding: trailing positions only the bias reaches.
      {{1, 1, 3, 3}, {1, 2, 3, 3}, {{"strides", Ints({3, 2})}, {"output_padding", Ints({2, 1})}}},
      {{1, 2, 4, 4}, {2, 2, 2, 3}, {{"dilations", Ints({2, 1})}, {"pads", Ints({1, 1, 1, 1})}}},
      {{2, 4, 3, 3}, {4, 3, 3, 3}, {{"group", AttrValue::Int(2)}, {"strides", Ints({2, 2})}}},
      {{1, 3, 4, 4}, {3, 1, 3, 3}, {{"group", AttrValue::Int(3)}, {"pads", Ints({1, 1, 1, 1})}}},
      {{1, 2, 3, 3}, {2, 2, 3, 3}, {{"auto_pad", AttrValue::String("SAME_UPPER")}, {"strides", Ints({2, 2})}}},
      {{1, 2, 3, 2}, {2, 2, 2, 3}, {{"auto_pad", AttrValue::String("SAME_LOWER")}, {"strides", Ints({2, 3})}}},
      // output_shape: smaller than the full window (pads derived) and larger (the
      // extra positions only get the bias, a stride or more of them).
      {{1, 2, 3, 3}, {2, 2, 3, 3}, {{"strides", Ints({2, 2})}, {"output_shape", Ints({6, 5})}}},
      {{1, 2, 3, 3}, {2, 2, 3, 3}, {{"strides", Ints({2, 1})}, {"output_shape", Ints({10, 7})}}},
      // 1-D and 3-D.
      {{2, 3, 5}, {3, 2, 4}, {{"strides", Ints({2})}, {"pads", Ints({1, 2})}, {"dilations", Ints({2})}}},
      {{1, 2, 2, 3, 2}, {2, 2, 2, 2, 2}, {{"strides", Ints({2, 1, 1})}, {"pads", Ints({0, 1, 0, 1, 0, 1})}}},
  };
  uint32_t seed = 3000;
  for (const ConvCase& c : cases) CheckConv(c, seed++, "ConvTranspose");
}

}  // namespace
}  // namespace tsr

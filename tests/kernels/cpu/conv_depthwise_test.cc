// Tests of the depthwise Conv (kernels/cpu/conv_depthwise.h: group == input channels,
// optionally with a depth multiplier M = k * C) through the cpu Conv kernel against
// the reference kernel, at every ISA level, inline and over 3 threads: random shapes
// (channels 1, 3, 17, 32; sizes 1..37 including odd ones; strides 1, 2 and 3; symmetric
// and asymmetric pads; dilations 1 and 2; kernels 1x1 to 5x5; 1-D and 2-D; bias or
// not), MobileNetV2's depthwise layers, and that these shapes do pick the depthwise
// algorithm (conv_prepared.h); and that the AVX-512 channel-blocked kernel computes the
// AVX2 plane kernel's floats bit for bit.
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/attribute.h"
#include "graph/tensor.h"
#include "gtest/gtest.h"
#include "kernels/cpu/conv_prepared.h"
#include "kernels/cpu/conv_window.h"
#include "kernels/cpu/cpu_features.h"
#include "tests/kernels/cpu/cpu_test_util.h"

namespace tsr {
namespace {

using testing::CpuIsaTest;
using testing::ExpectCpuMatchesReference;
using testing::RandomF32;

// f32 sums in tap order against the reference's.
constexpr double kTolerance = 1e-4;

struct DwCase {
  int64_t n = 1, c = 1, multiplier = 1;
  std::vector<int64_t> in;      // spatial sizes (1 or 2)
  std::vector<int64_t> kernel;  // same rank
  std::vector<int64_t> strides, dilations;
  std::vector<int64_t> pads;  // begins then ends
  bool bias = true;
};

std::string Describe(const DwCase& c) {
  return absl::StrCat("n=", c.n, " c=", c.c, " multiplier=", c.multiplier, " in=[", absl::StrJoin(c.in, ","),
                      "] kernel=[", absl::StrJoin(c.kernel, ","), "] strides=[", absl::StrJoin(c.strides, ","),
                      "] dilations=[", absl::StrJoin(c.dilations, ","), "] pads=[", absl::StrJoin(c.pads, ","),
                      "] bias=", c.bias);
}

// The output size of spatial dimension d, or < 1 when the window does not fit.
int64_t OutSize(const DwCase& c, size_t d) {
  const size_t rank = c.in.size();
  const int64_t span = c.in[d] + c.pads[d] + c.pads[rank + d] - c.dilations[d] * (c.kernel[d] - 1) - 1;
  return span < 0 ? 0 : span / c.strides[d] + 1;
}

// The prepared-weights geometry of the case, to check the algorithm it gets.
ConvAlgorithm AlgorithmOf(const DwCase& c) {
  ConvGeometry g;
  const int rank = static_cast<int>(c.in.size());
  for (int d = 0; d < 3; ++d) {
    const int i = d - (3 - rank);
    g.window.in[d] = i < 0 ? 1 : c.in[i];
    g.window.out[d] = i < 0 ? 1 : OutSize(c, i);
    g.window.kernel[d] = i < 0 ? 1 : c.kernel[i];
    g.window.stride[d] = i < 0 ? 1 : c.strides[i];
    g.window.dilation[d] = i < 0 ? 1 : c.dilations[i];
    g.window.pad_begin[d] = i < 0 ? 0 : c.pads[i];
    g.window.pad_end[d] = i < 0 ? 0 : c.pads[rank + i];
  }
  g.channels = c.c;
  g.out_channels = c.c * c.multiplier;
  g.group = c.c;
  const std::vector<float> weights(static_cast<size_t>(g.out_channels * g.window.taps()), 1.0f);
  absl::StatusOr<PreparedConvWeights> prepared = PrepareConvWeights(g, weights.data());
  EXPECT_TRUE(prepared.ok()) << prepared.status();
  return prepared.ok() ? prepared->algorithm() : ConvAlgorithm::kEmpty;
}

void CheckDepthwise(const DwCase& c, uint32_t seed) {
  SCOPED_TRACE(absl::StrCat("seed=", seed, " ", Describe(c)));
  // Every case here is depthwise, or the test would check another algorithm.
  EXPECT_EQ(AlgorithmOf(c), ConvAlgorithm::kDepthwise);
  std::mt19937 rng(seed);
  std::vector<int64_t> x_dims = {c.n, c.c}, w_dims = {c.c * c.multiplier, 1};
  x_dims.insert(x_dims.end(), c.in.begin(), c.in.end());
  w_dims.insert(w_dims.end(), c.kernel.begin(), c.kernel.end());
  std::vector<std::optional<Tensor>> inputs = {RandomF32(rng, Shape(x_dims)), RandomF32(rng, Shape(w_dims))};
  if (c.bias) inputs.push_back(RandomF32(rng, Shape({c.c * c.multiplier})));
  const AttrMap attrs{{"group", AttrValue::Int(c.c)},
                      {"strides", AttrValue::Ints(c.strides)},
                      {"dilations", AttrValue::Ints(c.dilations)},
                      {"pads", AttrValue::Ints(c.pads)}};
  ExpectCpuMatchesReference("Conv", inputs, attrs, kTolerance);
}

DwCase Square(int64_t c, int64_t size, int64_t stride, int64_t pad, int64_t kernel = 3) {
  return {.c = c,
          .in = {size, size},
          .kernel = {kernel, kernel},
          .strides = {stride, stride},
          .dilations = {1, 1},
          .pads = {pad, pad, pad, pad}};
}

class ConvDepthwiseTest : public CpuIsaTest {};

// The two layers of bench/conv_bench.cc and small versions of them.
TEST_P(ConvDepthwiseTest, BenchLayers) {
  CheckDepthwise(Square(128, 56, 1, 1), 1);
  CheckDepthwise(Square(256, 28, 2, 1), 2);
  CheckDepthwise(Square(3, 9, 2, 1), 3);
  CheckDepthwise(Square(2, 8, 2, 1), 4);
}

// MobileNetV2's depthwise 3x3 layers (channels, size, stride), with fewer channels
// where they repeat, so the reference stays fast.
TEST_P(ConvDepthwiseTest, MobileNetV2Layers) {
  const int64_t layers[][3] = {{32, 112, 1}, {96, 112, 2}, {144, 56, 1}, {48, 56, 2}, {64, 28, 1},
                               {64, 28, 2},  {96, 14, 1},  {160, 14, 2}, {960, 7, 1}};
  uint32_t seed = 10;
  for (const auto& l : layers) CheckDepthwise(Square(l[0], l[1], l[2], 1), seed++);
}

// Row widths around the 8- and 16-column vector blocks and row counts around the
// 4-row blocks, at both strides, with and without padding.
TEST_P(ConvDepthwiseTest, VectorBlockEdges) {
  uint32_t seed = 100;
  for (int64_t w : {1, 7, 8, 9, 15, 16, 17, 23, 24, 25, 33}) {
    for (int64_t stride : {1, 2}) {
      for (int64_t pad : {0, 1}) {
        if (w + 2 * pad < 3) continue;
        DwCase c = Square(2, w, stride, pad);
        c.in = {5, w};
        c.in[0] = 4 * stride + 2 + seed % 3;  // 4 or 5 output rows: a 4-row block and a leftover
        CheckDepthwise(c, seed++);
      }
    }
  }
}

TEST_P(ConvDepthwiseTest, DepthMultiplierAndNoBias) {
  DwCase c = Square(3, 11, 1, 1);
  c.multiplier = 3;
  CheckDepthwise(c, 200);
  c = Square(17, 10, 2, 1);
  c.multiplier = 2;
  c.bias = false;
  CheckDepthwise(c, 201);
}

// Pads larger than the kernel reach: whole output rows and columns see only padding
// and equal the bias.
TEST_P(ConvDepthwiseTest, PaddingOnlyOutputs) {
  DwCase c = Square(3, 4, 1, 0);
  c.pads = {4, 5, 3, 6};
  CheckDepthwise(c, 300);
  c.strides = {2, 2};
  CheckDepthwise(c, 301);
}

TEST_P(ConvDepthwiseTest, OneDimensional) {
  CheckDepthwise({.n = 2, .c = 5, .in = {37}, .kernel = {3}, .strides = {2}, .dilations = {1}, .pads = {1, 0}}, 400);
  CheckDepthwise({.c = 4, .in = {19}, .kernel = {5}, .strides = {1}, .dilations = {2}, .pads = {2, 3}}, 401);
}

// Random shapes: every attribute varied at once.
TEST_P(ConvDepthwiseTest, RandomShapes) {
  const int64_t channel_choices[] = {1, 3, 17, 32};
  int checked = 0;
  for (uint32_t seed = 1000; checked < 60; ++seed) {
    std::mt19937 rng(seed);
    auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
    DwCase c;
    c.n = pick(1, 2);
    c.c = channel_choices[pick(0, 3)];
    // One input channel with 4+ outputs is an ordinary conv (the GEMM path).
    c.multiplier = c.c == 1 ? pick(1, 3) : (pick(0, 3) == 0 ? pick(2, 3) : 1);
    const int rank = pick(0, 4) == 0 ? 1 : 2;
    c.bias = pick(0, 1) == 1;
    for (int d = 0; d < rank; ++d) {
      c.in.push_back(pick(1, 37));
      c.kernel.push_back(pick(0, 2) == 0 ? pick(1, 5) : 3);
      // Mostly strides 1 and 2 (the vector kernel's); 3 runs the row-wise loops.
      c.strides.push_back(pick(0, 9) == 0 ? 3 : pick(1, 2));
      c.dilations.push_back(pick(1, 2));
    }
    for (int i = 0; i < 2 * rank; ++i) c.pads.push_back(pick(0, 2));
    if (OutSize(c, 0) < 1 || OutSize(c, rank - 1) < 1) continue;
    CheckDepthwise(c, seed);
    ++checked;
  }
}

TSR_INSTANTIATE_FOR_ALL_ISAS(ConvDepthwiseTest);

// With AVX-512, planes up to 128x128 go sixteen channels at a time (DepthwiseConvChannels):
// the same floats as the AVX2 padded-plane kernel -- bias, then every tap in order,
// padding included -- whatever the channel count (a last block of fewer than sixteen),
// window, stride or width (rows of up to 8 outputs go several to a vector block).
TEST(ConvDepthwiseChannelBlocksTest, BitwiseThePlaneKernel) {
  if (SupportedCpuIsa(CpuIsa::kAvx512) != CpuIsa::kAvx512) GTEST_SKIP() << "CPU lacks avx512";
  struct Case {
    int64_t c, h, w, kernel_h, kernel_w, stride, pad_top, pad_left, pad_bottom, pad_right;
    bool bias;
  };
  const Case cases[] = {{17, 14, 14, 3, 3, 1, 1, 1, 1, 1, true},   {40, 7, 7, 3, 3, 1, 1, 1, 1, 1, false},
                        {16, 14, 14, 3, 3, 2, 1, 1, 1, 1, true},   {3, 28, 28, 3, 3, 2, 0, 1, 1, 0, true},
                        {33, 13, 9, 5, 5, 1, 2, 2, 2, 2, true},    {5, 6, 23, 1, 3, 3, 0, 1, 0, 1, false},
                        {1, 1, 1, 3, 3, 1, 1, 1, 1, 1, true},      {20, 9, 2, 3, 3, 1, 1, 1, 1, 1, true},
                        {16, 112, 112, 3, 3, 2, 0, 0, 1, 1, true}, {19, 56, 57, 3, 3, 1, 1, 1, 1, 1, false}};
  uint32_t seed = 500;
  for (const Case& k : cases) {
    SCOPED_TRACE(
        absl::StrCat("c=", k.c, " ", k.h, "x", k.w, " kernel ", k.kernel_h, "x", k.kernel_w, " stride ", k.stride));
    ConvGeometry g;
    g.window = Window3d{.in = {1, k.h, k.w},
                        .out = {1, (k.h + k.pad_top + k.pad_bottom - k.kernel_h) / k.stride + 1,
                                (k.w + k.pad_left + k.pad_right - k.kernel_w) / k.stride + 1},
                        .kernel = {1, k.kernel_h, k.kernel_w},
                        .stride = {1, k.stride, k.stride},
                        .dilation = {1, 1, 1},
                        .pad_begin = {0, k.pad_top, k.pad_left},
                        .pad_end = {0, k.pad_bottom, k.pad_right}};
    g.channels = g.out_channels = g.group = k.c;
    std::mt19937 rng(seed++);
    const Tensor x = RandomF32(rng, Shape({2, k.c, k.h, k.w}));
    const Tensor weights = RandomF32(rng, Shape({k.c, 1, k.kernel_h, k.kernel_w}));
    const Tensor bias = RandomF32(rng, Shape({k.c}));
    absl::StatusOr<PreparedConvWeights> prepared = PrepareConvWeights(g, weights.data<float>());
    ASSERT_TRUE(prepared.ok()) << prepared.status();
    ASSERT_EQ(prepared->algorithm(), ConvAlgorithm::kDepthwise);
    const int64_t out = 2 * k.c * g.window.out_size();
    std::vector<float> planes(static_cast<size_t>(out)), blocks(static_cast<size_t>(out));
    ::setenv("TESSERA_CPU_ISA", "avx2", 1);
    ConvForward(*prepared, 2, x.data<float>(), k.bias ? bias.data<float>() : nullptr, planes.data());
    ::setenv("TESSERA_CPU_ISA", "avx512", 1);
    ConvForward(*prepared, 2, x.data<float>(), k.bias ? bias.data<float>() : nullptr, blocks.data());
    ::unsetenv("TESSERA_CPU_ISA");
    for (int64_t i = 0; i < out; ++i) ASSERT_EQ(planes[i], blocks[i]) << "element " << i;
  }
}

}  // namespace
}  // namespace tsr

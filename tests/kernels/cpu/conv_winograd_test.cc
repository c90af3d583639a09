// Tests of the Winograd convolution (kernels/cpu/conv_winograd.h) against the
// reference Conv kernel: both tile sizes called directly on odd sizes, every padding,
// channel counts that are not multiples of 8, batch 0 to 2, with and without bias,
// blocks of tile rows, threads; and the cpu Conv kernel on shapes that pick Winograd
// and on 3x3 shapes that must fall back (strided, dilated, grouped, few channels), at
// every ISA level.
//
// Tolerance: Winograd sums transformed products that are scaled by up to 8 (F(4x4,
// 3x3)) before they cancel, so its f32 rounding error is larger than the direct
// GEMM's: about 1e-5 of the output magnitude at the channel counts used here. 2e-4
// relative (absolute below 1) leaves margin for that while still catching any wrong
// tap, tile or transform coefficient (those err by O(1)).
#include "kernels/cpu/conv_winograd.h"

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/attribute.h"
#include "graph/ops/conv_geometry.h"
#include "graph/tensor.h"
#include "gtest/gtest.h"
#include "kernels/cpu/conv_window.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/run_op.h"
#include "tests/kernels/cpu/cpu_test_util.h"

namespace tsr {
namespace {

using testing::CpuIsaTest;
using testing::ExpectCpuMatchesReference;
using testing::ExpectSameTensor;
using testing::RandomF32;
using testing::ThreadedParallelFor;

constexpr double kTolerance = 2e-4;

struct Case {
  int64_t batch, channels, out_channels, h, w;
  std::vector<int64_t> pads = {1, 1, 1, 1};  // top, left, bottom, right
  bool bias = true;
};

std::string Describe(const Case& c) {
  return absl::StrCat("x=[", c.batch, ",", c.channels, ",", c.h, ",", c.w, "] m=", c.out_channels, " pads=[",
                      absl::StrJoin(c.pads, ","), "] bias=", c.bias);
}

struct Inputs {
  std::vector<std::optional<Tensor>> tensors;
  AttrMap attrs;
};

Inputs MakeInputs(const Case& c, uint32_t seed, std::vector<int64_t> strides = {1, 1},
                  std::vector<int64_t> dilations = {1, 1}, int64_t group = 1) {
  std::mt19937 rng(seed);
  Inputs in;
  in.tensors = {RandomF32(rng, Shape({c.batch, c.channels, c.h, c.w})),
                RandomF32(rng, Shape({c.out_channels, c.channels / group, 3, 3}))};
  if (c.bias) in.tensors.push_back(RandomF32(rng, Shape({c.out_channels})));
  in.attrs = {{"pads", AttrValue::Ints(c.pads)},
              {"strides", AttrValue::Ints(strides)},
              {"dilations", AttrValue::Ints(dilations)},
              {"group", AttrValue::Int(group)}};
  return in;
}

// The Window3d of a case (3x3, stride 1, undilated).
Window3d MakeWindow(const Case& c) {
  WindowSpec spec;
  spec.kernel = {3, 3};
  spec.strides = {1, 1};
  spec.dilations = {1, 1};
  spec.pads = c.pads;
  absl::StatusOr<WindowGeometry> geometry = ComputeWindowGeometry({c.h, c.w}, spec);
  EXPECT_TRUE(geometry.ok()) << geometry.status();
  const std::optional<Window3d> window = MakeWindow3d(std::vector<int64_t>{c.h, c.w}, *geometry);
  EXPECT_TRUE(window.has_value());
  return *window;
}

// WinogradConv with `tile`, inline and over 3 threads, against the reference kernel.
void CheckTile(const Case& c, int tile, uint32_t seed) {
  SCOPED_TRACE(absl::StrCat("seed=", seed, " tile=", tile, " ", Describe(c)));
  const Inputs in = MakeInputs(c, seed);
  RunOpOptions reference;
  reference.device = kReferenceDevice;
  absl::StatusOr<std::vector<Tensor>> want = RunOp("Conv", in.tensors, in.attrs, reference);
  ASSERT_TRUE(want.ok()) << want.status();
  const Window3d window = MakeWindow(c);
  for (int threads : {1, 3}) {
    Tensor got(DType::kF32, (*want)[0].shape());
    WinogradConv(window, tile, c.batch, c.channels, c.out_channels, in.tensors[0]->data<float>(),
                 in.tensors[1]->data<float>(), c.bias ? in.tensors[2]->data<float>() : nullptr, got.data<float>(),
                 threads > 1 ? ThreadedParallelFor(threads) : ParallelForFn());
    ExpectSameTensor(got, (*want)[0], kTolerance, absl::StrCat("threads=", threads));
  }
}

class WinogradTileTest : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    if (SupportedCpuIsa(CpuIsa::kAvx2) != CpuIsa::kAvx2) GTEST_SKIP() << "Winograd needs AVX2";
  }
};

TEST_P(WinogradTileTest, OddSizesAndPads) {
  uint32_t seed = 1;
  for (int64_t size : {1, 2, 3, 5, 8, 13}) {
    CheckTile({.batch = 1, .channels = 3, .out_channels = 5, .h = size, .w = size + 4}, GetParam(), seed++);
  }
  CheckTile({.batch = 1, .channels = 4, .out_channels = 4, .h = 9, .w = 7, .pads = {0, 0, 0, 0}}, GetParam(), seed++);
  CheckTile({.batch = 1, .channels = 2, .out_channels = 3, .h = 6, .w = 11, .pads = {0, 2, 1, 0}}, GetParam(), seed++);
  CheckTile({.batch = 1, .channels = 2, .out_channels = 3, .h = 4, .w = 5, .pads = {2, 2, 2, 2}}, GetParam(), seed++);
  CheckTile({.batch = 1, .channels = 1, .out_channels = 1, .h = 3, .w = 3, .pads = {0, 0, 0, 0}}, GetParam(), seed++);
}

TEST_P(WinogradTileTest, ChannelsNotMultiplesOfEightBatchesAndBias) {
  CheckTile({.batch = 2, .channels = 17, .out_channels = 19, .h = 10, .w = 9, .bias = false}, GetParam(), 20);
  CheckTile({.batch = 0, .channels = 9, .out_channels = 7, .h = 5, .w = 5}, GetParam(), 21);
  CheckTile({.batch = 3, .channels = 23, .out_channels = 8, .h = 7, .w = 7}, GetParam(), 22);
  // Rows wider than 8 tiles: full and partial vectors of tiles.
  CheckTile({.batch = 1, .channels = 5, .out_channels = 6, .h = 3, .w = 45}, GetParam(), 23);
}

// Several blocks of tile rows per image (the block is sized to stay in L2).
TEST_P(WinogradTileTest, SeveralBlocksOfTileRows) {
  CheckTile({.batch = 2, .channels = 64, .out_channels = 40, .h = 42, .w = 37, .pads = {1, 0, 1, 2}}, GetParam(), 30);
}

INSTANTIATE_TEST_SUITE_P(Tiles, WinogradTileTest, ::testing::Values(2, 4),
                         [](const ::testing::TestParamInfo<int>& info) { return absl::StrCat("F", info.param, "x3"); });

// Through the cpu Conv kernel, which picks Winograd (or not) itself.
class ConvWinogradTest : public CpuIsaTest {};

void CheckConv(const Case& c, uint32_t seed, std::vector<int64_t> strides = {1, 1},
               std::vector<int64_t> dilations = {1, 1}, int64_t group = 1) {
  SCOPED_TRACE(absl::StrCat("seed=", seed, " ", Describe(c), " strides=[", absl::StrJoin(strides, ","), "] dilations=[",
                            absl::StrJoin(dilations, ","), "] group=", group));
  const Inputs in = MakeInputs(c, seed, strides, dilations, group);
  ExpectCpuMatchesReference("Conv", in.tensors, in.attrs, kTolerance);
}

// Each case asserts the tile the kernel picks at AVX2 and above, so that it tests the path it names.
TEST_P(ConvWinogradTest, ShapesThatPickWinograd) {
  const bool avx2 = ActiveCpuIsa() >= CpuIsa::kAvx2;
  const struct {
    Case c;
    int tile;
  } cases[] = {
      {{.batch = 1, .channels = 16, .out_channels = 17, .h = 28, .w = 30}, 4},
      {{.batch = 1, .channels = 17, .out_channels = 23, .h = 30, .w = 25, .pads = {0, 2, 1, 0}, .bias = false}, 4},
      {{.batch = 2, .channels = 19, .out_channels = 16, .h = 14, .w = 14}, 2},
      {{.batch = 1, .channels = 24, .out_channels = 20, .h = 13, .w = 29, .pads = {1, 0, 1, 2}}, 2},
      {{.batch = 0, .channels = 16, .out_channels = 16, .h = 28, .w = 28}, 4},
      {{.batch = 1, .channels = 32, .out_channels = 32, .h = 7, .w = 7}, 0},  // too few tiles
  };
  uint32_t seed = 100;
  for (const auto& [c, tile] : cases) {
    EXPECT_EQ(ChooseWinogradTile(MakeWindow(c), c.channels, c.out_channels, 1), avx2 ? tile : 0) << Describe(c);
    CheckConv(c, seed++);
  }
}

TEST_P(ConvWinogradTest, ThreeByThreeShapesThatFallBack) {
  CheckConv({.batch = 1, .channels = 16, .out_channels = 16, .h = 9, .w = 9}, 110, {2, 2});
  CheckConv({.batch = 1, .channels = 16, .out_channels = 16, .h = 9, .w = 9}, 111, {1, 1}, {2, 2});
  CheckConv({.batch = 1, .channels = 32, .out_channels = 32, .h = 9, .w = 9}, 112, {1, 1}, {1, 1}, 2);
  CheckConv({.batch = 1, .channels = 3, .out_channels = 16, .h = 9, .w = 9}, 113);
  CheckConv({.batch = 1, .channels = 16, .out_channels = 4, .h = 9, .w = 9}, 114);
}

TEST_P(ConvWinogradTest, RandomShapes) {
  for (uint32_t seed = 200; seed < 210; ++seed) {
    std::mt19937 rng(seed);
    auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
    Case c{.batch = pick(1, 2),
           .channels = pick(14, 32),
           .out_channels = pick(14, 32),
           .h = pick(1, 34),
           .w = pick(1, 34)};
    c.pads = {pick(0, 2), pick(0, 2), pick(0, 2), pick(0, 2)};
    if (c.h + c.pads[0] + c.pads[2] < 3) c.pads[2] += 2;
    if (c.w + c.pads[1] + c.pads[3] < 3) c.pads[3] += 2;
    c.bias = pick(0, 1) == 1;
    CheckConv(c, seed);
  }
}

TSR_INSTANTIATE_FOR_ALL_ISAS(ConvWinogradTest);

}  // namespace
}  // namespace tsr

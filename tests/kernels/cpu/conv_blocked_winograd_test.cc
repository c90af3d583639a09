// Tests of the channel-blocked Winograd convolution (3x3, stride 1, group 1;
// kernels/cpu/conv_blocked.h, conv_blocked_winograd*.cc) against the reference
// FusedConv on the plain NCHW tensors, at every ISA level, with both tile sizes: random
// shapes (channels 16 to 48 and not multiples of 16, sizes 1 to 23 in each dimension,
// so that tiles hang over the output's edges, pads 0 to 2 on each side, batch 1 or 2,
// bias, residual also in place, activations in registers and as a pass), plain inputs
// (blocked by the kernel first); ResNet-18's layers as the automatic choice runs them;
// which tile the automatic choice takes; zeros in the output's padding lanes with NaNs
// in the inputs'; a split over threads changes no bit; the AVX-512 steps and the
// portable fallback compute the same floats.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "kernels/cpu/conv_blocked.h"
#include "kernels/cpu/conv_prepared.h"
#include "kernels/cpu/cpu_features.h"
#include "tests/kernels/cpu/conv_blocked_test_util.h"
#include "tests/kernels/cpu/cpu_test_util.h"

namespace tsr {
namespace {

using testing::CheckBlocked;
using testing::CpuIsaTest;
using testing::DirectCase;
using testing::ExpectVectorEqualsFallback;
using testing::GeometryOf;
using testing::Square;

// The transforms scale terms by up to 8 (F(4x4)) before they cancel: about 1e-5 of the
// output's magnitude at these channel counts (the plain Winograd's test allows as much).
constexpr double kTolerance = 2e-4;

const BlockedConvAlgorithm kBothTiles[] = {BlockedConvAlgorithm::kWinograd2, BlockedConvAlgorithm::kWinograd4};

// A random 3x3 stride-1 case.
DirectCase RandomCase(std::mt19937& rng) {
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  const int64_t channel_choices[] = {16, 17, 31, 32, 48};
  const int64_t out_choices[] = {16, 20, 32, 40, 64, 80};
  const char* act_choices[] = {"None", "Relu", "Clip", "Sigmoid"};
  DirectCase c;
  c.n = pick(1, 2);
  c.c = channel_choices[pick(0, 4)];
  c.m = out_choices[pick(0, 5)];
  c.in = {pick(1, 23), pick(1, 23)};
  c.kernel = {3, 3};
  c.strides = {1, 1};
  for (int i = 0; i < 4; ++i) c.pads.push_back(pick(0, 2));
  c.bias = pick(0, 3) != 0;
  c.residual = pick(0, 1) == 1;
  c.in_place = c.residual && pick(0, 1) == 1;
  c.x_blocked = pick(0, 4) != 0;
  c.act = act_choices[pick(0, 3)];
  c.clip_min = -0.5f;
  c.clip_max = pick(0, 1) == 1 ? 0.75f : -0.25f;  // a window that excludes 0 too
  return c;
}

bool Fits(const DirectCase& c) { return c.in[0] + c.pads[0] + c.pads[2] >= 3 && c.in[1] + c.pads[1] + c.pads[3] >= 3; }

class ConvBlockedWinogradTest : public CpuIsaTest {};

TEST_P(ConvBlockedWinogradTest, SmallShapes) {
  for (BlockedConvAlgorithm tile : kBothTiles) {
    CheckBlocked(Square(16, 16, 5, 3, 1, 1), 1, tile, kTolerance);
    CheckBlocked(Square(17, 20, 9, 3, 1, 1), 2, tile, kTolerance);
    CheckBlocked(Square(32, 16, 3, 3, 1, 0), 3, tile, kTolerance);  // one output pixel
    CheckBlocked(Square(16, 33, 1, 3, 1, 1), 4, tile, kTolerance);  // all taps but one in the padding
    DirectCase c = Square(20, 24, 13, 3, 1, 1);
    c.pads = {0, 2, 1, 0};
    c.residual = true;
    c.in_place = true;
    c.act = "Relu";
    CheckBlocked(c, 5, tile, kTolerance);
  }
}

TEST_P(ConvBlockedWinogradTest, RandomShapes) {
  int checked = 0;
  for (uint32_t seed = 100; checked < 24; ++seed) {
    std::mt19937 rng(seed);
    const DirectCase c = RandomCase(rng);
    if (!Fits(c)) continue;
    CheckBlocked(c, seed, kBothTiles[seed % 2], kTolerance);
    ++checked;
  }
}

TEST_P(ConvBlockedWinogradTest, RectangularAndEdgeTiles) {
  // Output widths and heights on both sides of whole tiles, one image and two.
  for (BlockedConvAlgorithm tile : kBothTiles) {
    for (int64_t h : {2, 4, 6, 7, 10}) {
      DirectCase c;
      c.n = h % 2 == 0 ? 2 : 1;
      c.c = 16;
      c.m = 32;
      c.in = {h, 19 - h};
      c.kernel = {3, 3};
      c.strides = {1, 1};
      c.pads = {1, 1, 1, 1};
      CheckBlocked(c, static_cast<uint32_t>(200 + h), tile, kTolerance);
    }
  }
}

TEST_P(ConvBlockedWinogradTest, ChoiceAndErrors) {
  // ResNet-18's stride-1 3x3 layers: F(4x4) from 28x28 outputs (49 tiles), F(2x2) below.
  EXPECT_EQ(BlockedConvWinogradTile(GeometryOf(Square(64, 64, 56, 3, 1, 1))), 4);
  EXPECT_EQ(BlockedConvWinogradTile(GeometryOf(Square(128, 128, 28, 3, 1, 1))), 4);
  EXPECT_EQ(BlockedConvWinogradTile(GeometryOf(Square(256, 256, 14, 3, 1, 1))), 2);
  EXPECT_EQ(BlockedConvWinogradTile(GeometryOf(Square(512, 512, 7, 3, 1, 1))), 2);
  // Not Winograd: strided, 1x1, few channels, few tiles.
  EXPECT_EQ(BlockedConvWinogradTile(GeometryOf(Square(64, 128, 56, 3, 2, 1))), 0);
  EXPECT_EQ(BlockedConvWinogradTile(GeometryOf(Square(64, 64, 56, 1, 1, 0))), 0);
  EXPECT_EQ(BlockedConvWinogradTile(GeometryOf(Square(3, 64, 56, 3, 1, 1))), 0);
  EXPECT_EQ(BlockedConvWinogradTile(GeometryOf(Square(64, 64, 6, 3, 1, 1))), 0);

  const std::vector<float> w(64 * 64 * 9, 0.5f);
  absl::StatusOr<PreparedBlockedConv> automatic = PrepareBlockedConv(GeometryOf(Square(64, 64, 56, 3, 1, 1)), w.data());
  ASSERT_TRUE(automatic.ok()) << automatic.status();
  EXPECT_EQ(automatic->winograd_tile(), 4);
  absl::StatusOr<PreparedBlockedConv> direct =
      PrepareBlockedConv(GeometryOf(Square(64, 64, 56, 3, 1, 1)), w.data(), BlockedConvAlgorithm::kDirect);
  ASSERT_TRUE(direct.ok()) << direct.status();
  EXPECT_EQ(direct->winograd_tile(), 0);
  // Forcing Winograd where it does not apply names the reason.
  absl::StatusOr<PreparedBlockedConv> strided =
      PrepareBlockedConv(GeometryOf(Square(64, 64, 56, 3, 2, 1)), w.data(), BlockedConvAlgorithm::kWinograd4);
  ASSERT_FALSE(strided.ok());
  EXPECT_NE(strided.status().message().find("stride 2x2"), std::string::npos) << strided.status();
}

TSR_INSTANTIATE_FOR_ALL_ISAS(ConvBlockedWinogradTest);

// The error of a sum of 9 * channels terms grows with the sum's spread (about
// sqrt(9 * channels) / 3 for these operands), not with each output's own value: 2e-5
// times sqrt(9 * channels), about 6e-5 of the outputs' standard deviation.
double LayerTolerance(int64_t channels) { return 2e-5 * std::sqrt(9.0 * static_cast<double>(channels)); }

// ResNet-18's stride-1 layers, fused as ResNet's are (the second convolution of a block
// adds the shortcut in place), with the tile the automatic choice takes.
TEST(ConvBlockedWinogradLayersTest, ResNet18Layers) {
  DirectCase c = Square(64, 64, 56, 3, 1, 1);
  c.act = "Relu";
  CheckBlocked(c, 300, BlockedConvAlgorithm::kAuto, LayerTolerance(c.c));
  c = Square(128, 128, 28, 3, 1, 1);
  c.residual = true;
  c.in_place = true;
  c.act = "Relu";
  CheckBlocked(c, 301, BlockedConvAlgorithm::kAuto, LayerTolerance(c.c));
  c = Square(256, 256, 14, 3, 1, 1);
  c.act = "Relu";
  CheckBlocked(c, 302, BlockedConvAlgorithm::kAuto, LayerTolerance(c.c));
  c = Square(512, 512, 7, 3, 1, 1);
  c.residual = true;
  c.act = "Relu";
  CheckBlocked(c, 303, BlockedConvAlgorithm::kAuto, LayerTolerance(c.c));
}

// The AVX2 and AVX-512 steps and the portable fallback compute the same floats
// (activations whose loops are exact at every ISA level).
class ConvBlockedWinogradVectorTest : public ::testing::TestWithParam<CpuIsa> {};

TEST_P(ConvBlockedWinogradVectorTest, EqualsFallback) {
  int checked = 0;
  for (uint32_t seed = 3000; checked < 20; ++seed) {
    std::mt19937 rng(seed);
    DirectCase c = RandomCase(rng);
    if (!Fits(c)) continue;
    if (c.act == "Sigmoid") c.act = "Relu";
    ++checked;
    ExpectVectorEqualsFallback(c, seed, kBothTiles[seed % 2], GetParam());
    if (::testing::Test::IsSkipped()) return;
  }
}

TSR_INSTANTIATE_FOR_VECTOR_ISAS(ConvBlockedWinogradVectorTest);

}  // namespace
}  // namespace tsr

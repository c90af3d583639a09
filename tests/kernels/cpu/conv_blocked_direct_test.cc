// Tests of the channel-blocked direct convolution (group 1; kernels/cpu/conv_blocked.h,
// conv_blocked_direct*.cc) against the reference FusedConv on the plain NCHW tensors,
// at every ISA level: random shapes (channels 1 to 64, output channels 1 to 40, sizes
// 1 to 30, square and not, kernels 1x1 to 7x7 and 1x3, strides 1 to 3, asymmetric pads,
// 1-D, plain or blocked input, bias, residual (also in place), activations), ResNet-18's
// and MobileNetV2's layer shapes; that the padding lanes of the output are zeros even
// when the inputs' padding lanes hold NaNs; that a split over threads changes no bit;
// and that the AVX-512 kernel and the portable fallback compute the same floats.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/attribute.h"
#include "graph/tensor.h"
#include "gtest/gtest.h"
#include "kernels/cpu/conv_blocked.h"
#include "kernels/cpu/conv_prepared.h"
#include "kernels/cpu/conv_window.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/fused_activation.h"
#include "kernels/kernel.h"
#include "kernels/run_op.h"
#include "tests/kernels/cpu/conv_blocked_test_util.h"
#include "tests/kernels/cpu/cpu_test_util.h"

namespace tsr {
namespace {

using testing::CpuIsaTest;
using testing::DirectCase;
using testing::ExpectVectorEqualsFallback;
using testing::OutSize;
using testing::Square;

// f32 sums of up to 64 * 49 terms, in another order than the reference's.
constexpr double kTolerance = 1e-4;

void CheckDirect(const DirectCase& c, uint32_t seed) {
  testing::CheckBlocked(c, seed, BlockedConvAlgorithm::kDirect, kTolerance);
}

class ConvBlockedDirectTest : public CpuIsaTest {};

TEST_P(ConvBlockedDirectTest, SmallShapes) {
  CheckDirect(Square(16, 16, 5, 3, 1, 1), 1);
  CheckDirect(Square(3, 5, 7, 3, 2, 1), 2);
  CheckDirect(Square(17, 24, 9, 1, 1, 0), 3);
  CheckDirect(Square(33, 40, 6, 1, 2, 0), 4);
  CheckDirect(Square(1, 1, 1, 1, 1, 0), 5);
}

// Pads larger than the kernel reaches: whole output rows and columns see only padding
// and equal the bias (plus residual, through the activation).
TEST_P(ConvBlockedDirectTest, PaddingOnlyOutputs) {
  DirectCase c = Square(5, 7, 4, 2, 1, 0);
  c.pads = {3, 4, 2, 5};
  c.residual = true;
  c.act = "Sigmoid";
  CheckDirect(c, 10);
  c.strides = {2, 3};
  c.x_blocked = false;
  CheckDirect(c, 11);
}

// Rows of widths around the strip widths (6, 8, 12, 28) for every output-block count,
// at strides 1 and 2 with and without padding.
TEST_P(ConvBlockedDirectTest, StripWidths) {
  uint32_t seed = 100;
  for (int64_t m : {16, 40, 64}) {
    for (int64_t w : {5, 6, 7, 9, 13, 27, 29, 57}) {
      for (int64_t stride : {1, 2}) {
        DirectCase c = Square(17, m, 3, 3, stride, 1);
        c.in = {3, w};
        CheckDirect(c, seed++);
      }
    }
  }
}

TEST_P(ConvBlockedDirectTest, EpilogueVariants) {
  uint32_t seed = 200;
  for (const char* act : {"None", "Relu", "Clip", "Sigmoid"}) {
    for (int variant = 0; variant < 4; ++variant) {
      DirectCase c = Square(20, 21, 7, 3, 1, 1);
      c.act = act;
      c.bias = variant & 1;
      c.residual = variant >= 2;
      c.in_place = variant == 3;
      if (variant == 2) c.clip_min = 0.25f;  // act(0) != 0: the padding lanes are zeroed again
      CheckDirect(c, seed++);
      c.x_blocked = false;
      c.kernel = {1, 1};
      c.pads = {0, 0, 0, 0};
      CheckDirect(c, seed++);
    }
  }
}

// Strided 1x1 convolutions without padding (ResNet's downsampling shortcuts), which AVX2
// runs as a pointwise convolution over the pixels they read: narrow and wide rows,
// strides that leave input rows and columns unread at the end, a residual in place.
TEST_P(ConvBlockedDirectTest, StridedPointwise) {
  uint32_t seed = 400;
  for (int64_t size : {7, 14, 15, 29}) {
    DirectCase c = Square(33, 40, size, 1, 2, 0);
    c.act = size % 2 == 0 ? "Relu" : "Clip";
    c.residual = size > 14;
    c.in_place = size == 29;
    CheckDirect(c, seed++);
    c.strides = {3, 2};
    c.n = 2;
    CheckDirect(c, seed++);
  }
}

// Plain inputs of at most 16 channels under kernels wider than one column (a network's
// first convolution), which AVX2 runs on a copy with the channels interleaved and the
// row padding as zeros: channel counts 1 to 16, kernels 1 to 7 columns wide and 1-D,
// strides 1 to 3, asymmetric pads (right pads past what the last output reads, left
// pads that leave whole outputs on padding), two images.
TEST_P(ConvBlockedDirectTest, PlainInputFewChannels) {
  uint32_t seed = 500;
  const int64_t kernels[][2] = {{3, 3}, {7, 7}, {1, 5}, {5, 2}, {3, 1}};
  for (int64_t channels : {1, 2, 3, 4, 9, 16}) {
    for (const int64_t* k : kernels) {
      for (int64_t stride : {1, 2, 3}) {
        DirectCase c;
        c.n = 2;
        c.c = channels;
        // 130 output channels: the interleaved copy is taken where each input element
        // feeds >= 384 multiply-adds (3x3 and wider at stride 1, 7x7 at 2); else not.
        c.m = seed % 2 == 0 ? 130 : 5 + 7 * channels;
        c.in = {11, 19 + channels};
        c.kernel = {k[0], k[1]};
        c.strides = {stride, stride == 3 ? 2 : stride};
        c.pads = {k[0] / 2, k[1] / 2 + (seed % 3 == 0 ? k[1] : 0), k[0] / 2, seed % 2 == 0 ? k[1] + 1 : 0};
        c.x_blocked = false;
        c.bias = seed % 3 != 1;
        c.act = seed % 4 == 0 ? "Relu" : "None";
        CheckDirect(c, seed++);
      }
    }
  }
  CheckDirect({.c = 3, .m = 130, .in = {50}, .kernel = {7}, .strides = {1}, .pads = {3, 2}, .x_blocked = false}, 599);
}

TEST_P(ConvBlockedDirectTest, OneDimensional) {
  CheckDirect({.n = 2, .c = 5, .m = 17, .in = {37}, .kernel = {3}, .strides = {2}, .pads = {1, 0}}, 300);
  CheckDirect({.c = 33, .m = 5, .in = {19}, .kernel = {5}, .strides = {1}, .pads = {2, 3}, .residual = true}, 301);
  CheckDirect({.c = 16, .m = 40, .in = {64}, .kernel = {1}, .strides = {1}, .pads = {0, 0}, .x_blocked = false}, 302);
}

// Random shapes: every attribute varied at once.
TEST_P(ConvBlockedDirectTest, RandomShapes) {
  const int64_t channel_choices[] = {1, 3, 16, 17, 33, 64};
  const int64_t out_choices[] = {1, 5, 16, 24, 40};
  const int64_t size_choices[] = {1, 2, 3, 7, 17, 30};
  const int64_t kernel_choices[][2] = {{1, 1}, {3, 3}, {5, 5}, {7, 7}, {1, 3}};
  const char* act_choices[] = {"None", "Relu", "Clip", "Sigmoid"};
  int checked = 0;
  for (uint32_t seed = 1000; checked < 60; ++seed) {
    std::mt19937 rng(seed);
    auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
    DirectCase c;
    c.n = pick(1, 2);
    c.c = channel_choices[pick(0, 5)];
    c.m = out_choices[pick(0, 4)];
    const bool one_d = pick(0, 4) == 0;
    const int64_t* k = kernel_choices[pick(0, 4)];
    if (one_d) {
      c.in = {size_choices[pick(0, 5)]};
      c.kernel = {k[1]};
    } else {
      c.in = {size_choices[pick(0, 5)], size_choices[pick(0, 5)]};
      c.kernel = {k[0], k[1]};
    }
    const size_t rank = c.in.size();
    for (size_t d = 0; d < rank; ++d) c.strides.push_back(pick(1, 3));
    for (size_t i = 0; i < 2 * rank; ++i) c.pads.push_back(pick(0, c.kernel[i % rank] / 2 + 1));
    c.x_blocked = c.c > 3 || pick(0, 1) == 1;
    c.bias = pick(0, 1) == 1;
    c.residual = pick(0, 1) == 1;
    c.in_place = c.residual && pick(0, 1) == 1;
    c.act = act_choices[pick(0, 3)];
    if (c.act == std::string("Clip") && pick(0, 1) == 1) c.clip_min = 0.5f;
    if (OutSize(c, 0) < 1 || OutSize(c, rank - 1) < 1) continue;
    CheckDirect(c, seed);
    ++checked;
  }
}

// ResNet-18's and MobileNetV2's layers (bench/conv_bench.cc), fused as ResNet's and
// MobileNetV2's are.
TEST_P(ConvBlockedDirectTest, NetworkLayers) {
  DirectCase c = Square(64, 128, 56, 3, 2, 1);
  c.act = "Relu";
  CheckDirect(c, 400);
  c = Square(512, 512, 7, 3, 1, 1);
  c.residual = true;
  c.in_place = true;
  c.act = "Relu";
  CheckDirect(c, 401);
  c = Square(256, 512, 14, 1, 2, 0);
  CheckDirect(c, 402);
  c = Square(16, 96, 112, 1, 1, 0);
  c.act = "Clip";
  CheckDirect(c, 403);
  c = Square(960, 320, 7, 1, 1, 0);
  c.residual = true;
  CheckDirect(c, 404);
  c = Square(3, 32, 224, 3, 2, 1);
  c.x_blocked = false;
  c.act = "Clip";
  CheckDirect(c, 405);
  c = Square(3, 64, 224, 7, 2, 3);
  c.x_blocked = false;
  c.act = "Relu";
  CheckDirect(c, 406);
}

TSR_INSTANTIATE_FOR_ALL_ISAS(ConvBlockedDirectTest);

// The AVX2 and AVX-512 kernels (strips of every width and output-block count, edge
// strips) and the portable fallback compute the same floats (activations whose loops are
// exact at every ISA level).
class ConvBlockedDirectVectorTest : public ::testing::TestWithParam<CpuIsa> {};

TEST_P(ConvBlockedDirectVectorTest, EqualsFallback) {
  const int64_t channel_choices[] = {1, 3, 16, 17, 33};
  const int64_t out_choices[] = {1, 5, 16, 24, 40, 64};
  const char* act_choices[] = {"None", "Relu", "Clip"};
  for (uint32_t seed = 2000; seed < 2040; ++seed) {
    std::mt19937 rng(seed);
    auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
    DirectCase c;
    c.c = channel_choices[pick(0, 4)];
    c.m = out_choices[pick(0, 5)];
    const int64_t kernel = 2 * pick(0, 3) + 1;
    c.in = {pick(1, 12), pick(1, 40)};
    c.kernel = {kernel, kernel};
    c.strides = {pick(1, 3), pick(1, 3)};
    for (int i = 0; i < 4; ++i) c.pads.push_back(pick(0, kernel / 2 + 1));
    if (OutSize(c, 0) < 1 || OutSize(c, 1) < 1) continue;
    c.x_blocked = c.c > 3 || pick(0, 1) == 1;
    c.residual = pick(0, 1) == 1;
    c.act = act_choices[pick(0, 2)];
    ExpectVectorEqualsFallback(c, seed, BlockedConvAlgorithm::kDirect, GetParam());
    if (::testing::Test::IsSkipped()) return;
  }
  // A plain RGB input under 7x7/2 (channels interleaved, in AVX2), with a residual.
  DirectCase rgb = Square(3, 40, 23, 7, 2, 3);
  rgb.x_blocked = false;
  rgb.residual = true;
  ExpectVectorEqualsFallback(rgb, 2099, BlockedConvAlgorithm::kDirect, GetParam());
  // Strided 1x1 (gathered, then pointwise, in AVX2).
  DirectCase c = Square(40, 24, 13, 1, 2, 0);
  c.residual = true;
  c.act = "Relu";
  ExpectVectorEqualsFallback(c, 2100, BlockedConvAlgorithm::kDirect, GetParam());
}

TSR_INSTANTIATE_FOR_VECTOR_ISAS(ConvBlockedDirectVectorTest);

}  // namespace
}  // namespace tsr

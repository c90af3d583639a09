// Tests of the channel-blocked depthwise convolution (kernels/cpu/conv_blocked.h with
// group == channels == out_channels; conv_blocked_depthwise*.cc): the blocked forward pass
// on BlockChannels(x), unblocked, against the reference FusedConv on the plain tensors,
// at every ISA level -- random shapes (channels 2 to 144 with partial last blocks, sizes
// 1 to 30 and non-square, kernels 1x1 to 7x7 and 3x1, strides 1 to 3, asymmetric pads
// up to past the kernel's reach, 1-D, bias, residual (also in place), activations) and
// MobileNetV2's depthwise layers -- that the lanes past the channels come out zero,
// that a split over threads and the AVX-512 path give the very same floats as one thread
// and the portable path.
#include <stdlib.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
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
#include "tests/kernels/cpu/cpu_test_util.h"

namespace tsr {
namespace {

using testing::CpuIsaTest;
using testing::ExpectSameTensor;
using testing::RandomF32;
using testing::ThreadedParallelFor;

// f32 sums in tap order against the reference's.
constexpr double kTolerance = 1e-4;

enum class Residual { kNone, kSeparate, kInPlace };

struct DwCase {
  int64_t n = 1, c = 16;
  int64_t in_h = 8, in_w = 8;
  int64_t kernel_h = 3, kernel_w = 3;
  int64_t stride_h = 1, stride_w = 1;
  int64_t pad_top = 1, pad_left = 1, pad_bottom = 1, pad_right = 1;
  bool bias = true;
  Residual residual = Residual::kNone;
  std::string activation = "None";
  float clip_min = 0.0f, clip_max = 6.0f;

  int64_t out_h() const { return (in_h + pad_top + pad_bottom - kernel_h) / stride_h + 1; }
  int64_t out_w() const { return (in_w + pad_left + pad_right - kernel_w) / stride_w + 1; }
  bool fits() const { return in_h + pad_top + pad_bottom >= kernel_h && in_w + pad_left + pad_right >= kernel_w; }
};

std::string Describe(const DwCase& c) {
  return absl::StrCat("n=", c.n, " c=", c.c, " in=", c.in_h, "x", c.in_w, " kernel=", c.kernel_h, "x", c.kernel_w,
                      " strides=", c.stride_h, ",", c.stride_w, " pads(t,l,b,r)=", c.pad_top, ",", c.pad_left, ",",
                      c.pad_bottom, ",", c.pad_right, " bias=", c.bias, " residual=", static_cast<int>(c.residual),
                      " activation=", c.activation);
}

ConvGeometry GeometryOf(const DwCase& c) {
  ConvGeometry g;
  g.window = Window3d{.in = {1, c.in_h, c.in_w},
                      .out = {1, c.out_h(), c.out_w()},
                      .kernel = {1, c.kernel_h, c.kernel_w},
                      .stride = {1, c.stride_h, c.stride_w},
                      .dilation = {1, 1, 1},
                      .pad_begin = {0, c.pad_top, c.pad_left},
                      .pad_end = {0, c.pad_bottom, c.pad_right}};
  g.channels = g.out_channels = g.group = c.c;
  return g;
}

FusedActivation ActivationOf(const DwCase& c) {
  FusedActivation act;
  if (c.activation == "Relu") act.kind = FusedActivationKind::kRelu;
  if (c.activation == "Sigmoid") act.kind = FusedActivationKind::kSigmoid;
  if (c.activation == "Clip") {
    act.kind = FusedActivationKind::kClip;
    act.min = c.clip_min;
    act.max = c.clip_max;
  }
  return act;
}

// The case's inputs, plain (NCHW).
struct Inputs {
  Tensor x, weights, bias, residual;
};

Inputs MakeInputs(const DwCase& c, uint32_t seed) {
  std::mt19937 rng(seed);
  return {RandomF32(rng, Shape({c.n, c.c, c.in_h, c.in_w})), RandomF32(rng, Shape({c.c, 1, c.kernel_h, c.kernel_w})),
          RandomF32(rng, Shape({c.c})), RandomF32(rng, Shape({c.n, c.c, c.out_h(), c.out_w()}))};
}

// The reference FusedConv on the plain tensors.
Tensor Reference(const DwCase& c, const Inputs& in) {
  std::vector<std::optional<Tensor>> inputs = {in.x, in.weights};
  inputs.push_back(c.bias ? std::optional<Tensor>(in.bias) : std::nullopt);
  if (c.residual != Residual::kNone) inputs.push_back(in.residual);
  AttrMap attrs{{"group", AttrValue::Int(c.c)},
                {"strides", AttrValue::Ints({c.stride_h, c.stride_w})},
                {"pads", AttrValue::Ints({c.pad_top, c.pad_left, c.pad_bottom, c.pad_right})},
                {"activation", AttrValue::String(c.activation)}};
  if (c.activation == "Clip") {
    attrs.emplace("min", AttrValue::Float(c.clip_min));
    attrs.emplace("max", AttrValue::Float(c.clip_max));
  }
  RunOpOptions reference;
  reference.device = kReferenceDevice;
  absl::StatusOr<std::vector<Tensor>> y = RunOp("FusedConv", inputs, attrs, reference);
  EXPECT_TRUE(y.ok()) << y.status();
  return y.ok() ? (*y)[0] : Tensor();
}

// BlockedConvForward on the blocked inputs, with `parallel_for`: the blocked output
// ([n, ChannelBlocks(c), out_h, out_w, 16]). `poison` fills the padding lanes of x and
// of the residual with NaN, which must not reach the channels' lanes nor stay in y's.
std::vector<float> Blocked(const DwCase& c, const Inputs& in, const ParallelForFn& parallel_for, bool poison = false) {
  const ConvGeometry g = GeometryOf(c);
  absl::StatusOr<PreparedBlockedConv> prepared = PrepareBlockedConv(g, in.weights.data<float>());
  EXPECT_TRUE(prepared.ok()) << prepared.status();
  if (!prepared.ok()) return {};
  EXPECT_TRUE(prepared->depthwise());
  const int64_t blocks = ChannelBlocks(c.c), in_pixels = c.in_h * c.in_w, out_pixels = c.out_h() * c.out_w();
  std::vector<float> x(static_cast<size_t>(c.n * blocks * in_pixels * kChannelBlock));
  std::vector<float> residual(static_cast<size_t>(c.n * blocks * out_pixels * kChannelBlock));
  BlockChannels(c.n, c.c, in_pixels, in.x.data<float>(), x.data());
  BlockChannels(c.n, c.c, out_pixels, in.residual.data<float>(), residual.data());
  if (poison) {
    for (std::vector<float>* v : {&x, &residual}) {
      for (size_t i = 0; i < v->size(); ++i) {
        const int64_t channel =
            (static_cast<int64_t>(i) / ((v == &x ? in_pixels : out_pixels) * kChannelBlock)) % blocks * kChannelBlock +
            static_cast<int64_t>(i) % kChannelBlock;
        if (channel >= c.c) (*v)[i] = std::nanf("");
      }
    }
  }
  // Garbage in y, but for the in-place residual, which y holds.
  std::vector<float> y =
      c.residual == Residual::kInPlace ? residual : std::vector<float>(residual.size(), std::nanf(""));
  const float* r = c.residual == Residual::kSeparate  ? residual.data()
                   : c.residual == Residual::kInPlace ? y.data()
                                                      : nullptr;
  BlockedConvForward(*prepared, c.n, x.data(), /*x_blocked=*/true, c.bias ? in.bias.data<float>() : nullptr, r,
                     ActivationOf(c), y.data(), parallel_for);
  return y;
}

Tensor Unblocked(const DwCase& c, const std::vector<float>& y) {
  Tensor t(DType::kF32, Shape({c.n, c.c, c.out_h(), c.out_w()}));
  UnblockChannels(c.n, c.c, c.out_h() * c.out_w(), y.data(), t.data<float>());
  return t;
}

// The lanes past the channels hold exactly +0.
void ExpectZeroPaddingLanes(const DwCase& c, const std::vector<float>& y) {
  const int64_t blocks = ChannelBlocks(c.c), pixels = c.out_h() * c.out_w();
  for (int64_t nb = 0; nb < c.n * blocks; ++nb) {
    const int64_t first = nb % blocks * kChannelBlock;
    for (int64_t p = 0; p < pixels; ++p) {
      for (int64_t l = 0; l < kChannelBlock; ++l) {
        if (first + l < c.c) continue;
        const float v = y[(nb * pixels + p) * kChannelBlock + l];
        ASSERT_TRUE(v == 0.0f && !std::signbit(v))
            << "padding lane " << l << " of block " << nb << " pixel " << p << " is " << v;
      }
    }
  }
}

bool BitwiseEqual(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// The blocked kernel against the reference, inline and over 3 threads (bitwise the same).
void CheckCase(const DwCase& c, uint32_t seed) {
  SCOPED_TRACE(absl::StrCat("seed=", seed, " ", Describe(c), " isa=", CpuIsaName(ActiveCpuIsa())));
  ASSERT_TRUE(BlockedConvApplies(GeometryOf(c)));
  const Inputs in = MakeInputs(c, seed);
  const Tensor want = Reference(c, in);
  const std::vector<float> inline_y = Blocked(c, in, nullptr);
  ASSERT_FALSE(inline_y.empty());
  ExpectSameTensor(Unblocked(c, inline_y), want, kTolerance, "blocked depthwise");
  ExpectZeroPaddingLanes(c, inline_y);
  const std::vector<float> threaded_y = Blocked(c, in, ThreadedParallelFor(3));
  EXPECT_TRUE(BitwiseEqual(inline_y, threaded_y)) << "3 threads differ from one";
}

class ConvBlockedDepthwiseTest : public CpuIsaTest {};

TEST_P(ConvBlockedDepthwiseTest, SmallCases) {
  CheckCase({}, 1);
  CheckCase({.c = 17, .in_h = 7, .in_w = 9, .bias = false}, 2);
  CheckCase({.c = 3, .in_h = 1, .in_w = 1}, 3);
  CheckCase({.c = 33, .in_h = 30, .in_w = 17, .stride_h = 2, .stride_w = 2, .pad_bottom = 0, .pad_right = 0}, 4);
  CheckCase({.c = 2,
             .in_h = 2,
             .in_w = 3,
             .kernel_h = 1,
             .kernel_w = 1,
             .pad_top = 0,
             .pad_left = 0,
             .pad_bottom = 0,
             .pad_right = 0},
            5);
}

// Pads past the kernel's reach: whole rows and columns see only padding (the bias,
// then the epilogue), others some of it.
TEST_P(ConvBlockedDepthwiseTest, LargePads) {
  CheckCase({.c = 17, .in_h = 4, .in_w = 5, .pad_top = 4, .pad_left = 3, .pad_bottom = 5, .pad_right = 6}, 10);
  CheckCase({.c = 3,
             .in_h = 3,
             .in_w = 7,
             .kernel_h = 5,
             .kernel_w = 5,
             .stride_h = 2,
             .stride_w = 3,
             .pad_top = 4,
             .pad_left = 1,
             .pad_bottom = 0,
             .pad_right = 4,
             .activation = "Sigmoid"},
            11);
  CheckCase({.c = 16,
             .in_h = 2,
             .in_w = 2,
             .kernel_h = 7,
             .kernel_w = 7,
             .pad_top = 3,
             .pad_left = 6,
             .pad_bottom = 5,
             .pad_right = 2,
             .residual = Residual::kSeparate,
             .activation = "Clip",
             .clip_min = 0.25f},
            12);
}

// One spatial dimension (H = 1, kernel height 1).
TEST_P(ConvBlockedDepthwiseTest, OneDimensional) {
  CheckCase({.c = 33,
             .in_h = 1,
             .in_w = 30,
             .kernel_h = 1,
             .kernel_w = 5,
             .stride_w = 2,
             .pad_top = 0,
             .pad_left = 2,
             .pad_bottom = 0,
             .pad_right = 1},
            20);
  CheckCase({.n = 2,
             .c = 3,
             .in_h = 1,
             .in_w = 17,
             .kernel_h = 1,
             .kernel_w = 7,
             .stride_w = 3,
             .pad_top = 0,
             .pad_left = 3,
             .pad_bottom = 0,
             .pad_right = 3,
             .residual = Residual::kInPlace,
             .activation = "Relu"},
            21);
}

// Residual (separate and in place) with each activation, and the padding lanes of a
// partial last block: Sigmoid(0) = 0.5 and Clip(0.25, 6)(0) = 0.25 must not remain there.
TEST_P(ConvBlockedDepthwiseTest, EpilogueAndPaddingLanes) {
  uint32_t seed = 30;
  for (Residual residual : {Residual::kNone, Residual::kSeparate, Residual::kInPlace}) {
    for (const char* act : {"None", "Relu", "Clip", "Sigmoid"}) {
      DwCase c{.n = 2, .c = 17, .in_h = 9, .in_w = 11, .stride_h = 2, .residual = residual, .activation = act};
      c.clip_min = 0.25f;
      CheckCase(c, seed++);
    }
  }
}

// NaN in the padding lanes of x and the residual stays there: the channels' lanes come
// out as with zeros, the padding lanes as zeros.
TEST_P(ConvBlockedDepthwiseTest, PaddingLanesOfInputsIgnored) {
  const DwCase c{.c = 19, .in_h = 6, .in_w = 7, .residual = Residual::kSeparate, .activation = "Relu"};
  const Inputs in = MakeInputs(c, 40);
  const std::vector<float> clean = Blocked(c, in, nullptr), poisoned = Blocked(c, in, nullptr, /*poison=*/true);
  ExpectZeroPaddingLanes(c, poisoned);
  EXPECT_TRUE(BitwiseEqual(clean, poisoned));
}

// MobileNetV2's depthwise 3x3 layers at full size (channels, size, stride), with
// ReLU6 (Clip(0, 6)) as the network has it.
TEST_P(ConvBlockedDepthwiseTest, MobileNetV2Layers) {
  const int64_t layers[][3] = {{32, 112, 1}, {96, 112, 2}, {144, 56, 1}, {144, 56, 2},
                               {192, 28, 1}, {384, 14, 1}, {576, 14, 2}, {960, 7, 1}};
  uint32_t seed = 50;
  for (const auto& l : layers) {
    CheckCase({.c = l[0], .in_h = l[1], .in_w = l[1], .stride_h = l[2], .stride_w = l[2], .activation = "Clip"},
              seed++);
  }
}

// Random shapes: every attribute varied at once.
TEST_P(ConvBlockedDepthwiseTest, RandomShapes) {
  // One channel is group 1: the direct kernel's (BlockedConvApplies).
  const int64_t channels[] = {2, 3, 16, 17, 33, 144};
  const int64_t sizes[] = {1, 2, 3, 7, 17, 30};
  const int64_t kernels[][2] = {{1, 1}, {3, 3}, {5, 5}, {7, 7}, {3, 1}, {1, 3}};
  const char* activations[] = {"None", "Relu", "Clip", "Sigmoid"};
  int checked = 0;
  for (uint32_t seed = 1000; checked < 60; ++seed) {
    std::mt19937 rng(seed);
    auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
    DwCase c;
    c.n = pick(1, 2);
    c.c = channels[pick(0, 5)];
    c.in_w = sizes[pick(0, 5)];
    c.in_h = pick(0, 4) == 0 ? 1 : sizes[pick(0, 5)];
    const auto& k = kernels[pick(0, 5)];
    c.kernel_h = c.in_h == 1 && pick(0, 1) == 0 ? 1 : k[0];
    c.kernel_w = k[1];
    c.stride_h = pick(1, 3);
    c.stride_w = pick(1, 3);
    c.pad_top = pick(0, c.kernel_h);
    c.pad_bottom = pick(0, c.kernel_h);
    c.pad_left = pick(0, c.kernel_w);
    c.pad_right = pick(0, c.kernel_w);
    c.bias = pick(0, 1) == 1;
    c.residual = static_cast<Residual>(pick(0, 2));
    c.activation = activations[pick(0, 3)];
    if (!c.fits()) continue;
    // Fewer big cases: the reference is slow on them.
    if (c.c == 144 && c.in_h * c.in_w > 100 && pick(0, 1) == 0) continue;
    CheckCase(c, seed);
    if (::testing::Test::HasFatalFailure()) return;
    ++checked;
  }
}

TSR_INSTANTIATE_FOR_ALL_ISAS(ConvBlockedDepthwiseTest);

// The AVX2 and AVX-512 paths compute the portable path's floats bit for bit (activations
// whose kernels are exact at every ISA level).
class ConvBlockedDepthwiseVectorTest : public ::testing::TestWithParam<CpuIsa> {};

TEST_P(ConvBlockedDepthwiseVectorTest, BitwiseThePortablePath) {
  const CpuIsa isa = GetParam();
  if (SupportedCpuIsa(isa) != isa) GTEST_SKIP() << "CPU lacks " << CpuIsaName(isa);
  const DwCase cases[] = {
      {.n = 2, .c = 17, .in_h = 13, .in_w = 30},
      {.c = 33,
       .in_h = 17,
       .in_w = 7,
       .kernel_h = 5,
       .kernel_w = 5,
       .stride_h = 2,
       .stride_w = 2,
       .pad_top = 2,
       .pad_left = 3,
       .pad_bottom = 0,
       .pad_right = 1,
       .bias = false,
       .residual = Residual::kSeparate},
      {.c = 16,
       .in_h = 30,
       .in_w = 30,
       .kernel_h = 7,
       .kernel_w = 7,
       .stride_h = 3,
       .stride_w = 3,
       .pad_top = 3,
       .pad_left = 7,
       .pad_bottom = 3,
       .pad_right = 2,
       .residual = Residual::kInPlace,
       .activation = "Clip"},
      {.c = 3,
       .in_h = 1,
       .in_w = 17,
       .kernel_h = 1,
       .kernel_w = 3,
       .pad_top = 0,
       .pad_bottom = 0,
       .activation = "Relu"},
      {.c = 144, .in_h = 56, .in_w = 56, .stride_h = 2, .stride_w = 2, .pad_top = 0, .pad_left = 0},
      {.c = 32, .in_h = 112, .in_w = 112, .residual = Residual::kSeparate, .activation = "Clip"},
      {.c = 40, .in_h = 7, .in_w = 7, .kernel_h = 3, .kernel_w = 1, .pad_left = 0, .pad_right = 0},
      // Rows of every tile width and height left over at AVX2's tiles (6 x 1, 3 x 2, ...).
      {.c = 24, .in_h = 11, .in_w = 11, .activation = "Relu"},
      {.c = 20, .in_h = 9, .in_w = 15, .kernel_h = 5, .kernel_w = 5, .pad_top = 2, .pad_left = 2},
      // Small outputs of many blocks: the kernel's tiles run through the blocks, several
      // at once.
      {.c = 160, .in_h = 7, .in_w = 7, .residual = Residual::kInPlace, .activation = "Relu"},
      {.n = 2,
       .c = 100,
       .in_h = 5,
       .in_w = 9,
       .kernel_h = 5,
       .kernel_w = 5,
       .stride_h = 3,
       .stride_w = 3,
       .pad_top = 2,
       .pad_left = 2,
       .pad_bottom = 2,
       .pad_right = 2,
       .residual = Residual::kSeparate},
  };
  uint32_t seed = 2000;
  for (const DwCase& c : cases) {
    SCOPED_TRACE(absl::StrCat("seed=", seed, " ", Describe(c)));
    const Inputs in = MakeInputs(c, seed++);
    ::setenv("TESSERA_CPU_ISA", "scalar", 1);
    const std::vector<float> portable = Blocked(c, in, nullptr);
    ::setenv("TESSERA_CPU_ISA", std::string(CpuIsaName(isa)).c_str(), 1);
    const std::vector<float> vector = Blocked(c, in, ThreadedParallelFor(2));
    ::unsetenv("TESSERA_CPU_ISA");
    ASSERT_EQ(portable.size(), vector.size());
    for (size_t i = 0; i < portable.size(); ++i) {
      ASSERT_EQ(std::memcmp(&portable[i], &vector[i], sizeof(float)), 0)
          << "element " << i << ": " << portable[i] << " vs " << vector[i];
    }
  }
}

TSR_INSTANTIATE_FOR_VECTOR_ISAS(ConvBlockedDepthwiseVectorTest);

}  // namespace
}  // namespace tsr

// Tests of the fused inverted-residual block (kernels/cpu/conv_blocked_inverted_residual.h):
// at every ISA level, on random blocks (with and without the expansion, partial channel
// blocks, strides 1 and 2, 3x3 and 5x5 windows, images from 1 to 30 rows so that bands
// split at every offset, batch 2, residual, activations applied in registers and as a
// pass) and on MobileNetV2's first blocks, Y is the very same floats as the three
// BlockedConvForward calls it replaces -- on one thread (every band takes over its
// predecessor's expanded rows) and split over three threads (each starts afresh);
// and BlockedInvertedResidualApplies refuses chains that do not fit.
#include "kernels/cpu/conv_blocked_inverted_residual.h"

#include <cstdint>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/ops/blocked_layout.h"
#include "graph/tensor.h"
#include "gtest/gtest.h"
#include "kernels/cpu/conv_blocked.h"
#include "kernels/cpu/cpu_features.h"
#include "tests/kernels/cpu/cpu_test_util.h"

namespace tsr {
namespace {

using testing::CpuIsaTest;
using testing::ThreadedParallelFor;

struct Block {
  int64_t n = 1, c = 16, e = 96, m = 24;  // e == c without expansion
  int64_t h = 8, w = 8, kernel = 3, stride = 1;
  bool expand = true, residual = false;
  FusedActivation expand_act, depthwise_act, project_act;

  std::string Describe() const {
    return absl::StrCat("n=", n, " c=", c, " e=", e, " m=", m, " h=", h, " w=", w, " kernel=", kernel,
                        " stride=", stride, " expand=", expand, " residual=", residual);
  }
};

ConvGeometry Geometry(int64_t channels, int64_t out_channels, int64_t h, int64_t w, int64_t kernel, int64_t stride,
                      int64_t group) {
  ConvGeometry g;
  const int64_t pad = kernel / 2;
  const int64_t in[3] = {1, h, w};
  for (int d = 0; d < 3; ++d) {
    const bool spatial = d > 0;
    g.window.in[d] = in[d];
    g.window.kernel[d] = spatial ? kernel : 1;
    g.window.stride[d] = spatial ? stride : 1;
    g.window.dilation[d] = 1;
    g.window.pad_begin[d] = g.window.pad_end[d] = spatial ? pad : 0;
    g.window.out[d] = spatial ? (in[d] + 2 * pad - kernel) / stride + 1 : 1;
  }
  g.channels = channels;
  g.out_channels = out_channels;
  g.group = group;
  return g;
}

// A blocked activation of `channels` channels, random, zeros in the lanes past them.
std::vector<float> RandomBlocked(std::mt19937& rng, int64_t n, int64_t channels, int64_t pixels) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> t(static_cast<size_t>(n * ChannelBlocks(channels) * pixels * kChannelBlock));
  for (size_t i = 0; i < t.size(); ++i) {
    const int64_t channel =
        static_cast<int64_t>(i) / (pixels * kChannelBlock) % ChannelBlocks(channels) * kChannelBlock +
        static_cast<int64_t>(i) % kChannelBlock;
    t[i] = channel < channels ? dist(rng) : 0.0f;
  }
  return t;
}

std::vector<float> RandomVector(std::mt19937& rng, int64_t size) {
  std::uniform_real_distribution<float> dist(-0.5f, 0.5f);
  std::vector<float> v(static_cast<size_t>(size));
  for (float& x : v) x = dist(rng);
  return v;
}

// Runs the block fused and as three BlockedConvForward calls; expects the same bits.
void ExpectFusedMatchesChain(const Block& b, uint32_t seed) {
  SCOPED_TRACE(absl::StrCat(b.Describe(), " seed=", seed, " isa=", CpuIsaName(ActiveCpuIsa())));
  std::mt19937 rng(seed);
  const ConvGeometry ge = Geometry(b.c, b.e, b.h, b.w, 1, 1, 1);
  const ConvGeometry gd = Geometry(b.e, b.e, b.h, b.w, b.kernel, b.stride, b.e);
  const int64_t oh = gd.window.out[1], ow = gd.window.out[2];
  const ConvGeometry gp = Geometry(b.e, b.m, oh, ow, 1, 1, 1);
  ASSERT_TRUE(BlockedInvertedResidualApplies(b.expand ? &ge : nullptr, gd, gp));

  const std::vector<float> we = RandomVector(rng, b.e * b.c), wd = RandomVector(rng, b.e * b.kernel * b.kernel),
                           wp = RandomVector(rng, b.m * b.e);
  const std::vector<float> be = RandomVector(rng, b.e), bd = RandomVector(rng, b.e), bp = RandomVector(rng, b.m);
  absl::StatusOr<PreparedBlockedConv> pe = PrepareBlockedConv(ge, we.data());
  absl::StatusOr<PreparedBlockedConv> pd = PrepareBlockedConv(gd, wd.data());
  absl::StatusOr<PreparedBlockedConv> pp = PrepareBlockedConv(gp, wp.data());
  ASSERT_TRUE(pe.ok() && pd.ok() && pp.ok());

  const std::vector<float> x = RandomBlocked(rng, b.n, b.expand ? b.c : b.e, b.h * b.w);
  const std::vector<float> z = RandomBlocked(rng, b.n, b.m, oh * ow);
  const float* residual = b.residual ? z.data() : nullptr;
  const size_t y_size = static_cast<size_t>(b.n * ChannelBlocks(b.m) * oh * ow * kChannelBlock);

  // The chain, one thread.
  std::vector<float> expanded(static_cast<size_t>(b.n * ChannelBlocks(b.e) * b.h * b.w * kChannelBlock));
  std::vector<float> depthwise(static_cast<size_t>(b.n * ChannelBlocks(b.e) * oh * ow * kChannelBlock));
  std::vector<float> want(y_size);
  const float* e = x.data();
  if (b.expand) {
    BlockedConvForward(*pe, b.n, x.data(), true, be.data(), nullptr, b.expand_act, expanded.data());
    e = expanded.data();
  }
  BlockedConvForward(*pd, b.n, e, true, bd.data(), nullptr, b.depthwise_act, depthwise.data());
  BlockedConvForward(*pp, b.n, depthwise.data(), true, bp.data(), residual, b.project_act, want.data());

  const BlockedConvStage expand{b.expand ? &*pe : nullptr, be.data(), b.expand_act};
  const BlockedConvStage dw{&*pd, bd.data(), b.depthwise_act};
  const BlockedConvStage project{&*pp, bp.data(), b.project_act};
  for (int threads : {1, 3}) {
    std::vector<float> got(y_size, 1234.5f);
    BlockedInvertedResidualForward(expand, dw, project, b.n, x.data(), residual, got.data(),
                                   threads > 1 ? ThreadedParallelFor(threads) : ParallelForFn());
    for (size_t i = 0; i < y_size; ++i) {
      ASSERT_EQ(std::memcmp(&got[i], &want[i], sizeof(float)), 0)
          << "threads=" << threads << " element " << i << ": " << got[i] << " vs " << want[i];
    }
  }
}

FusedActivation Clip(float lo, float hi) {
  FusedActivation a;
  a.kind = FusedActivationKind::kClip;
  a.min = lo;
  a.max = hi;
  return a;
}

FusedActivation Kind(FusedActivationKind kind) {
  FusedActivation a;
  a.kind = kind;
  return a;
}

class BlockedInvertedResidualTest : public CpuIsaTest {};

TEST_P(BlockedInvertedResidualTest, RandomBlocksGiveTheChainsFloats) {
  const uint32_t seed = std::random_device{}();
  std::printf("seed %u\n", seed);
  std::mt19937 rng(seed);
  const auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  const FusedActivation activations[] = {Kind(FusedActivationKind::kNone), Kind(FusedActivationKind::kRelu),
                                         Clip(0.0f, 6.0f), Kind(FusedActivationKind::kSigmoid), Clip(0.5f, 1.0f)};
  for (int i = 0; i < 24; ++i) {
    Block b;
    b.n = pick(1, 2);
    b.expand = pick(0, 3) != 0;
    // A depthwise convolution of one channel is a group-1 one: at least two.
    b.c = pick(b.expand ? 1 : 2, 40);
    b.e = b.expand ? pick(2, 100) : b.c;
    b.m = pick(1, 40);
    b.h = pick(1, 30);
    b.w = pick(1, 20);
    b.kernel = pick(0, 3) == 0 ? 5 : 3;
    b.stride = pick(1, 2);
    b.residual = pick(0, 1) == 1;
    b.expand_act = activations[pick(0, 4)];
    b.depthwise_act = activations[pick(0, 4)];
    b.project_act = activations[pick(0, 4)];
    ExpectFusedMatchesChain(b, static_cast<uint32_t>(rng()));
    if (HasFatalFailure()) return;
  }
}

TEST_P(BlockedInvertedResidualTest, MobileNetV2sLargeBlocks) {
  const FusedActivation relu6 = Clip(0.0f, 6.0f), none;
  // Block 1 (no expansion, 32 @ 112 -> 16), block 2 (16 -> 96, stride 2, -> 24), block 3
  // (24 -> 144 -> 24 with the residual), block 4 (stride 2 -> 32).
  const Block blocks[] = {
      {1, 32, 32, 16, 112, 112, 3, 1, false, false, none, relu6, none},
      {1, 16, 96, 24, 112, 112, 3, 2, true, false, relu6, relu6, none},
      {1, 24, 144, 24, 56, 56, 3, 1, true, true, relu6, relu6, none},
      {1, 24, 144, 32, 56, 56, 3, 2, true, false, relu6, relu6, none},
  };
  for (const Block& b : blocks) {
    ExpectFusedMatchesChain(b, 7);
    if (HasFatalFailure()) return;
  }
}

TSR_INSTANTIATE_FOR_ALL_ISAS(BlockedInvertedResidualTest);

// The graph op through the cpu kernel registry against its reference kernel (the three
// reference BlockedConvs), with and without the expansion, at 1 and 3 threads.
TEST(BlockedInvertedResidualOpTest, CpuKernelMatchesReference) {
  std::mt19937 rng(11);
  for (bool expand : {true, false}) {
    SCOPED_TRACE(absl::StrCat("expand=", expand));
    const int64_t c = expand ? 16 : 40, e = 40, m = 20;
    // Z: lanes past the 20 channels zero, as a blocked activation holds them.
    Tensor z = testing::RandomF32(rng, Shape({2, 2, 5, 4, 16}));
    for (int64_t i = 0; i < z.num_elements(); ++i) {
      if (i / (5 * 4 * 16) % 2 == 1 && i % 16 >= 4) z.flat<float>()[i] = 0.0f;
    }
    Tensor x = testing::RandomF32(rng, Shape({2, ChannelBlocks(c), 9, 7, 16}));
    for (int64_t i = 0; i < x.num_elements(); ++i) {
      const int64_t block = i / (9 * 7 * 16) % ChannelBlocks(c);
      if (block * 16 + i % 16 >= c) x.flat<float>()[i] = 0.0f;
    }
    std::vector<std::optional<Tensor>> inputs = {x};
    if (expand) {
      inputs.push_back(testing::RandomF32(rng, Shape({e, c, 1, 1})));
      inputs.push_back(testing::RandomF32(rng, Shape({e})));
    } else {
      inputs.push_back(std::nullopt);
      inputs.push_back(std::nullopt);
    }
    inputs.push_back(testing::RandomF32(rng, Shape({e, 1, 3, 3})));
    inputs.push_back(testing::RandomF32(rng, Shape({e})));
    inputs.push_back(testing::RandomF32(rng, Shape({m, e, 1, 1})));
    inputs.push_back(std::nullopt);
    inputs.push_back(z);
    AttrMap attrs;
    attrs["strides"] = AttrValue::Ints({2, 2});
    attrs["pads"] = AttrValue::Ints({1, 1, 1, 1});
    attrs["expand_activation"] = AttrValue::String("Clip");
    attrs["expand_min"] = AttrValue::Float(0.0);
    attrs["expand_max"] = AttrValue::Float(6.0);
    attrs["depthwise_activation"] = AttrValue::String("Relu");
    attrs["project_activation"] = AttrValue::String("Sigmoid");
    testing::ExpectCpuMatchesReference("BlockedInvertedResidual", inputs, attrs, 1e-5);
  }
}

TEST(BlockedInvertedResidualAppliesTest, RefusesChainsThatDoNotFit) {
  const ConvGeometry expand = Geometry(16, 96, 28, 28, 1, 1, 1);
  const ConvGeometry dw = Geometry(96, 96, 28, 28, 3, 1, 96);
  const ConvGeometry project = Geometry(96, 24, 28, 28, 1, 1, 1);
  EXPECT_TRUE(BlockedInvertedResidualApplies(&expand, dw, project));
  EXPECT_TRUE(BlockedInvertedResidualApplies(nullptr, dw, project));
  // The expansion's output channels are not the depthwise convolution's.
  const ConvGeometry narrow = Geometry(16, 64, 28, 28, 1, 1, 1);
  EXPECT_FALSE(BlockedInvertedResidualApplies(&narrow, dw, project));
  // A 3x3 "expansion", a grouped middle convolution, a strided projection.
  const ConvGeometry spatial = Geometry(16, 96, 28, 28, 3, 1, 1);
  EXPECT_FALSE(BlockedInvertedResidualApplies(&spatial, dw, project));
  const ConvGeometry grouped = Geometry(96, 96, 28, 28, 3, 1, 1);
  EXPECT_FALSE(BlockedInvertedResidualApplies(&expand, grouped, project));
  const ConvGeometry strided = Geometry(96, 24, 28, 28, 1, 2, 1);
  EXPECT_FALSE(BlockedInvertedResidualApplies(&expand, dw, strided));
  // The projection reads another size than the depthwise convolution writes.
  const ConvGeometry elsewhere = Geometry(96, 24, 14, 14, 1, 1, 1);
  EXPECT_FALSE(BlockedInvertedResidualApplies(&expand, dw, elsewhere));
}

}  // namespace
}  // namespace tsr

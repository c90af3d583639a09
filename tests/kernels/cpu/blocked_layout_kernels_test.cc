// The cpu kernels of the channel-blocked layout's ops (kernels/cpu/blocked_layout_kernels.cc)
// against the reference kernels, at every ISA level, inline and over 3 threads:
// BlockChannels / UnblockChannels on channel counts 1, 9, 16, 17, 24, 40 and 1-D to 3-D images
// (zero lanes past C), BlockedConv with blocked and plain inputs, depthwise, a residual
// and every activation, an empty batch; shape errors name the node. The kernels' own tests
// (conv_blocked_*_test.cc) cover the convolutions' shapes in depth.
#include <cstdint>
#include <optional>
#include <random>
#include <vector>

#include "graph/attribute.h"
#include "graph/tensor.h"
#include "gtest/gtest.h"
#include "kernels/run_op.h"
#include "tests/kernels/cpu/cpu_test_util.h"

namespace tsr {
namespace {

using testing::CpuIsaTest;
using testing::ExpectCpuMatchesReference;
using testing::RandomF32;

class BlockedLayoutKernels : public CpuIsaTest {};

// A blocked tensor of `channels` channels: the reference BlockChannels of a random plain one.
Tensor RandomBlocked(std::mt19937& rng, Shape plain) {
  RunOpOptions reference;
  reference.device = kReferenceDevice;
  absl::StatusOr<std::vector<Tensor>> blocked = RunOp("BlockChannels", {RandomF32(rng, plain)}, {}, reference);
  EXPECT_TRUE(blocked.ok()) << blocked.status();
  return blocked.ok() ? (*blocked)[0] : Tensor();
}

TEST_P(BlockedLayoutKernels, BlockAndUnblock) {
  const unsigned seed = 31;
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  std::mt19937 rng(seed);
  for (const Shape& shape : {Shape{2, 1, 5}, Shape{1, 16, 3, 4}, Shape{3, 17, 2, 5}, Shape{1, 40, 7, 7},
                             Shape{2, 33, 2, 3, 4}, Shape{1, 5, 0, 3}, Shape{1, 9, 9, 3}, Shape{2, 24, 5, 5}}) {
    SCOPED_TRACE(shape.ToString());
    const Tensor plain = RandomF32(rng, shape);
    ExpectCpuMatchesReference("BlockChannels", {plain}, {}, 0.0);
    ExpectCpuMatchesReference("UnblockChannels", {RandomBlocked(rng, shape)},
                              {{"channels", AttrValue::Int(shape.dim(1))}}, 0.0);
  }
}

TEST_P(BlockedLayoutKernels, BlockChannelsZeroesTheLanesPastC) {
  std::mt19937 rng(32);
  RunOpOptions cpu;
  cpu.device = kCpuDevice;
  cpu.fall_back_to_reference = false;
  absl::StatusOr<std::vector<Tensor>> y =
      RunOp("BlockChannels", {RandomF32(rng, Shape{1, 20, 3, 3}, 1.0f, 2.0f)}, {}, cpu);
  ASSERT_TRUE(y.ok()) << y.status();
  ASSERT_EQ((*y)[0].shape(), (Shape{1, 2, 3, 3, 16}));
  const float* v = (*y)[0].data<float>();
  for (int64_t p = 0; p < 9; ++p) {
    for (int64_t lane = 0; lane < 16; ++lane) {
      const float got = v[(9 + p) * 16 + lane];
      if (lane < 4) {
        EXPECT_GE(got, 1.0f);
      } else {
        EXPECT_EQ(got, 0.0f) << "pixel " << p << " lane " << lane;
      }
    }
  }
}

TEST_P(BlockedLayoutKernels, BlockedConv) {
  const unsigned seed = 33;
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  std::mt19937 rng(seed);
  struct Case {
    int64_t n, c, m, size, kernel, stride, pad, group;
    bool x_blocked, bias, residual;
    const char* activation;
  };
  const Case cases[] = {
      {1, 24, 40, 9, 3, 1, 1, 1, true, true, false, "Relu"},
      {2, 3, 32, 11, 3, 2, 1, 1, false, true, false, "Clip"},
      {1, 17, 16, 6, 1, 1, 0, 1, true, false, true, "None"},
      {1, 32, 32, 8, 3, 1, 1, 32, true, true, true, "Clip"},
      {3, 20, 20, 7, 5, 2, 2, 20, true, false, false, "Sigmoid"},
      {1, 16, 24, 5, 1, 2, 0, 1, true, true, true, "Sigmoid"},
      {0, 16, 16, 5, 3, 1, 1, 1, true, true, true, "Relu"},  // an empty batch
      {0, 32, 32, 5, 3, 1, 1, 32, true, false, false, "None"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(::testing::Message() << "n=" << c.n << " c=" << c.c << " m=" << c.m << " size=" << c.size
                                      << " kernel=" << c.kernel << " stride=" << c.stride << " group=" << c.group
                                      << " x_blocked=" << c.x_blocked << " activation=" << c.activation);
    const Shape plain_x{c.n, c.c, c.size, c.size};
    const Tensor x = c.x_blocked ? RandomBlocked(rng, plain_x) : RandomF32(rng, plain_x);
    const int64_t out = (c.size + 2 * c.pad - c.kernel) / c.stride + 1;
    std::vector<std::optional<Tensor>> inputs = {x, RandomF32(rng, Shape{c.m, c.c / c.group, c.kernel, c.kernel})};
    inputs.push_back(c.bias ? std::optional<Tensor>(RandomF32(rng, Shape{c.m})) : std::nullopt);
    if (c.residual) inputs.push_back(RandomBlocked(rng, Shape{c.n, c.m, out, out}));
    AttrMap attrs = {{"strides", AttrValue::Ints({c.stride, c.stride})},
                     {"pads", AttrValue::Ints({c.pad, c.pad, c.pad, c.pad})},
                     {"group", AttrValue::Int(c.group)},
                     {"activation", AttrValue::String(c.activation)},
                     {"input_blocked", AttrValue::Int(c.x_blocked ? 1 : 0)}};
    if (std::string(c.activation) == "Clip") {
      attrs["min"] = AttrValue::Float(0.0);
      attrs["max"] = AttrValue::Float(6.0);
    }
    ExpectCpuMatchesReference("BlockedConv", inputs, attrs, 1e-4);
  }
}

TEST_P(BlockedLayoutKernels, ShapeErrorsNameTheInput) {
  std::mt19937 rng(34);
  RunOpOptions cpu;
  cpu.device = kCpuDevice;
  // 40 channels are 3 blocks, not 2.
  absl::StatusOr<std::vector<Tensor>> y =
      RunOp("UnblockChannels", {RandomF32(rng, Shape{1, 2, 3, 3, 16})}, {{"channels", AttrValue::Int(40)}}, cpu);
  ASSERT_FALSE(y.ok());
  EXPECT_NE(y.status().message().find("40 channels"), std::string::npos) << y.status();
  // A blocked X whose block count does not match the weights' channels.
  y = RunOp("BlockedConv", {RandomF32(rng, Shape{1, 1, 4, 4, 16}), RandomF32(rng, Shape{16, 24, 1, 1})}, {}, cpu);
  ASSERT_FALSE(y.ok());
  EXPECT_NE(y.status().message().find("input 0 ('X')"), std::string::npos) << y.status();
}

TSR_INSTANTIATE_FOR_ALL_ISAS(BlockedLayoutKernels);

}  // namespace
}  // namespace tsr

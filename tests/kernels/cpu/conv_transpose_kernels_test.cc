// Tests of the cpu ConvTranspose kernel (kernels/cpu/conv_transpose_kernels.cc) against
// the reference kernel at every ISA level: GEMM + col2im over (image, group) pairs
// spread over threads or with the threads inside one large pair, the pointwise path
// that needs no scatter, every attribute (strides, dilations, explicit and asymmetric
// pads, output_padding, output_shape, auto_pad, groups, bias), 1-D to 3-D (4-D runs the
// reference), odd and zero sizes, the shapes autodiff emits for LeNet, stride 1 as a
// direct Conv, and random shapes.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/attribute.h"
#include "graph/tensor.h"
#include "gtest/gtest.h"
#include "kernels/cpu/conv_image_lanes.h"
#include "kernels/cpu/conv_window.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/run_op.h"
#include "tests/kernels/cpu/cpu_test_util.h"

namespace tsr {
namespace {

using testing::CpuIsaTest;
using testing::ExpectCpuMatchesReference;
using testing::RandomF32;

// Sums run in a different order (and in f32) than the reference's double loops.
constexpr double kTolerance = 1e-4;

struct TransposeCase {
  std::vector<int64_t> x;       // [N, C, spatial...]
  int64_t m_per_group;          // W is [C, m_per_group, kernel...]
  std::vector<int64_t> kernel;  // spatial kernel
  int64_t group = 1;
  std::vector<int64_t> strides = {};
  std::vector<int64_t> pads = {};
  std::vector<int64_t> dilations = {};
  std::vector<int64_t> output_padding = {};
  std::vector<int64_t> output_shape = {};
  std::string auto_pad = "NOTSET";
  bool bias = true;
};

std::string Describe(const TransposeCase& c) {
  return absl::StrCat("x=[", absl::StrJoin(c.x, ","), "] m/group=", c.m_per_group, " kernel=[",
                      absl::StrJoin(c.kernel, ","), "] group=", c.group, " strides=[", absl::StrJoin(c.strides, ","),
                      "] pads=[", absl::StrJoin(c.pads, ","), "] dilations=[", absl::StrJoin(c.dilations, ","),
                      "] output_padding=[", absl::StrJoin(c.output_padding, ","), "] output_shape=[",
                      absl::StrJoin(c.output_shape, ","), "] auto_pad=", c.auto_pad, " bias=", c.bias);
}

struct Operands {
  std::vector<std::optional<Tensor>> inputs;
  AttrMap attrs;
};

Operands MakeOperands(const TransposeCase& c, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<int64_t> w_dims = {c.x[1], c.m_per_group};
  w_dims.insert(w_dims.end(), c.kernel.begin(), c.kernel.end());
  Operands o;
  o.inputs = {RandomF32(rng, Shape(c.x)), RandomF32(rng, Shape(w_dims))};
  if (c.bias) o.inputs.push_back(RandomF32(rng, Shape({c.m_per_group * c.group})));
  o.attrs = {{"group", AttrValue::Int(c.group)}, {"auto_pad", AttrValue::String(c.auto_pad)}};
  if (!c.strides.empty()) o.attrs["strides"] = AttrValue::Ints(c.strides);
  if (!c.pads.empty()) o.attrs["pads"] = AttrValue::Ints(c.pads);
  if (!c.dilations.empty()) o.attrs["dilations"] = AttrValue::Ints(c.dilations);
  if (!c.output_padding.empty()) o.attrs["output_padding"] = AttrValue::Ints(c.output_padding);
  if (!c.output_shape.empty()) o.attrs["output_shape"] = AttrValue::Ints(c.output_shape);
  return o;
}

// The window of the Conv that a stride-1, unpadded ConvTranspose of x [N, C, spatial...]
// with `kernel` equals: its input padded by kernel - 1 on both sides.
std::optional<Window3d> EquivalentWindow(const std::vector<int64_t>& x, const std::vector<int64_t>& kernel) {
  WindowGeometry g;
  std::vector<int64_t> in;
  for (size_t d = 0; d < kernel.size(); ++d) {
    in.push_back(x[2 + d]);
    g.kernel.push_back(kernel[d]);
    g.strides.push_back(1);
    g.dilations.push_back(1);
    g.pads_begin.push_back(kernel[d] - 1);
    g.pads_end.push_back(kernel[d] - 1);
    g.output.push_back(x[2 + d] + kernel[d] - 1);
  }
  return MakeWindow3d(in, g);
}

void CheckTranspose(const TransposeCase& c, uint32_t seed) {
  SCOPED_TRACE(absl::StrCat("seed=", seed, " ", Describe(c)));
  const Operands o = MakeOperands(c, seed);
  ExpectCpuMatchesReference("ConvTranspose", o.inputs, o.attrs, kTolerance);
}

class ConvTransposeKernelTest : public CpuIsaTest {};

TEST_P(ConvTransposeKernelTest, Pointwise) {
  CheckTranspose({.x = {2, 17, 3, 17}, .m_per_group = 5, .kernel = {1, 1}}, 1);
  CheckTranspose({.x = {1, 3, 17, 17}, .m_per_group = 17, .kernel = {1, 1}, .bias = false}, 2);
  CheckTranspose({.x = {3, 6, 5, 7}, .m_per_group = 3, .kernel = {1, 1}, .group = 3}, 3);
  CheckTranspose({.x = {1, 1, 1, 1}, .m_per_group = 1, .kernel = {1, 1}}, 4);
  // 1x1 that still scatters: strided (with output_padding), padded, or a larger output.
  CheckTranspose({.x = {1, 17, 9, 9}, .m_per_group = 8, .kernel = {1, 1}, .strides = {2, 2}, .output_padding = {1, 0}},
                 5);
  CheckTranspose({.x = {1, 3, 5, 5}, .m_per_group = 4, .kernel = {1, 1}, .pads = {1, 0, 0, 2}}, 6);
  CheckTranspose({.x = {2, 3, 5, 5}, .m_per_group = 4, .kernel = {1, 1}, .output_shape = {6, 7}}, 7);
}

TEST_P(ConvTransposeKernelTest, LeNetInputGradient) {
  // Conv 5x5 valid [N,6,14,14] -> [N,16,10,10]: its input gradient, and the "same" one.
  CheckTranspose({.x = {5, 16, 10, 10}, .m_per_group = 6, .kernel = {5, 5}}, 10);
  CheckTranspose({.x = {3, 6, 28, 28}, .m_per_group = 1, .kernel = {5, 5}, .pads = {2, 2, 2, 2}}, 11);
  // Conv k3 s2 p1 on an even input: autodiff's output_padding restores the size.
  CheckTranspose({.x = {2, 4, 8, 8},
                  .m_per_group = 3,
                  .kernel = {3, 3},
                  .strides = {2, 2},
                  .pads = {1, 1, 1, 1},
                  .output_padding = {1, 1}},
                 12);
}

// Stride 1 with few input channels runs as the equivalent Conv through the direct
// loops (AVX2 and up): LeNet's second layer's input gradient, asymmetric pads with
// dilation and groups, 1-D, and the cases that keep the GEMM: a pad beyond the
// kernel's span (the output cropped inside X's halo) and more rows than the limit.
TEST_P(ConvTransposeKernelTest, StrideOneRunsAsDirectConv) {
  CheckTranspose({.x = {4, 16, 8, 8}, .m_per_group = 6, .kernel = {5, 5}}, 13);
  CheckTranspose(
      {.x = {2, 4, 7, 9}, .m_per_group = 3, .kernel = {3, 3}, .group = 2, .pads = {0, 2, 1, 0}, .dilations = {2, 1}},
      14);
  CheckTranspose({.x = {3, 5, 40}, .m_per_group = 4, .kernel = {7}, .pads = {3, 1}, .bias = false}, 15);
  CheckTranspose({.x = {1, 4, 6, 6}, .m_per_group = 3, .kernel = {3, 3}, .pads = {3, 2, 3, 2}}, 16);
  CheckTranspose({.x = {1, 64, 5, 5}, .m_per_group = 2, .kernel = {3, 3}, .pads = {1, 1, 1, 1}}, 17);
}

// At least sixteen images, stride 1 and group 1 (AVX-512): sixteen images in the lanes of
// every vector (conv_image_lanes.h). LeNet's input gradient at batch 64, batches with a
// partial last block, output channels past one register block of six (13 = 6 + 6 + 1),
// rows of every length modulo the four columns computed together, dilation, asymmetric
// pads, 1-D, and a block of sixteen split over output rows.
TEST_P(ConvTransposeKernelTest, ImagesInLanes) {
  ASSERT_TRUE(ImageLanesConvApplies(*EquivalentWindow({64, 16, 10, 10}, {5, 5}), 64, 16, 1) ||
              ActiveCpuIsa() < CpuIsa::kAvx512);
  CheckTranspose({.x = {64, 16, 10, 10}, .m_per_group = 6, .kernel = {5, 5}}, 20);
  CheckTranspose({.x = {17, 16, 10, 10}, .m_per_group = 6, .kernel = {5, 5}, .bias = false}, 21);
  CheckTranspose({.x = {33, 5, 7, 9}, .m_per_group = 13, .kernel = {3, 3}}, 22);
  for (int64_t width : {1, 2, 3, 4, 5, 6, 7}) {
    CheckTranspose({.x = {16, 3, 4, width}, .m_per_group = 5, .kernel = {2, 3}, .pads = {0, 1, 1, 0}}, 23);
  }
  CheckTranspose({.x = {20, 4, 7, 9}, .m_per_group = 3, .kernel = {3, 3}, .pads = {0, 2, 1, 0}, .dilations = {2, 1}},
                 24);
  CheckTranspose({.x = {16, 5, 40}, .m_per_group = 4, .kernel = {7}, .pads = {3, 1}, .dilations = {2}}, 25);
  CheckTranspose({.x = {16, 2, 3, 3}, .m_per_group = 7, .kernel = {3, 3}, .pads = {2, 2, 2, 2}}, 26);
}

TEST(ImageLanesConvTest, Declines) {
  if (ActiveCpuIsa() < CpuIsa::kAvx512) GTEST_SKIP() << "the image-lanes kernel is AVX-512 only";
  const Window3d w = *EquivalentWindow({64, 16, 10, 10}, {5, 5});
  EXPECT_TRUE(ImageLanesConvApplies(w, 16, 16, 1));
  EXPECT_FALSE(ImageLanesConvApplies(w, 15, 16, 1)) << "fewer images than lanes";
  EXPECT_FALSE(ImageLanesConvApplies(w, 64, 16, 2)) << "grouped";
  EXPECT_FALSE(ImageLanesConvApplies(w, 64, 17, 1)) << "17 x 25 taps > kMaxImageLanesRows";
  Window3d strided = w;
  strided.stride[2] = 2;
  EXPECT_FALSE(ImageLanesConvApplies(strided, 64, 16, 1));
  Window3d deep = w;
  deep.in[0] = deep.kernel[0] = 2;
  EXPECT_FALSE(ImageLanesConvApplies(deep, 64, 16, 1)) << "a depth dimension";
  Window3d wide = w;
  wide.in[1] = wide.in[2] = 64;
  EXPECT_FALSE(ImageLanesConvApplies(wide, 64, 16, 1)) << "a transposed block of input above 1 MiB";
}

TEST_P(ConvTransposeKernelTest, SizesAndChannels) {
  for (int64_t size : {1, 3, 17}) {
    for (int64_t channels : {1, 3, 17}) {
      CheckTranspose({.x = {2, channels, size, size}, .m_per_group = 4, .kernel = {3, 3}, .pads = {1, 1, 1, 1}},
                     20 + static_cast<uint32_t>(size * 31 + channels));
      CheckTranspose({.x = {1, channels, size, size + 2},
                      .m_per_group = 3,
                      .kernel = {3, 3},
                      .strides = {2, 2},
                      .pads = {1, 1, 1, 1},
                      .bias = false},
                     30 + static_cast<uint32_t>(size * 31 + channels));
    }
  }
  // A long 1-D line: the vectorized stride-1 add and its tail.
  CheckTranspose({.x = {2, 3, 1023}, .m_per_group = 2, .kernel = {4}, .pads = {1, 2}}, 40);
}

TEST_P(ConvTransposeKernelTest, StridesDilationsOutputPadding) {
  CheckTranspose({.x = {1, 3, 7, 5}, .m_per_group = 4, .kernel = {3, 2}, .strides = {3, 2}, .output_padding = {2, 1}},
                 50);
  CheckTranspose({.x = {2, 2, 6, 6}, .m_per_group = 3, .kernel = {3, 3}, .pads = {1, 2, 0, 3}, .dilations = {2, 3}},
                 51);
  CheckTranspose({.x = {1, 4, 5, 4},
                  .m_per_group = 2,
                  .kernel = {2, 3},
                  .strides = {2, 3},
                  .dilations = {3, 2},
                  .output_padding = {2, 1}},
                 52);
  // Kernel smaller than the stride: some output positions receive only the bias.
  CheckTranspose({.x = {1, 3, 4, 4}, .m_per_group = 2, .kernel = {2, 2}, .strides = {3, 4}}, 53);
  // Pads larger than the kernel span.
  CheckTranspose({.x = {1, 2, 9, 9}, .m_per_group = 2, .kernel = {3, 3}, .pads = {3, 4, 2, 3}}, 54);
}

TEST_P(ConvTransposeKernelTest, OutputShapeAndAutoPad) {
  CheckTranspose({.x = {1, 3, 5, 6}, .m_per_group = 2, .kernel = {3, 3}, .strides = {2, 2}, .output_shape = {10, 12}},
                 60);
  // Larger than the window reaches: the trailing positions get only the bias.
  CheckTranspose({.x = {1, 3, 3, 3}, .m_per_group = 2, .kernel = {2, 2}, .output_shape = {7, 6}}, 61);
  for (const char* mode : {"SAME_UPPER", "SAME_LOWER", "VALID"}) {
    for (int64_t stride : {1, 2, 3}) {
      CheckTranspose(
          {.x = {1, 3, 7, 5}, .m_per_group = 2, .kernel = {3, 4}, .strides = {stride, stride}, .auto_pad = mode}, 62);
    }
  }
}

TEST_P(ConvTransposeKernelTest, Grouped) {
  CheckTranspose({.x = {2, 6, 9, 9}, .m_per_group = 2, .kernel = {3, 3}, .group = 2, .pads = {1, 1, 1, 1}}, 70);
  CheckTranspose({.x = {1, 9, 11, 7}, .m_per_group = 2, .kernel = {3, 1}, .group = 3, .strides = {2, 1}}, 71);
  // Depthwise (one channel per group).
  CheckTranspose({.x = {2, 5, 8, 8}, .m_per_group = 1, .kernel = {3, 3}, .group = 5, .pads = {1, 1, 1, 1}}, 72);
}

TEST_P(ConvTransposeKernelTest, OneAndThreeSpatialDims) {
  CheckTranspose({.x = {3, 4, 17}, .m_per_group = 5, .kernel = {3}, .strides = {2}, .pads = {1, 0}}, 80);
  CheckTranspose({.x = {2, 2, 5}, .m_per_group = 3, .kernel = {4}, .dilations = {2}, .output_padding = {1}}, 81);
  CheckTranspose(
      {.x = {1, 3, 4, 5, 3}, .m_per_group = 2, .kernel = {3, 2, 3}, .strides = {2, 1, 2}, .pads = {1, 0, 1, 0, 1, 1}},
      82);
  CheckTranspose({.x = {2, 4, 3, 3, 3}, .m_per_group = 2, .kernel = {2, 2, 2}, .group = 2, .dilations = {2, 1, 2}}, 83);
}

TEST_P(ConvTransposeKernelTest, OneLargePairSplitsInside) {
  // A single (image, group) pair above the small-pair threshold: threads run inside
  // the GEMM and the scatter.
  CheckTranspose({.x = {1, 32, 24, 24}, .m_per_group = 16, .kernel = {5, 5}, .pads = {2, 2, 2, 2}}, 90);
  CheckTranspose({.x = {1, 32, 12, 12}, .m_per_group = 16, .kernel = {3, 3}, .strides = {2, 2}}, 91);
}

TEST_P(ConvTransposeKernelTest, ZeroSizeBatchAndChannels) {
  CheckTranspose({.x = {0, 3, 5, 5}, .m_per_group = 2, .kernel = {3, 3}}, 100);
  CheckTranspose({.x = {2, 3, 5, 5}, .m_per_group = 0, .kernel = {3, 3}, .bias = false}, 101);
  CheckTranspose({.x = {2, 0, 5, 5}, .m_per_group = 2, .kernel = {3, 3}}, 102);
}

TEST_P(ConvTransposeKernelTest, FourSpatialDimsRunTheReference) {
  CheckTranspose({.x = {1, 2, 3, 2, 3, 2}, .m_per_group = 2, .kernel = {2, 1, 2, 1}, .strides = {2, 1, 1, 2}}, 110);
}

TEST_P(ConvTransposeKernelTest, RandomShapes) {
  for (uint32_t seed = 1000; seed < 1060; ++seed) {
    std::mt19937 rng(seed);
    auto pick = [&rng](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
    const int rank = static_cast<int>(pick(1, 3));
    TransposeCase c;
    c.group = pick(1, 3);
    c.x = {pick(1, 3), c.group * pick(1, 4)};
    c.m_per_group = pick(1, 4);
    std::vector<int64_t> pads_end;
    for (int d = 0; d < rank; ++d) {
      c.x.push_back(pick(1, rank == 3 ? 5 : 9));
      c.kernel.push_back(pick(1, 4));
      c.strides.push_back(pick(1, 3));
      c.dilations.push_back(pick(1, 2));
      c.output_padding.push_back(pick(0, std::max(c.strides.back(), c.dilations.back()) - 1));
      // Pads that leave at least one output position.
      const int64_t full = (c.x.back() - 1) * c.strides.back() + c.output_padding.back() +
                           (c.kernel.back() - 1) * c.dilations.back() + 1;
      c.pads.push_back(pick(0, std::min<int64_t>(2, full - 1)));
      pads_end.push_back(pick(0, std::min<int64_t>(2, full - 1 - c.pads.back())));
    }
    c.pads.insert(c.pads.end(), pads_end.begin(), pads_end.end());
    c.bias = pick(0, 1) == 1;
    CheckTranspose(c, seed);
  }
}

TEST(ConvTransposeKernelDeterminismTest, SameBitsAtAnyThreadCount) {
  // Both thread strategies (across pairs, inside a pair) must give identical bits.
  for (const TransposeCase& c :
       {TransposeCase{.x = {7, 16, 10, 10}, .m_per_group = 6, .kernel = {5, 5}},
        TransposeCase{.x = {40, 16, 10, 10}, .m_per_group = 6, .kernel = {5, 5}},
        TransposeCase{.x = {1, 32, 24, 24}, .m_per_group = 16, .kernel = {5, 5}, .pads = {2, 2, 2, 2}}}) {
    SCOPED_TRACE(Describe(c));
    const Operands o = MakeOperands(c, 7);
    RunOpOptions one;
    one.device = kCpuDevice;
    one.fall_back_to_reference = false;
    absl::StatusOr<std::vector<Tensor>> want = RunOp("ConvTranspose", o.inputs, o.attrs, one);
    ASSERT_TRUE(want.ok()) << want.status();
    for (int threads : {2, 5}) {
      RunOpOptions many = one;
      many.parallel_for = testing::ThreadedParallelFor(threads);
      absl::StatusOr<std::vector<Tensor>> got = RunOp("ConvTranspose", o.inputs, o.attrs, many);
      ASSERT_TRUE(got.ok()) << got.status();
      testing::ExpectSameTensor((*got)[0], (*want)[0], 0.0, absl::StrCat("threads=", threads));
    }
  }
}

TSR_INSTANTIATE_FOR_ALL_ISAS(ConvTransposeKernelTest);

}  // namespace
}  // namespace tsr

// Tests of the cpu Conv kernel (kernels/cpu/conv_kernels.cc) against the reference
// kernel at every ISA level: each algorithm it picks (pointwise GEMM, strided
// pointwise GEMM on the subsampled input, implicit GEMM with im2col fused into the B
// packing over one or several GEMM blocks, weights packed once and shared by every
// image, threads inside or across (image, group) pairs, direct depthwise), every attribute (strides, dilations,
// explicit and asymmetric pads, auto_pad, groups, bias), 1-D to 3-D, odd and zero sizes, and random shapes.
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
#include "tests/kernels/cpu/cpu_test_util.h"

namespace tsr {
namespace {

using testing::CpuIsaTest;
using testing::ExpectCpuMatchesReference;
using testing::RandomF32;

// Sums run in a different order (and in f32) than the reference's double loops.
constexpr double kTolerance = 1e-4;

struct ConvCase {
  std::vector<int64_t> x;       // [N, C, spatial...]
  int64_t m;                    // output channels
  std::vector<int64_t> kernel;  // spatial kernel
  int64_t group = 1;
  std::vector<int64_t> strides = {};
  std::vector<int64_t> pads = {};
  std::vector<int64_t> dilations = {};
  std::string auto_pad = "NOTSET";
  bool bias = true;
};

std::string Describe(const ConvCase& c) {
  return absl::StrCat("x=[", absl::StrJoin(c.x, ","), "] m=", c.m, " kernel=[", absl::StrJoin(c.kernel, ","),
                      "] group=", c.group, " strides=[", absl::StrJoin(c.strides, ","), "] pads=[",
                      absl::StrJoin(c.pads, ","), "] dilations=[", absl::StrJoin(c.dilations, ","),
                      "] auto_pad=", c.auto_pad, " bias=", c.bias);
}

void CheckConv(const ConvCase& c, uint32_t seed) {
  SCOPED_TRACE(absl::StrCat("seed=", seed, " ", Describe(c)));
  std::mt19937 rng(seed);
  std::vector<int64_t> w_dims = {c.m, c.x[1] / c.group};
  w_dims.insert(w_dims.end(), c.kernel.begin(), c.kernel.end());
  std::vector<std::optional<Tensor>> inputs = {RandomF32(rng, Shape(c.x)), RandomF32(rng, Shape(w_dims))};
  if (c.bias) inputs.push_back(RandomF32(rng, Shape({c.m})));
  AttrMap attrs{{"group", AttrValue::Int(c.group)}, {"auto_pad", AttrValue::String(c.auto_pad)}};
  if (!c.strides.empty()) attrs["strides"] = AttrValue::Ints(c.strides);
  if (!c.pads.empty()) attrs["pads"] = AttrValue::Ints(c.pads);
  if (!c.dilations.empty()) attrs["dilations"] = AttrValue::Ints(c.dilations);
  ExpectCpuMatchesReference("Conv", inputs, attrs, kTolerance);
}

class ConvKernelTest : public CpuIsaTest {};

TEST_P(ConvKernelTest, Pointwise) {
  CheckConv({.x = {2, 17, 3, 17}, .m = 5, .kernel = {1, 1}}, 1);
  CheckConv({.x = {1, 3, 17, 17}, .m = 17, .kernel = {1, 1}, .bias = false}, 2);
  CheckConv({.x = {3, 6, 5, 7}, .m = 9, .kernel = {1, 1}, .group = 3}, 3);
  CheckConv({.x = {1, 1, 1, 1}, .m = 1, .kernel = {1, 1}}, 4);
  // 1x1 that still needs im2col: strided, padded.
  CheckConv({.x = {1, 17, 17, 17}, .m = 8, .kernel = {1, 1}, .strides = {2, 2}}, 5);
  CheckConv({.x = {1, 3, 5, 5}, .m = 4, .kernel = {1, 1}, .pads = {1, 0, 0, 2}}, 6);
}

// 1x1 strided without padding: the input subsampled into a plain matrix for Sgemm.
TEST_P(ConvKernelTest, StridedPointwise) {
  CheckConv({.x = {1, 17, 17, 17}, .m = 19, .kernel = {1, 1}, .strides = {2, 2}}, 7);
  CheckConv({.x = {2, 9, 13, 10}, .m = 6, .kernel = {1, 1}, .group = 3, .strides = {3, 1}, .bias = false}, 8);
  CheckConv({.x = {5, 4, 7, 9}, .m = 3, .kernel = {1, 1}, .strides = {1, 2}, .dilations = {2, 2}}, 9);  // units split
  CheckConv({.x = {1, 5, 5, 6, 7}, .m = 4, .kernel = {1, 1, 1}, .strides = {2, 2, 3}}, 10);             // 3-D
  CheckConv({.x = {1, 3, 21}, .m = 2, .kernel = {1}, .strides = {4}}, 11);                              // 1-D
  // One image whose GEMM splits over the threads; rows wide enough for the vector copy.
  CheckConv({.x = {1, 64, 40, 41}, .m = 160, .kernel = {1, 1}, .strides = {2, 2}}, 12);
}

TEST_P(ConvKernelTest, ThreeByThree) {
  for (int64_t size : {1, 3, 17}) {
    for (int64_t channels : {1, 3, 17}) {
      CheckConv({.x = {2, channels, size, size}, .m = 4, .kernel = {3, 3}, .pads = {1, 1, 1, 1}}, 10 + size);
      CheckConv({.x = {1, channels, size, size + 2}, .m = 3, .kernel = {3, 3}, .strides = {2, 2}, .pads = {1, 1, 1, 1}},
                20 + size);
    }
  }
  CheckConv({.x = {1, 5, 17, 13}, .m = 6, .kernel = {3, 3}, .bias = false}, 30);  // no padding
}

TEST_P(ConvKernelTest, SevenBySevenStrided) {
  CheckConv({.x = {1, 3, 23, 19}, .m = 8, .kernel = {7, 7}, .strides = {2, 2}, .pads = {3, 3, 3, 3}}, 40);
  CheckConv({.x = {2, 2, 9, 9}, .m = 3, .kernel = {7, 5}, .strides = {3, 2}, .pads = {1, 2, 0, 3}}, 41);
}

TEST_P(ConvKernelTest, AutoPad) {
  for (const char* mode : {"SAME_UPPER", "SAME_LOWER", "VALID"}) {
    for (int64_t stride : {1, 2, 3}) {
      CheckConv({.x = {1, 3, 17, 10}, .m = 4, .kernel = {3, 4}, .strides = {stride, stride}, .auto_pad = mode}, 50);
      CheckConv(
          {.x = {1, 4, 8, 8}, .m = 4, .kernel = {2, 2}, .group = 4, .strides = {stride, stride}, .auto_pad = mode}, 51);
    }
  }
}

TEST_P(ConvKernelTest, AsymmetricPadsAndKernelLargerThanInput) {
  CheckConv({.x = {1, 3, 7, 6}, .m = 5, .kernel = {3, 3}, .pads = {0, 2, 3, 1}}, 60);
  CheckConv({.x = {2, 3, 2, 2}, .m = 4, .kernel = {5, 5}, .pads = {2, 2, 2, 2}}, 61);
  CheckConv({.x = {1, 2, 1, 3}, .m = 2, .kernel = {4, 6}, .pads = {3, 2, 0, 1}}, 62);
  CheckConv({.x = {1, 4, 2, 2}, .m = 4, .kernel = {5, 5}, .group = 4, .pads = {2, 2, 2, 2}}, 63);  // depthwise
}

TEST_P(ConvKernelTest, Grouped) {
  CheckConv({.x = {2, 6, 9, 9}, .m = 4, .kernel = {3, 3}, .group = 2, .pads = {1, 1, 1, 1}}, 70);
  CheckConv({.x = {1, 9, 11, 7}, .m = 6, .kernel = {3, 1}, .group = 3, .strides = {2, 1}}, 71);
  CheckConv({.x = {1, 8, 10, 10}, .m = 8, .kernel = {3, 3}, .group = 2, .dilations = {2, 2}}, 72);
}

TEST_P(ConvKernelTest, Depthwise) {
  for (int64_t stride : {1, 2, 3}) {
    CheckConv({.x = {2, 17, 17, 17},
               .m = 17,
               .kernel = {3, 3},
               .group = 17,
               .strides = {stride, stride},
               .pads = {1, 1, 1, 1}},
              80 + stride);
    CheckConv({.x = {1, 3, 40, 45},
               .m = 3,
               .kernel = {5, 5},
               .group = 3,
               .strides = {stride, stride},
               .pads = {2, 1, 2, 3},
               .bias = false},
              85 + stride);
  }
  // Rows wide enough for the 32-output vector groups, strided and dilated.
  CheckConv({.x = {1, 3, 7, 90}, .m = 3, .kernel = {3, 3}, .group = 3, .strides = {1, 2}, .pads = {1, 1, 1, 1}}, 94);
  CheckConv({.x = {1, 2, 5, 77}, .m = 2, .kernel = {2, 3}, .group = 2, .dilations = {1, 2}}, 95);
  CheckConv({.x = {1, 4, 9, 9}, .m = 8, .kernel = {3, 3}, .group = 4, .pads = {1, 1, 1, 1}}, 90);  // multiplier 2
  CheckConv({.x = {1, 5, 12, 12}, .m = 5, .kernel = {3, 3}, .group = 5, .dilations = {2, 3}}, 91);
  CheckConv({.x = {2, 6, 33}, .m = 6, .kernel = {3}, .group = 6, .strides = {2}, .pads = {1, 1}}, 92);  // 1-D
  CheckConv({.x = {1, 1, 17, 17}, .m = 1, .kernel = {3, 3}, .pads = {1, 1, 1, 1}}, 93);                 // one channel
}

TEST_P(ConvKernelTest, Dilated) {
  CheckConv({.x = {1, 3, 17, 17}, .m = 4, .kernel = {3, 3}, .pads = {2, 2, 2, 2}, .dilations = {2, 2}}, 100);
  CheckConv({.x = {1, 2, 13, 11}, .m = 3, .kernel = {2, 3}, .strides = {2, 1}, .dilations = {3, 2}}, 101);
}

TEST_P(ConvKernelTest, OneAndThreeSpatialDimensions) {
  CheckConv({.x = {2, 3, 17}, .m = 4, .kernel = {3}, .pads = {1, 1}}, 110);
  CheckConv({.x = {1, 4, 20}, .m = 2, .kernel = {5}, .strides = {2}, .dilations = {2}, .auto_pad = "SAME_UPPER"}, 111);
  CheckConv({.x = {1, 3, 5, 6, 7}, .m = 4, .kernel = {3, 3, 3}, .pads = {1, 1, 1, 1, 1, 1}}, 112);
  CheckConv({.x = {2, 4, 3, 5, 4}, .m = 4, .kernel = {2, 3, 1}, .group = 2, .strides = {1, 2, 1}}, 113);
  CheckConv({.x = {1, 3, 4, 5, 6}, .m = 3, .kernel = {3, 3, 3}, .group = 3, .pads = {1, 1, 1, 1, 1, 1}}, 114);
  CheckConv({.x = {1, 3, 4, 4, 4}, .m = 5, .kernel = {1, 1, 1}}, 115);
}

TEST_P(ConvKernelTest, FourSpatialDimensionsUseTheReferenceLoops) {
  CheckConv({.x = {1, 2, 3, 3, 3, 3}, .m = 2, .kernel = {2, 2, 2, 2}}, 120);
}

TEST_P(ConvKernelTest, ZeroSizes) {
  CheckConv({.x = {0, 3, 5, 5}, .m = 4, .kernel = {3, 3}}, 130);
  CheckConv({.x = {0, 4, 5, 5}, .m = 4, .kernel = {3, 3}, .group = 4}, 131);
  CheckConv({.x = {2, 0, 5, 5}, .m = 3, .kernel = {3, 3}}, 132);  // no input channels: bias only
  CheckConv({.x = {2, 3, 5, 5}, .m = 0, .kernel = {3, 3}}, 133);
  CheckConv({.x = {1, 3, 0, 4}, .m = 2, .kernel = {1, 3}, .pads = {1, 1, 1, 1}}, 134);  // empty input, padded
}

// Large enough that one (image, group) pair splits its GEMM (and the im2col packing
// inside it) over the threads, with several blocks of pixels (n) and of depth (k).
TEST_P(ConvKernelTest, ThreadsInsideOneImageAndSeveralBlocks) {
  CheckConv({.x = {1, 64, 46, 46}, .m = 8, .kernel = {3, 3}, .pads = {1, 1, 1, 1}}, 140);
  CheckConv({.x = {1, 16, 40, 40}, .m = 48, .kernel = {1, 1}}, 141);
  // More output channels than one GEMM row block (144 rows for AVX2): the weights are
  // packed over the threads and the GEMM splits its rows.
  CheckConv({.x = {1, 30, 7, 7}, .m = 150, .kernel = {3, 3}, .pads = {1, 1, 1, 1}}, 142);
  CheckConv({.x = {1, 40, 9, 9}, .m = 160, .kernel = {3, 3}, .strides = {2, 2}, .pads = {1, 1, 1, 1}}, 143);
}

// One packing of each group's weights shared by every image of a batch, across threads.
TEST_P(ConvKernelTest, BatchesShareThePackedWeights) {
  CheckConv({.x = {6, 8, 10, 10}, .m = 10, .kernel = {3, 3}, .group = 2, .pads = {1, 1, 1, 1}}, 150);
  CheckConv({.x = {5, 9, 12, 11}, .m = 6, .kernel = {1, 1}, .group = 3}, 151);
  CheckConv({.x = {4, 6, 13, 13}, .m = 20, .kernel = {3, 3}, .strides = {2, 2}, .pads = {0, 1, 1, 0}}, 152);
}

TEST_P(ConvKernelTest, RandomShapes) {
  for (uint32_t seed = 1000; seed < 1040; ++seed) {
    std::mt19937 rng(seed);
    auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
    const int rank = static_cast<int>(pick(1, 3));
    ConvCase c;
    c.group = pick(1, 3);
    const bool depthwise = pick(0, 3) == 0;
    const int64_t channels = depthwise ? c.group * 1 : c.group * pick(1, 4);
    c.m = c.group * pick(1, 3);
    c.x = {pick(1, 2), channels};
    for (int d = 0; d < rank; ++d) {
      c.x.push_back(pick(1, rank == 3 ? 6 : 12));
      c.kernel.push_back(pick(1, 4));
      c.strides.push_back(pick(1, 3));
      c.dilations.push_back(pick(1, 2));
    }
    const int64_t pad_mode = pick(0, 3);
    if (pad_mode == 0) {
      c.auto_pad = pick(0, 1) ? "SAME_UPPER" : "SAME_LOWER";
    } else {
      // Enough padding that every window fits.
      c.pads.assign(2 * rank, 0);
      for (int d = 0; d < rank; ++d) {
        const int64_t span = (c.kernel[d] - 1) * c.dilations[d] + 1;
        const int64_t need = std::max<int64_t>(0, span - c.x[2 + d]);
        c.pads[d] = pick(0, 2) + need / 2;
        c.pads[rank + d] = pick(0, 2) + need - need / 2;
      }
    }
    c.bias = pick(0, 1) == 1;
    CheckConv(c, seed);
  }
}

TSR_INSTANTIATE_FOR_ALL_ISAS(ConvKernelTest);

}  // namespace
}  // namespace tsr

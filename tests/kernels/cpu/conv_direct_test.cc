// The direct small-channel paths of the cpu Conv and ConvGradFilter kernels
// (kernels/cpu/conv_direct.h) against the reference kernels, at every ISA level and
// at 1 and 3 threads: LeNet's layers, every register-block tail (1 to 13 output
// channels, 1 to 4 taps per block), asymmetric pads, dilations, groups, 1-D, inputs
// that are all padding, randomized stride-1 shapes, the cases the rule declines, an
// infinite input (which ConvGradFilter leaves to its GEMM path), and bit-identical
// ConvGradFilter results at any thread count. Each case also checks whether the
// direct path takes it, so a change of the rule cannot silently test the GEMM path.
#include "kernels/cpu/conv_direct.h"

#include <cmath>
#include <cstdint>
#include <limits>
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

using ::tsr::testing::CpuIsaTest;
using ::tsr::testing::ExpectCpuMatchesReference;
using ::tsr::testing::ExpectSameTensor;
using ::tsr::testing::RandomF32;
using ::tsr::testing::ThreadedParallelFor;

// Sums run in a different order (and in f32) than the reference's double loops.
constexpr double kTolerance = 1e-4;

struct Case {
  std::vector<int64_t> x;       // [N, C, spatial...]
  int64_t m;                    // output channels
  std::vector<int64_t> kernel;  // spatial kernel
  int64_t group = 1;
  std::vector<int64_t> pads = {};
  std::vector<int64_t> dilations = {};
  std::vector<int64_t> strides = {};
  std::string auto_pad = "NOTSET";
};

std::string Describe(const Case& c) {
  return absl::StrCat("x=[", absl::StrJoin(c.x, ","), "] m=", c.m, " kernel=[", absl::StrJoin(c.kernel, ","),
                      "] group=", c.group, " pads=[", absl::StrJoin(c.pads, ","), "] dilations=[",
                      absl::StrJoin(c.dilations, ","), "] strides=[", absl::StrJoin(c.strides, ","),
                      "] auto_pad=", c.auto_pad);
}

AttrMap Attrs(const Case& c) {
  AttrMap attrs{{"group", AttrValue::Int(c.group)},
                {"auto_pad", AttrValue::String(c.auto_pad)},
                {"kernel_shape", AttrValue::Ints(c.kernel)}};
  if (!c.pads.empty()) attrs["pads"] = AttrValue::Ints(c.pads);
  if (!c.dilations.empty()) attrs["dilations"] = AttrValue::Ints(c.dilations);
  if (!c.strides.empty()) attrs["strides"] = AttrValue::Ints(c.strides);
  return attrs;
}

// The resolved geometry, as the kernels see it.
WindowGeometry Geometry(const Case& c) {
  absl::StatusOr<WindowSpec> spec = WindowSpecFromAttrs(Attrs(c));
  EXPECT_TRUE(spec.ok()) << spec.status();
  absl::StatusOr<WindowGeometry> g = ComputeWindowGeometry(absl::MakeConstSpan(c.x).subspan(2), *spec);
  EXPECT_TRUE(g.ok()) << g.status();
  return *g;
}

// Whether the direct path takes the case at the fixture's ISA level.
bool Direct(const Case& c) {
  const std::optional<Window3d> w = MakeWindow3d(absl::MakeConstSpan(c.x).subspan(2), Geometry(c));
  return w.has_value() && DirectConvApplies(*w, c.x[1] / c.group);
}

Shape OutputShape(const Case& c) {
  Shape dy{c.x[0], c.m};
  for (int64_t d : Geometry(c).output) dy.AddDim(d);
  return dy;
}

// Conv with and without bias, then ConvGradFilter, against the reference; and the
// expectation that the direct path takes the case (at AVX2 and above) or not.
void Check(const Case& c, bool direct, uint32_t seed) {
  SCOPED_TRACE(absl::StrCat("seed=", seed, " ", Describe(c)));
  EXPECT_EQ(Direct(c), direct && ActiveCpuIsa() >= CpuIsa::kAvx2);
  std::mt19937 rng(seed);
  std::vector<int64_t> w_dims = {c.m, c.x[1] / c.group};
  w_dims.insert(w_dims.end(), c.kernel.begin(), c.kernel.end());
  const Tensor x = RandomF32(rng, Shape(c.x));
  const Tensor w = RandomF32(rng, Shape(w_dims));
  const Tensor bias = RandomF32(rng, Shape({c.m}));
  AttrMap attrs = Attrs(c);
  ExpectCpuMatchesReference("Conv", {x, w, bias}, attrs, kTolerance);
  ExpectCpuMatchesReference("Conv", {x, w}, attrs, kTolerance);
  ExpectCpuMatchesReference("ConvGradFilter", {x, RandomF32(rng, OutputShape(c))}, attrs, kTolerance);
}

class ConvDirectTest : public CpuIsaTest {};

TEST_P(ConvDirectTest, LeNetLayers) {
  Check({.x = {5, 1, 28, 28}, .m = 6, .kernel = {5, 5}, .pads = {2, 2, 2, 2}}, true, 1);
  Check({.x = {5, 6, 14, 14}, .m = 16, .kernel = {5, 5}}, true, 2);
}

// 1 to 13 output channels cover every tail of the 4-channel (Conv in AVX2), 6-channel
// (Conv in AVX-512) and 3-channel (ConvGradFilter) blocks; 1 to 7 taps every tail of
// the 4-tap blocks.
TEST_P(ConvDirectTest, BlockTails) {
  uint32_t seed = 10;
  for (int64_t m = 1; m <= 13; ++m)
    Check({.x = {2, 2, 7, 9}, .m = m, .kernel = {2, 3}, .pads = {1, 1, 0, 1}}, true, seed++);
  for (int64_t kw = 1; kw <= 7; ++kw) Check({.x = {2, 1, 5, 13}, .m = 4, .kernel = {1, kw}}, true, seed++);
}

// AVX-512 stores each 16-pixel vector's valid lanes as one run of the output plane:
// rows narrower than a vector (a vector then spans three rows and their padding
// columns), rows of exactly one and two vectors, and planes whose last vector holds
// only a few real pixels.
TEST_P(ConvDirectTest, OutputRowsAcrossVectors) {
  uint32_t seed = 40;
  for (int64_t in_w : {3, 5, 14, 16, 28, 30, 33}) {
    Check({.x = {2, 2, 7, in_w}, .m = 7, .kernel = {3, 3}, .pads = {1, 1, 1, 1}}, true, seed++);
  }
}

TEST_P(ConvDirectTest, EveryVariant) {
  uint32_t seed = 30;
  Check({.x = {3, 2, 17, 13}, .m = 5, .kernel = {3, 2}, .pads = {1, 0, 2, 1}}, true, seed++);  // asymmetric pads
  Check({.x = {2, 3, 17, 13}, .m = 4, .kernel = {3, 3}, .dilations = {2, 3}}, true, seed++);   // dilated
  Check({.x = {2, 3, 9, 11}, .m = 4, .kernel = {3, 3}, .pads = {2, 1, 1, 2}, .dilations = {1, 2}}, true, seed++);
  Check({.x = {2, 4, 9, 10}, .m = 6, .kernel = {3, 3}, .group = 2, .pads = {1, 1, 1, 1}}, true, seed++);  // groups
  Check({.x = {2, 6, 8, 8}, .m = 3, .kernel = {2, 2}, .group = 3}, true, seed++);
  Check({.x = {3, 3, 17}, .m = 5, .kernel = {4}, .pads = {1, 2}}, true, seed++);  // 1-D
  Check({.x = {1, 2, 1023}, .m = 3, .kernel = {3}, .dilations = {2}}, true, seed++);
  Check({.x = {2, 3, 6, 5}, .m = 4, .kernel = {3, 2}, .auto_pad = "SAME_UPPER"}, true, seed++);
  Check({.x = {2, 3, 6, 5}, .m = 4, .kernel = {2, 3}, .auto_pad = "SAME_LOWER"}, true, seed++);
  Check({.x = {1, 1, 1, 1}, .m = 1, .kernel = {1, 1}}, true, seed++);
  Check({.x = {2, 2, 3, 3}, .m = 2, .kernel = {1, 1}, .pads = {1, 1, 1, 1}}, true, seed++);  // padded 1x1
  Check({.x = {2, 2, 0, 3}, .m = 3, .kernel = {2, 1}, .pads = {1, 0, 1, 0}}, true, seed++);  // all padding
  Check({.x = {2, 2, 3, 0}, .m = 3, .kernel = {1, 2}, .pads = {0, 1, 0, 1}}, true, seed++);
  Check({.x = {0, 2, 5, 5}, .m = 3, .kernel = {3, 3}}, true, seed++);  // empty batch
  Check({.x = {3, 1, 17, 3}, .m = 17, .kernel = {3, 1}, .pads = {1, 0, 1, 0}}, true, seed++);
}

// ConvGradFilter sums images in chunks of 4 on different threads: partial chunks.
TEST_P(ConvDirectTest, ChunkedBatches) {
  Check({.x = {23, 2, 6, 9}, .m = 5, .kernel = {3, 3}, .pads = {1, 1, 1, 1}}, true, 50);
  Check({.x = {64, 1, 28, 28}, .m = 6, .kernel = {5, 5}, .pads = {2, 2, 2, 2}}, true, 51);
}

// Cases the rule leaves to the other paths, which must still be right.
TEST_P(ConvDirectTest, Declined) {
  uint32_t seed = 60;
  Check({.x = {2, 7, 9, 9}, .m = 4, .kernel = {5, 5}}, false, seed++);                     // 175 rows
  Check({.x = {2, 2, 9, 9}, .m = 4, .kernel = {3, 3}, .strides = {2, 1}}, false, seed++);  // strided
  Check({.x = {2, 2, 9, 9}, .m = 4, .kernel = {3, 3}, .strides = {1, 2}}, false, seed++);
  Check({.x = {2, 2, 9, 1}, .m = 4, .kernel = {3, 3}, .pads = {0, 1, 0, 1}}, false, seed++);  // width 3, 1 output
  Check({.x = {1, 2, 4, 5, 6}, .m = 3, .kernel = {2, 2, 2}}, false, seed++);                  // 3-D
}

TEST_P(ConvDirectTest, Randomized) {
  for (uint32_t seed = 100; seed < 112; ++seed) {
    std::mt19937 rng(seed);
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    Case c;
    c.group = pick(1, 2);
    c.m = c.group * pick(1, 5);
    c.kernel = {pick(1, 5), pick(1, 5)};
    c.dilations = {pick(1, 2), pick(1, 2)};
    c.pads = {pick(0, 2), pick(0, 2), pick(0, 2), pick(0, 2)};
    c.x = {pick(1, 6), c.group * pick(1, 6)};
    for (int i = 0; i < 2; ++i) c.x.push_back((c.kernel[i] - 1) * c.dilations[i] + pick(1, 20));
    const WindowGeometry g = Geometry(c);
    const int64_t width = c.x[3] + c.pads[1] + c.pads[3];
    Check(c, c.x[1] / c.group * c.kernel[0] * c.kernel[1] <= kMaxDirectConvRows && width <= 2 * g.output[1], seed);
  }
}

// An infinity in X: the reference gives +inf for the taps that read it (dY > 0) and
// finite sums elsewhere; the direct loops would also meet it with the zero
// gradients of dropped pixels (0 * inf = NaN), so ConvGradFilter must decline.
TEST_P(ConvDirectTest, InfiniteInputGradient) {
  const Case c{.x = {2, 2, 8, 12}, .m = 3, .kernel = {3, 3}};
  SCOPED_TRACE(Describe(c));
  EXPECT_EQ(Direct(c), ActiveCpuIsa() >= CpuIsa::kAvx2);
  std::mt19937 rng(70);
  Tensor x = RandomF32(rng, Shape(c.x));
  x.flat<float>()[1 * 8 * 12 + 3 * 12 + 11] =
      std::numeric_limits<float>::infinity();  // image 0, channel 1, last column
  ExpectCpuMatchesReference("ConvGradFilter", {x, RandomF32(rng, OutputShape(c), 0.5f, 1.0f)}, Attrs(c), kTolerance);
}

// Bit-identical ConvGradFilter at 1 to 5 threads (the chunks fix the summation order).
TEST_P(ConvDirectTest, GradFilterIndependentOfThreads) {
  const Case c{.x = {37, 3, 11, 10}, .m = 7, .kernel = {3, 3}, .pads = {1, 1, 1, 1}};
  SCOPED_TRACE(Describe(c));
  std::mt19937 rng(80);
  const std::vector<std::optional<Tensor>> inputs = {RandomF32(rng, Shape(c.x)), RandomF32(rng, OutputShape(c))};
  RunOpOptions options;
  options.device = kCpuDevice;
  options.fall_back_to_reference = false;
  absl::StatusOr<std::vector<Tensor>> single = RunOp("ConvGradFilter", inputs, Attrs(c), options);
  ASSERT_TRUE(single.ok()) << single.status();
  for (int threads = 2; threads <= 5; ++threads) {
    options.parallel_for = ThreadedParallelFor(threads);
    absl::StatusOr<std::vector<Tensor>> got = RunOp("ConvGradFilter", inputs, Attrs(c), options);
    ASSERT_TRUE(got.ok()) << got.status();
    ExpectSameTensor((*got)[0], (*single)[0], 0.0, absl::StrCat("threads=", threads));
  }
}

TSR_INSTANTIATE_FOR_ALL_ISAS(ConvDirectTest);

}  // namespace
}  // namespace tsr

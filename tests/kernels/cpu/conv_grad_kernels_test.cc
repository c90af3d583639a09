// The cpu ConvGradFilter kernel (kernels/cpu/conv_grad_kernels.cc) against the
// reference kernel, at every ISA level and at 1 and 3 threads: fixed cases for every
// attribute (strides, pads, auto_pad, dilations, groups, depthwise, 1-D to 3-D and
// the 4-D fallback), sizes 1, 3, 17, empty batches and batches summed in chunks, and randomized 2-D shapes with
// printed seeds.
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/ops/conv_geometry.h"
#include "gtest/gtest.h"
#include "kernels/run_op.h"
#include "tests/kernels/cpu/cpu_test_util.h"

namespace tsr {
namespace {

using ::tsr::testing::CpuIsaTest;
using ::tsr::testing::ExpectCpuMatchesReference;
using ::tsr::testing::RandomF32;

class ConvGradFilterCpuTest : public CpuIsaTest {};

// dY's shape for X under `attrs` (kernel_shape included), from the forward geometry.
Shape GradShape(const Shape& x, int64_t m, const AttrMap& attrs) {
  absl::StatusOr<WindowSpec> spec = WindowSpecFromAttrs(attrs);
  EXPECT_TRUE(spec.ok()) << spec.status();
  absl::StatusOr<WindowGeometry> g = ComputeWindowGeometry(absl::MakeConstSpan(x.dims()).subspan(2), *spec);
  EXPECT_TRUE(g.ok()) << g.status();
  Shape dy{x.dim(0), m};
  if (g.ok()) {
    for (int64_t d : g->output) dy.AddDim(d);
  }
  return dy;
}

void Check(const Shape& x, int64_t m, const AttrMap& attrs, uint32_t seed) {
  SCOPED_TRACE(absl::StrCat("X", x.ToString(), " M=", m, " seed=", seed));
  std::mt19937 rng(seed);
  const Tensor xt = RandomF32(rng, x);
  const Tensor dy = RandomF32(rng, GradShape(x, m, attrs));
  ExpectCpuMatchesReference("ConvGradFilter", {xt, dy}, attrs, 1e-4);
}

AttrValue Ints(std::vector<int64_t> v) { return AttrValue::Ints(std::move(v)); }

TEST_P(ConvGradFilterCpuTest, EveryAttribute) {
  uint32_t seed = 100;
  Check({2, 3, 5, 5}, 4, {{"kernel_shape", Ints({3, 3})}}, seed++);
  Check({1, 2, 7, 6}, 3, {{"kernel_shape", Ints({3, 2})}, {"strides", Ints({2, 2})}, {"pads", Ints({1, 0, 2, 1})}},
        seed++);
  Check({1, 2, 9, 8}, 2, {{"kernel_shape", Ints({3, 2})}, {"dilations", Ints({2, 3})}, {"strides", Ints({2, 1})}},
        seed++);
  Check({2, 4, 5, 5}, 6, {{"kernel_shape", Ints({3, 3})}, {"group", AttrValue::Int(2)}, {"pads", Ints({1, 1, 1, 1})}},
        seed++);
  Check({1, 3, 6, 6}, 3, {{"kernel_shape", Ints({3, 3})}, {"group", AttrValue::Int(3)}, {"strides", Ints({2, 2})}},
        seed++);
  Check({1, 3, 5, 5}, 6, {{"kernel_shape", Ints({3, 3})}, {"group", AttrValue::Int(3)}}, seed++);
  Check({1, 2, 5, 6}, 3,
        {{"kernel_shape", Ints({3, 3})}, {"strides", Ints({2, 2})}, {"auto_pad", AttrValue::String("SAME_UPPER")}},
        seed++);
  Check({1, 2, 6, 5}, 3,
        {{"kernel_shape", Ints({2, 3})}, {"strides", Ints({2, 3})}, {"auto_pad", AttrValue::String("SAME_LOWER")}},
        seed++);
  Check({2, 3, 17}, 2, {{"kernel_shape", Ints({4})}, {"strides", Ints({2})}, {"pads", Ints({1, 2})}}, seed++);
  Check({1, 2, 4, 4, 3}, 2, {{"kernel_shape", Ints({2, 2, 2})}, {"pads", Ints({0, 1, 0, 1, 0, 1})}}, seed++);
  Check({1, 1, 3, 3, 2, 2}, 1, {{"kernel_shape", Ints({2, 2, 1, 1})}}, seed++);  // 4-D: the reference path
  Check({1, 1, 1, 1}, 1, {{"kernel_shape", Ints({1, 1})}}, seed++);
  Check({3, 1, 17, 3}, 17, {{"kernel_shape", Ints({3, 1})}, {"pads", Ints({1, 0, 1, 0})}}, seed++);
  Check({0, 2, 5, 5}, 3, {{"kernel_shape", Ints({3, 3})}}, seed++);  // empty batch: dW is zeros
}

// Batches of 16 or more images are summed in chunks on different threads: a partial
// last chunk, groups, and LeNet's two layers at batch 64.
TEST_P(ConvGradFilterCpuTest, ChunkedBatches) {
  uint32_t seed = 300;
  Check({16, 2, 6, 5}, 3, {{"kernel_shape", Ints({3, 3})}}, seed++);
  Check({23, 4, 7, 7}, 6, {{"kernel_shape", Ints({3, 2})}, {"group", AttrValue::Int(2)}, {"strides", Ints({2, 1})}},
        seed++);
  Check({64, 1, 28, 28}, 6, {{"kernel_shape", Ints({5, 5})}, {"pads", Ints({2, 2, 2, 2})}}, seed++);
  Check({64, 6, 14, 14}, 16, {{"kernel_shape", Ints({5, 5})}}, seed++);
}

// Sixteen images or more, stride 1, group 1 (AVX-512): sixteen images in the lanes of
// every vector (conv_image_lanes.h). Partial last blocks, output channels past one
// register block of six, kernel widths 1 to 6 (every tail of the four columns computed
// together), asymmetric pads, dilations and 1-D.
TEST_P(ConvGradFilterCpuTest, ImagesInLanes) {
  uint32_t seed = 300;
  Check({17, 3, 9, 11}, 13, {{"kernel_shape", Ints({3, 3})}, {"pads", Ints({1, 1, 1, 1})}}, seed++);
  Check({40, 2, 6, 7}, 5, {{"kernel_shape", Ints({2, 3})}, {"pads", Ints({0, 2, 1, 0})}}, seed++);
  for (int64_t kw = 1; kw <= 6; ++kw) {
    Check({16, 2, 5, 8}, 7, {{"kernel_shape", Ints({3, kw})}, {"pads", Ints({1, kw / 2, 0, kw - 1})}}, seed++);
  }
  Check({20, 2, 9, 10}, 3, {{"kernel_shape", Ints({3, 3})}, {"dilations", Ints({2, 3})}, {"pads", Ints({2, 1, 1, 3})}},
        seed++);
  Check({32, 3, 30}, 4, {{"kernel_shape", Ints({5})}, {"pads", Ints({4, 1})}}, seed++);
}

// An infinity in dY next to the padding: the weights whose taps meet it only on the
// padding keep the finite sums the reference gives (the optimized paths would multiply the
// padding's zeros by it), at every path: image lanes, direct loops and GEMM.
TEST_P(ConvGradFilterCpuTest, InfiniteOutputGradientNextToThePadding) {
  uint32_t seed = 500;
  for (const Shape& x_shape : {Shape{16, 2, 6, 6}, Shape{2, 2, 6, 6}, Shape{2, 40, 6, 6}}) {
    const AttrMap attrs = {{"kernel_shape", Ints({3, 3})}, {"pads", Ints({1, 1, 1, 1})}};
    std::mt19937 rng(seed++);
    const Tensor x = RandomF32(rng, x_shape);
    Tensor dy = RandomF32(rng, GradShape(x_shape, 3, attrs), 0.5f, 1.0f);
    dy.flat<float>()[1 * 3 * 36 + 2 * 36] = std::numeric_limits<float>::infinity();  // image 1, channel 2, corner
    SCOPED_TRACE(x_shape.ToString());
    ExpectCpuMatchesReference("ConvGradFilter", {x, dy}, attrs, 1e-4);
  }
}

TEST_P(ConvGradFilterCpuTest, Randomized) {
  for (uint32_t seed = 200; seed < 210; ++seed) {
    std::mt19937 rng(seed);
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    const int64_t group = pick(1, 3);
    const int64_t c = group * pick(1, 3), m = group * pick(1, 3);
    const std::vector<int64_t> kernel = {pick(1, 3), pick(1, 3)}, strides = {pick(1, 2), pick(1, 2)},
                               dilations = {pick(1, 2), pick(1, 2)},
                               pads = {pick(0, 1), pick(0, 1), pick(0, 1), pick(0, 1)};
    Shape x{pick(1, 3), c};
    for (int i = 0; i < 2; ++i) x.AddDim((kernel[i] - 1) * dilations[i] + 1 + pick(0, 20));
    Check(x, m,
          {{"kernel_shape", Ints(kernel)},
           {"strides", Ints(strides)},
           {"dilations", Ints(dilations)},
           {"pads", Ints(pads)},
           {"group", AttrValue::Int(group)}},
          seed);
  }
}

TSR_INSTANTIATE_FOR_ALL_ISAS(ConvGradFilterCpuTest);

}  // namespace
}  // namespace tsr

// Tests of the cpu pooling kernels (kernels/cpu/pool_kernels.cc) against the
// reference kernels at every ISA level: MaxPool with both Indices layouts, ties and
// NaN, AveragePool with and without count_include_pad, ceil_mode, dilations,
// explicit / asymmetric / auto pads, 1-D to 3-D (4-D defers to the reference),
// GlobalAveragePool including empty extents, and random shapes.
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
#include "graph/tensor.h"
#include "gtest/gtest.h"
#include "tests/kernels/cpu/cpu_test_util.h"
#include "tests/kernels/cpu/pool_test_cases.h"

namespace tsr {
namespace {

using testing::CpuIsaTest;
using testing::ExpectCpuMatchesReference;
using testing::ExpectSameTensor;
using testing::PoolCase;
using testing::RandomF32;
using testing::ThreadedParallelFor;

// Values on a coarse grid make ties, which test that the first maximum wins.
Tensor Input(const std::vector<int64_t>& dims, uint32_t seed, bool coarse) {
  std::mt19937 rng(seed);
  Tensor x = RandomF32(rng, Shape(dims));
  if (coarse) {
    for (float& v : x.flat<float>()) v = std::floor(v * 3.0f);
  }
  return x;
}

void CheckMaxPool(const PoolCase& c, uint32_t seed, bool coarse = false) {
  SCOPED_TRACE(absl::StrCat("MaxPool seed=", seed, " coarse=", coarse, " ", Describe(c)));
  for (int64_t storage_order : {0, 1}) {
    AttrMap attrs = PoolAttrs(c);
    attrs["storage_order"] = AttrValue::Int(storage_order);
    ExpectCpuMatchesReference("MaxPool", {Input(c.x, seed, coarse)}, attrs, 0.0);
  }
}

void CheckAveragePool(const PoolCase& c, uint32_t seed) {
  SCOPED_TRACE(absl::StrCat("AveragePool seed=", seed, " ", Describe(c)));
  for (int64_t count_include_pad : {0, 1}) {
    AttrMap attrs = PoolAttrs(c);
    attrs["count_include_pad"] = AttrValue::Int(count_include_pad);
    ExpectCpuMatchesReference("AveragePool", {Input(c.x, seed, false)}, attrs, 1e-5);
  }
}

void CheckBoth(const PoolCase& c, uint32_t seed) {
  CheckMaxPool(c, seed);
  CheckMaxPool(c, seed, /*coarse=*/true);
  CheckAveragePool(c, seed);
}

class PoolKernelTest : public CpuIsaTest {};

TEST_P(PoolKernelTest, TwoDimensional) {
  for (int64_t size : {1, 3, 17}) {
    CheckBoth({.x = {2, 3, size, size}, .kernel = {3, 3}, .strides = {2, 2}, .pads = {1, 1, 1, 1}}, 1);
    CheckBoth({.x = {1, 17, size, size + 1}, .kernel = {2, 2}, .strides = {1, 1}, .pads = {1, 0, 1, 0}}, 2);
  }
  CheckBoth({.x = {1, 4, 112, 112}, .kernel = {3, 3}, .strides = {2, 2}, .pads = {1, 1, 1, 1}}, 3);  // ResNet
  CheckBoth({.x = {2, 3, 9, 11}, .kernel = {2, 3}}, 4);
  CheckBoth({.x = {1, 2, 8, 8}, .kernel = {8, 8}}, 5);  // window == input
}

TEST_P(PoolKernelTest, CeilModeAndAsymmetricPads) {
  CheckBoth({.x = {1, 3, 10, 11}, .kernel = {3, 3}, .strides = {2, 2}, .ceil_mode = 1}, 10);
  CheckBoth({.x = {1, 3, 7, 8}, .kernel = {3, 2}, .strides = {3, 3}, .pads = {0, 1, 2, 0}, .ceil_mode = 1}, 11);
  CheckBoth({.x = {2, 2, 6, 7}, .kernel = {4, 3}, .pads = {0, 2, 3, 1}}, 12);
  CheckBoth({.x = {1, 2, 2, 2}, .kernel = {3, 3}, .pads = {1, 1, 1, 1}}, 13);  // kernel larger than input
}

TEST_P(PoolKernelTest, AutoPad) {
  for (const char* mode : {"SAME_UPPER", "SAME_LOWER", "VALID"}) {
    for (int64_t stride : {1, 2, 3}) {
      CheckBoth({.x = {1, 3, 17, 10}, .kernel = {3, 4}, .strides = {stride, stride}, .auto_pad = mode}, 20);
    }
  }
}

TEST_P(PoolKernelTest, Dilated) {
  CheckBoth({.x = {1, 3, 13, 12}, .kernel = {3, 2}, .strides = {1, 2}, .pads = {2, 1, 2, 1}, .dilations = {2, 3}}, 30);
  CheckBoth({.x = {1, 2, 11, 11}, .kernel = {2, 2}, .strides = {2, 2}, .dilations = {2, 2}, .ceil_mode = 1}, 31);
  // Wide enough rows for the eight-output vector loop, strided and dilated.
  CheckBoth({.x = {1, 2, 13, 40}, .kernel = {3, 2}, .strides = {1, 2}, .pads = {2, 1, 2, 1}, .dilations = {2, 3}}, 32);
  CheckBoth({.x = {1, 2, 9, 50}, .kernel = {3, 3}, .strides = {3, 3}, .pads = {1, 1, 1, 1}}, 33);
}

TEST_P(PoolKernelTest, OneThreeAndFourSpatialDimensions) {
  CheckBoth({.x = {2, 3, 17}, .kernel = {3}, .strides = {2}, .pads = {1, 1}}, 40);
  CheckBoth({.x = {1, 2, 40}, .kernel = {3}, .pads = {1, 1}}, 43);
  CheckBoth({.x = {1, 2, 5, 6, 7}, .kernel = {2, 3, 2}, .strides = {2, 1, 2}, .pads = {1, 0, 1, 0, 1, 1}}, 41);
  CheckBoth({.x = {1, 2, 3, 3, 3, 4}, .kernel = {2, 2, 2, 2}}, 42);  // the reference loops
}

TEST_P(PoolKernelTest, ZeroBatchAndChannels) {
  CheckBoth({.x = {0, 3, 5, 5}, .kernel = {3, 3}}, 50);
  CheckBoth({.x = {2, 0, 5, 5}, .kernel = {3, 3}}, 51);
}

TEST_P(PoolKernelTest, MaxPoolNaN) {
  Tensor x(DType::kF32, Shape({1, 1, 3, 4}));
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> values = {nan, 1, 2, 3, 4, nan, 6, 7, 8, 9, 10, nan};
  std::copy(values.begin(), values.end(), x.flat<float>().begin());
  // Wide rows with NaNs scattered: the vector loop keeps a NaN only when it comes first.
  std::mt19937 rng(70);
  Tensor wide = RandomF32(rng, Shape({1, 2, 6, 37}));
  for (int64_t i = 0; i < wide.num_elements(); i += 7) wide.flat<float>()[i] = nan;
  for (int64_t stride : {1, 2}) {
    ExpectCpuMatchesReference("MaxPool", {wide},
                              {{"kernel_shape", AttrValue::Ints({3, 3})},
                               {"strides", AttrValue::Ints({stride, stride})},
                               {"pads", AttrValue::Ints({1, 1, 1, 1})}},
                              0.0);
    ExpectCpuMatchesReference(
        "MaxPool", {x}, {{"kernel_shape", AttrValue::Ints({2, 2})}, {"strides", AttrValue::Ints({stride, stride})}},
        0.0);
  }
}

// MaxPool without its Indices output (inference graphs), against the reference,
// bitwise: 2x2 / 2 whole planes in the vector loop (odd sizes drop the last column or
// row); 3x3 / 2 (ResNet's stem pool: three taps from four loads per window row in AVX2,
// from two loads and a broadcast, sixteen outputs at a time, in AVX-512) with
// and without padding and ceil_mode, and 3x3 / 1 (the general row loop) -- rows shorter
// and longer than one 16-column step, NaNs first and later, ties (coarse values), at
// several thread splits.
TEST_P(PoolKernelTest, MaxPoolWithoutIndices) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  struct Window {
    int64_t kernel, stride, pad;
    bool ceil;
  };
  const Window windows[] = {{2, 2, 0, false}, {3, 2, 1, false}, {3, 2, 0, false}, {3, 2, 1, true}, {3, 1, 1, false}};
  uint32_t seed = 80;
  for (const Window& win : windows) {
    for (const std::vector<int64_t>& dims : std::vector<std::vector<int64_t>>{{64, 6, 24, 24},
                                                                              {1, 3, 8, 8},
                                                                              {2, 2, 7, 9},
                                                                              {1, 2, 3, 3},
                                                                              {1, 1, 5, 33},
                                                                              {1, 4, 3, 40},
                                                                              {1, 1, 4, 5},
                                                                              {1, 2, 17, 112}}) {
      std::mt19937 rng(seed++);
      Tensor x = RandomF32(rng, Shape(dims));
      if (seed % 3 == 0) {
        for (int64_t i = 0; i < x.num_elements(); i += 5) x.flat<float>()[i] = nan;
      } else if (seed % 3 == 1) {
        for (float& v : x.flat<float>()) v = std::round(v * 2.0f) / 2.0f;  // ties
      }
      AttrMap attrs = {{"kernel_shape", AttrValue::Ints({win.kernel, win.kernel})},
                       {"strides", AttrValue::Ints({win.stride, win.stride})},
                       {"pads", AttrValue::Ints({win.pad, win.pad, win.pad, win.pad})}};
      if (win.ceil) attrs["ceil_mode"] = AttrValue::Int(1);
      RunOpOptions reference;
      reference.device = kReferenceDevice;
      reference.outputs = 1;
      absl::StatusOr<std::vector<Tensor>> want = RunOp("MaxPool", {x}, attrs, reference);
      ASSERT_TRUE(want.ok()) << want.status();
      for (int threads : {1, 3}) {
        RunOpOptions cpu = reference;
        cpu.device = kCpuDevice;
        cpu.fall_back_to_reference = false;
        if (threads > 1) cpu.parallel_for = ThreadedParallelFor(threads);
        absl::StatusOr<std::vector<Tensor>> got = RunOp("MaxPool", {x}, attrs, cpu);
        ASSERT_TRUE(got.ok()) << got.status();
        ASSERT_EQ(got->size(), 1u);
        ExpectSameTensor(
            (*got)[0], (*want)[0], 0.0,
            absl::StrCat(Shape(dims).ToString(), " kernel=", win.kernel, " stride=", win.stride, " pad=", win.pad,
                         " ceil=", win.ceil, " threads=", threads, " isa=", CpuIsaName(ActiveCpuIsa())));
      }
    }
  }
}

TEST_P(PoolKernelTest, GlobalAveragePool) {
  for (const std::vector<int64_t>& dims : std::vector<std::vector<int64_t>>{{2, 3, 17},
                                                                            {1, 17, 7, 7},
                                                                            {2, 5, 1, 1},
                                                                            {1, 3, 1023},
                                                                            {1, 2, 3, 4, 5},
                                                                            {0, 3, 4, 4},
                                                                            {2, 0, 4, 4},
                                                                            {2, 3, 0, 4}}) {
    SCOPED_TRACE(absl::StrCat("x=[", absl::StrJoin(dims, ","), "]"));
    ExpectCpuMatchesReference("GlobalAveragePool", {Input(dims, 60, false)}, {}, 1e-5);
  }
}

TEST_P(PoolKernelTest, RandomShapes) {
  for (uint32_t seed = 2000; seed < 2040; ++seed) {
    std::mt19937 rng(seed);
    auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
    const int rank = static_cast<int>(pick(1, 3));
    PoolCase c;
    c.x = {pick(1, 2), pick(1, 3)};
    for (int d = 0; d < rank; ++d) {
      c.x.push_back(pick(1, rank == 3 ? 7 : 15));
      c.kernel.push_back(pick(1, 4));
      c.strides.push_back(pick(1, 3));
      c.dilations.push_back(pick(1, 2));
    }
    const int64_t pad_mode = pick(0, 3);
    if (pad_mode == 0) {
      c.auto_pad = pick(0, 1) ? "SAME_UPPER" : "SAME_LOWER";
      // A dilated SAME window on a small input can straddle it and read only padding.
      c.dilations.assign(rank, 1);
    } else {
      c.ceil_mode = pick(0, 1);
      c.pads.assign(2 * rank, 0);
      for (int d = 0; d < rank; ++d) {
        // Pads below the window span (inference requires it), and enough for a window.
        const int64_t span = (c.kernel[d] - 1) * c.dilations[d] + 1;
        const int64_t need = std::max<int64_t>(0, span - c.x[2 + d]);
        c.pads[d] = std::min(span - 1, pick(0, 2) + need / 2);
        c.pads[rank + d] = std::min(span - 1, pick(0, 2) + need - need / 2);
        if (c.x[2 + d] + c.pads[d] + c.pads[rank + d] < span) c.x[2 + d] = span;
      }
    }
    CheckBoth(c, seed);
  }
}

TSR_INSTANTIATE_FOR_ALL_ISAS(PoolKernelTest);

}  // namespace
}  // namespace tsr

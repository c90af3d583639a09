// Tests of the cpu MaxPoolGrad and AveragePoolGrad kernels (kernels/cpu/
// pool_grad_kernels.cc) against the reference kernels at every ISA level: ties (the
// first maximum gets dY) and NaN in X, overlapping windows, count_include_pad,
// ceil_mode, dilations, explicit / asymmetric / auto pads, 1-D to 3-D (4-D defers to
// the reference), zero-size batch, windows that read only padding (the same error),
// LeNet's shapes, and random shapes.
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "graph/attribute.h"
#include "graph/tensor.h"
#include "gtest/gtest.h"
#include "kernels/run_op.h"
#include "tests/kernels/cpu/cpu_test_util.h"
#include "tests/kernels/cpu/pool_test_cases.h"

namespace tsr {
namespace {

using testing::CpuIsaTest;
using testing::ExpectCpuMatchesReference;
using testing::PoolCase;
using testing::RandomF32;

// Overlapping windows add into dX in f32 (the reference adds in double).
constexpr double kTolerance = 1e-5;

// X (on a coarse grid when `coarse`, which makes ties, optionally with NaNs) and a
// random dY of the forward MaxPool's output shape.
std::vector<std::optional<Tensor>> Operands(const PoolCase& c, uint32_t seed, bool coarse, bool nans = false) {
  std::mt19937 rng(seed);
  Tensor x = RandomF32(rng, Shape(c.x));
  if (coarse) {
    for (float& v : x.flat<float>()) v = std::floor(v * 3.0f);
  }
  if (nans) {
    int64_t i = 0;
    for (float& v : x.flat<float>()) {
      if (i++ % 7 == 3) v = std::numeric_limits<float>::quiet_NaN();
    }
  }
  absl::StatusOr<std::vector<Tensor>> y = RunOp("MaxPool", {x}, PoolAttrs(c));
  EXPECT_TRUE(y.ok()) << y.status();
  if (!y.ok()) return {};
  Tensor dy = RandomF32(rng, (*y)[0].shape());
  return {x, dy};
}

void CheckMaxPoolGrad(const PoolCase& c, uint32_t seed, bool coarse = false, bool nans = false) {
  SCOPED_TRACE(absl::StrCat("MaxPoolGrad seed=", seed, " coarse=", coarse, " nans=", nans, " ", Describe(c)));
  const std::vector<std::optional<Tensor>> inputs = Operands(c, seed, coarse, nans);
  ASSERT_FALSE(inputs.empty());
  ExpectCpuMatchesReference("MaxPoolGrad", inputs, PoolAttrs(c), kTolerance);
}

void CheckAveragePoolGrad(const PoolCase& c, uint32_t seed) {
  SCOPED_TRACE(absl::StrCat("AveragePoolGrad seed=", seed, " ", Describe(c)));
  const std::vector<std::optional<Tensor>> inputs = Operands(c, seed, false);
  ASSERT_FALSE(inputs.empty());
  for (int64_t count_include_pad : {0, 1}) {
    SCOPED_TRACE(absl::StrCat("count_include_pad=", count_include_pad));
    AttrMap attrs = PoolAttrs(c);
    attrs["count_include_pad"] = AttrValue::Int(count_include_pad);
    ExpectCpuMatchesReference("AveragePoolGrad", inputs, attrs, kTolerance);
  }
}

void CheckBoth(const PoolCase& c, uint32_t seed) {
  CheckMaxPoolGrad(c, seed);
  CheckMaxPoolGrad(c, seed, /*coarse=*/true);
  CheckAveragePoolGrad(c, seed);
}

class PoolGradKernelTest : public CpuIsaTest {};

TEST_P(PoolGradKernelTest, LeNetShapes) {
  CheckBoth({.x = {4, 6, 28, 28}, .kernel = {2, 2}, .strides = {2, 2}}, 1);
  CheckBoth({.x = {4, 16, 10, 10}, .kernel = {2, 2}, .strides = {2, 2}}, 2);
  // The 2x2 / 2 plane kernel's edges: an odd last row and column no window covers, rows of
  // 1 to 21 windows (partial and several groups of eight), a ceil_mode window past the end
  // (the general loop), ties and NaNs.
  CheckBoth({.x = {2, 3, 9, 11}, .kernel = {2, 2}, .strides = {2, 2}}, 3);
  CheckBoth({.x = {1, 2, 2, 2}, .kernel = {2, 2}, .strides = {2, 2}}, 4);
  CheckBoth({.x = {1, 2, 6, 43}, .kernel = {2, 2}, .strides = {2, 2}}, 5);
  CheckBoth({.x = {1, 2, 5, 7}, .kernel = {2, 2}, .strides = {2, 2}, .ceil_mode = 1}, 6);
  CheckMaxPoolGrad({.x = {2, 2, 7, 35}, .kernel = {2, 2}, .strides = {2, 2}}, 7, true);
  CheckMaxPoolGrad({.x = {2, 2, 7, 35}, .kernel = {2, 2}, .strides = {2, 2}}, 8, false, /*nans=*/true);
}

TEST_P(PoolGradKernelTest, SizesAndOverlap) {
  for (int64_t size : {1, 3, 17}) {
    CheckBoth({.x = {2, 3, size, size}, .kernel = {1, 1}}, 10 + static_cast<uint32_t>(size));
    if (size >= 3) {
      // Overlapping windows (stride < kernel) add several dY into one dX.
      CheckBoth({.x = {2, 3, size, size + 1}, .kernel = {3, 3}}, 20 + static_cast<uint32_t>(size));
      CheckBoth({.x = {1, 2, size, size}, .kernel = {3, 2}, .strides = {2, 1}}, 30 + static_cast<uint32_t>(size));
    }
  }
  CheckBoth({.x = {1, 2, 1023}, .kernel = {4}, .strides = {3}}, 40);
}

TEST_P(PoolGradKernelTest, PadsDilationsCeilMode) {
  CheckBoth({.x = {2, 3, 7, 6}, .kernel = {3, 3}, .strides = {2, 2}, .pads = {1, 0, 1, 2}}, 50);
  CheckBoth({.x = {1, 2, 9, 9}, .kernel = {3, 2}, .pads = {2, 1, 2, 1}, .dilations = {2, 3}}, 51);
  CheckBoth({.x = {1, 3, 8, 7}, .kernel = {3, 3}, .strides = {2, 2}, .ceil_mode = 1}, 52);
  CheckBoth({.x = {1, 3, 8, 7}, .kernel = {2, 3}, .strides = {3, 2}, .pads = {1, 1, 1, 1}, .ceil_mode = 1}, 53);
  CheckBoth({.x = {2, 2, 5, 5}, .kernel = {2, 2}, .strides = {2, 2}, .dilations = {2, 2}, .ceil_mode = 1}, 54);
}

TEST_P(PoolGradKernelTest, AutoPad) {
  for (const char* mode : {"SAME_UPPER", "SAME_LOWER", "VALID"}) {
    for (int64_t stride : {1, 2, 3}) {
      CheckBoth({.x = {1, 3, 7, 10}, .kernel = {3, 4}, .strides = {stride, stride}, .auto_pad = mode}, 60);
    }
  }
}

TEST_P(PoolGradKernelTest, TiesAndNaN) {
  // On a coarse grid many windows hold several equal maxima; the first gets dY.
  CheckMaxPoolGrad({.x = {2, 3, 9, 9}, .kernel = {3, 3}, .strides = {2, 2}, .pads = {1, 1, 1, 1}}, 70, true);
  CheckMaxPoolGrad({.x = {2, 3, 9, 9}, .kernel = {3, 3}, .strides = {1, 1}}, 71, true, /*nans=*/true);
  CheckMaxPoolGrad({.x = {1, 2, 8, 8}, .kernel = {2, 2}, .strides = {2, 2}}, 72, false, /*nans=*/true);
}

TEST_P(PoolGradKernelTest, OneAndThreeSpatialDims) {
  CheckBoth({.x = {3, 4, 17}, .kernel = {3}, .strides = {2}, .pads = {1, 0}}, 80);
  CheckBoth({.x = {2, 2, 9}, .kernel = {2}, .strides = {2}, .dilations = {3}, .ceil_mode = 1}, 81);
  CheckBoth({.x = {1, 3, 4, 5, 6}, .kernel = {2, 3, 2}, .strides = {2, 1, 2}, .pads = {1, 0, 1, 0, 1, 1}}, 82);
  CheckBoth({.x = {2, 2, 4, 4, 4}, .kernel = {2, 2, 2}, .strides = {2, 2, 2}}, 83);
}

TEST_P(PoolGradKernelTest, ZeroSizeBatch) {
  CheckBoth({.x = {0, 3, 5, 5}, .kernel = {2, 2}}, 90);
  CheckBoth({.x = {2, 0, 5, 5}, .kernel = {2, 2}, .strides = {2, 2}}, 91);
}

TEST_P(PoolGradKernelTest, FourSpatialDimsRunTheReference) {
  CheckBoth({.x = {1, 2, 3, 3, 2, 3}, .kernel = {2, 2, 1, 2}, .strides = {1, 2, 1, 1}}, 100);
}

TEST_P(PoolGradKernelTest, WindowOfOnlyPaddingIsTheReferenceError) {
  // A dilated window (span 4) with 2 + 2 pads on a 1-wide input: the window at output 0
  // reads positions -2 and 1, both padding (along the last dimension, and along the
  // first one of a 2-D input).
  struct ErrorCase {
    PoolCase pool;
    std::vector<int64_t> dy;  // the output shape
  };
  for (const ErrorCase& c :
       {ErrorCase{{.x = {1, 2, 1}, .kernel = {2}, .pads = {2, 2}, .dilations = {3}}, {1, 2, 2}},
        ErrorCase{{.x = {2, 2, 1, 5}, .kernel = {2, 2}, .pads = {2, 0, 2, 1}, .dilations = {3, 1}}, {2, 2, 2, 5}}}) {
    SCOPED_TRACE(Describe(c.pool));
    std::mt19937 rng(110);
    const std::vector<std::optional<Tensor>> inputs = {RandomF32(rng, Shape(c.pool.x)), RandomF32(rng, Shape(c.dy))};
    for (const char* op : {"MaxPoolGrad", "AveragePoolGrad"}) {
      SCOPED_TRACE(op);
      RunOpOptions reference;
      RunOpOptions cpu;
      cpu.device = kCpuDevice;
      cpu.fall_back_to_reference = false;
      const absl::StatusOr<std::vector<Tensor>> want = RunOp(op, inputs, PoolAttrs(c.pool), reference);
      const absl::StatusOr<std::vector<Tensor>> got = RunOp(op, inputs, PoolAttrs(c.pool), cpu);
      ASSERT_FALSE(want.ok());
      EXPECT_EQ(got.status(), want.status());
    }
  }
}

TEST_P(PoolGradKernelTest, RandomShapes) {
  for (uint32_t seed = 1000; seed < 1030; ++seed) {
    std::mt19937 rng(seed);
    auto pick = [&rng](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
    const int rank = static_cast<int>(pick(1, 3));
    PoolCase c;
    c.x = {pick(1, 3), pick(1, 4)};
    std::vector<int64_t> pads_end;
    for (int d = 0; d < rank; ++d) {
      c.kernel.push_back(pick(1, 3));
      c.strides.push_back(pick(1, 3));
      c.dilations.push_back(pick(1, 2));
      // Pads below the kernel so that no window reads only padding.
      c.pads.push_back(pick(0, c.kernel.back() - 1));
      pads_end.push_back(pick(0, c.kernel.back() - 1));
      c.x.push_back(pick((c.kernel.back() - 1) * c.dilations.back() + 1, rank == 3 ? 6 : 11));
    }
    c.pads.insert(c.pads.end(), pads_end.begin(), pads_end.end());
    c.ceil_mode = pick(0, 1);
    CheckBoth(c, seed);
  }
}

TSR_INSTANTIATE_FOR_ALL_ISAS(PoolGradKernelTest);

}  // namespace
}  // namespace tsr

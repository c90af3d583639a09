// Tests of the prepared-weights convolution API (kernels/cpu/conv_prepared.h) at
// every ISA level: PrepareConvWeights + ConvForward against the reference Conv
// kernel for each algorithm it picks (depthwise, Winograd F(2x2) and F(4x4), direct,
// blocked direct, pointwise / strided pointwise / implicit-im2col GEMM, bias only, empty
// output) and on random shapes (1-D to 3-D, odd sizes, strides, asymmetric pads,
// dilations, groups, batches), prepared and run inline and over 3 threads; that the prepared
// weights are a copy (the caller's array is overwritten before the forward pass);
// that the Conv kernel, which prepares per call, gives bit-identical results; and
// the errors for inconsistent geometries.
#include "kernels/cpu/conv_prepared.h"

#include <cstdint>
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
#include "kernels/run_op.h"
#include "tests/kernels/cpu/cpu_test_util.h"

namespace tsr {
namespace {

using testing::CpuIsaTest;
using testing::ExpectSameTensor;
using testing::RandomF32;
using testing::ThreadedParallelFor;

// Winograd's transforms round more than the direct sums (conv_winograd_test.cc).
constexpr double kTolerance = 2e-4;

struct Case {
  std::vector<int64_t> x;  // [N, C, spatial...]
  int64_t m;
  std::vector<int64_t> kernel;
  int64_t group = 1;
  std::vector<int64_t> strides = {};
  std::vector<int64_t> pads = {};  // begins then ends; empty: none
  std::vector<int64_t> dilations = {};
  bool bias = true;
};

std::string Describe(const Case& c) {
  return absl::StrCat("x=[", absl::StrJoin(c.x, ","), "] m=", c.m, " kernel=[", absl::StrJoin(c.kernel, ","),
                      "] group=", c.group, " strides=[", absl::StrJoin(c.strides, ","), "] pads=[",
                      absl::StrJoin(c.pads, ","), "] dilations=[", absl::StrJoin(c.dilations, ","), "] bias=", c.bias);
}

AttrMap Attrs(const Case& c) {
  AttrMap attrs{{"group", AttrValue::Int(c.group)}};
  if (!c.strides.empty()) attrs["strides"] = AttrValue::Ints(c.strides);
  if (!c.pads.empty()) attrs["pads"] = AttrValue::Ints(c.pads);
  if (!c.dilations.empty()) attrs["dilations"] = AttrValue::Ints(c.dilations);
  return attrs;
}

ConvGeometry Geometry(const Case& c) {
  absl::StatusOr<WindowSpec> spec = WindowSpecFromAttrs(Attrs(c));
  EXPECT_TRUE(spec.ok()) << spec.status();
  spec->kernel = c.kernel;
  const std::vector<int64_t> in(c.x.begin() + 2, c.x.end());
  absl::StatusOr<WindowGeometry> g = ComputeWindowGeometry(in, *spec);
  EXPECT_TRUE(g.ok()) << g.status();
  ConvGeometry geometry;
  geometry.window = *MakeWindow3d(in, *g);
  geometry.channels = c.x[1];
  geometry.out_channels = c.m;
  geometry.group = c.group;
  return geometry;
}

// Checks the prepared path against the reference kernel (and bitwise against the
// Conv kernel at the same thread count); returns the algorithm it picked.
ConvAlgorithm Check(const Case& c, uint32_t seed) {
  SCOPED_TRACE(absl::StrCat("seed=", seed, " ", Describe(c), " isa=", CpuIsaName(ActiveCpuIsa())));
  std::mt19937 rng(seed);
  std::vector<int64_t> w_dims = {c.m, c.x[1] / c.group};
  w_dims.insert(w_dims.end(), c.kernel.begin(), c.kernel.end());
  const Tensor x = RandomF32(rng, Shape(c.x)), w = RandomF32(rng, Shape(w_dims));
  std::vector<std::optional<Tensor>> inputs = {x, w};
  if (c.bias) inputs.push_back(RandomF32(rng, Shape({c.m})));
  RunOpOptions reference;
  reference.device = kReferenceDevice;
  absl::StatusOr<std::vector<Tensor>> want = RunOp("Conv", inputs, Attrs(c), reference);
  EXPECT_TRUE(want.ok()) << want.status();
  if (!want.ok()) return ConvAlgorithm::kEmpty;
  const ConvGeometry geometry = Geometry(c);

  ConvAlgorithm algorithm = ConvAlgorithm::kEmpty;
  for (int threads : {1, 3}) {
    const ParallelForFn parallel_for = threads > 1 ? ThreadedParallelFor(threads) : ParallelForFn();
    // Prepared from a copy that is then overwritten: the prepared weights must not
    // refer to it.
    std::vector<float> weights(w.flat<float>().begin(), w.flat<float>().end());
    absl::StatusOr<PreparedConvWeights> prepared = PrepareConvWeights(geometry, weights.data(), parallel_for);
    EXPECT_TRUE(prepared.ok()) << prepared.status();
    if (!prepared.ok()) return algorithm;
    std::fill(weights.begin(), weights.end(), 1e30f);
    algorithm = prepared->algorithm();
    Tensor got(DType::kF32, (*want)[0].shape());
    ConvForward(*prepared, c.x[0], x.data<float>(), c.bias ? inputs[2]->data<float>() : nullptr, got.data<float>(),
                parallel_for);
    const std::string what = absl::StrCat("threads=", threads, " algorithm=", static_cast<int>(algorithm));
    ExpectSameTensor(got, (*want)[0], kTolerance, what);

    RunOpOptions cpu;
    cpu.device = kCpuDevice;
    cpu.fall_back_to_reference = false;
    cpu.parallel_for = parallel_for;
    absl::StatusOr<std::vector<Tensor>> kernel = RunOp("Conv", inputs, Attrs(c), cpu);
    EXPECT_TRUE(kernel.ok()) << kernel.status();
    // The kernel prepares per call; where that picks the same algorithm, it runs the
    // same code on the same floats.
    PreparedConvWeights per_call;
    EXPECT_TRUE(PrepareConvWeightsInto(geometry, w.data<float>(), /*per_call=*/true, nullptr, &per_call).ok());
    const bool same = per_call.algorithm() == algorithm && per_call.winograd_tile() == prepared->winograd_tile();
    if (kernel.ok()) {
      ExpectSameTensor(got, (*kernel)[0], same ? 0.0 : kTolerance, absl::StrCat(what, " vs the Conv kernel"));
    }
  }
  return algorithm;
}

class ConvPreparedTest : public CpuIsaTest {};

bool Avx2() { return ActiveCpuIsa() >= CpuIsa::kAvx2; }
bool Avx512() { return ActiveCpuIsa() >= CpuIsa::kAvx512; }

TEST_P(ConvPreparedTest, EachAlgorithm) {
  EXPECT_EQ(Check({.x = {2, 6, 9, 11}, .m = 6, .kernel = {3, 3}, .group = 6, .pads = {1, 0, 2, 1}}, 1),
            ConvAlgorithm::kDepthwise);
  EXPECT_EQ(Check({.x = {1, 16, 13, 15}, .m = 17, .kernel = {3, 3}, .pads = {1, 1, 1, 1}}, 2),
            Avx2() ? ConvAlgorithm::kWinograd : ConvAlgorithm::kGemm);  // F(2x2)
  EXPECT_EQ(Check({.x = {2, 17, 27, 30}, .m = 16, .kernel = {3, 3}, .pads = {0, 1, 2, 1}}, 3),
            Avx2() ? ConvAlgorithm::kWinograd : ConvAlgorithm::kGemm);  // F(4x4)
  // 7x7 outputs: too few tiles for Winograd when the kernel transforms per call,
  // enough on weights transformed once (the prepared path differs from the kernel's).
  EXPECT_EQ(Check({.x = {2, 16, 7, 8}, .m = 18, .kernel = {3, 3}, .pads = {1, 1, 1, 0}}, 12),
            Avx2() ? ConvAlgorithm::kWinograd : ConvAlgorithm::kGemm);
  EXPECT_EQ(Check({.x = {2, 3, 23, 19}, .m = 9, .kernel = {5, 5}, .pads = {2, 1, 2, 3}}, 4),
            Avx2() ? ConvAlgorithm::kDirect : ConvAlgorithm::kGemm);
  // Few input channels and outputs that fill their 16-channel blocks: with AVX-512, the
  // blocked direct kernel, then unblocked (LeNet's second layer; 3 channels, 7x7, with
  // asymmetric pads; 1-D; 12 of 16 lanes, the least it takes).
  const ConvAlgorithm blocked_or_direct = Avx512() ? ConvAlgorithm::kBlockedDirect : ConvAlgorithm::kDirect;
  EXPECT_EQ(Check({.x = {3, 6, 14, 14}, .m = 16, .kernel = {5, 5}}, 17),
            Avx2() ? blocked_or_direct : ConvAlgorithm::kGemm);
  EXPECT_EQ(Check({.x = {2, 3, 29, 26}, .m = 32, .kernel = {7, 7}, .pads = {3, 2, 3, 4}}, 18),
            Avx2() ? blocked_or_direct : ConvAlgorithm::kGemm);
  EXPECT_EQ(Check({.x = {2, 5, 40}, .m = 28, .kernel = {5}, .pads = {2, 1}, .bias = false}, 19),
            Avx2() ? blocked_or_direct : ConvAlgorithm::kGemm);
  EXPECT_EQ(Check({.x = {1, 4, 12, 12}, .m = 12, .kernel = {3, 3}, .pads = {1, 1, 1, 1}}, 20),
            Avx2() ? blocked_or_direct : ConvAlgorithm::kGemm);
  // 11 of 16 lanes: the direct loops.
  EXPECT_EQ(Check({.x = {1, 4, 12, 12}, .m = 11, .kernel = {3, 3}, .pads = {1, 1, 1, 1}}, 21),
            Avx2() ? ConvAlgorithm::kDirect : ConvAlgorithm::kGemm);
  // Pointwise is a GEMM on the input as it lies, however few channels (the direct
  // loops would copy the planes and split only over images).
  EXPECT_EQ(Check({.x = {3, 9, 7, 5}, .m = 6, .kernel = {1, 1}, .group = 3}, 5), ConvAlgorithm::kGemm);
  // Pointwise with more input channels per group than the direct loops take.
  EXPECT_EQ(Check({.x = {2, 340, 3, 5}, .m = 6, .kernel = {1, 1}, .group = 2}, 13), ConvAlgorithm::kGemm);
  EXPECT_EQ(Check({.x = {1, 17, 17, 13}, .m = 19, .kernel = {1, 1}, .strides = {2, 3}}, 6), ConvAlgorithm::kGemm);
  EXPECT_EQ(Check({.x = {1, 3, 23, 21}, .m = 8, .kernel = {7, 7}, .strides = {2, 2}, .pads = {3, 2, 3, 4}}, 7),
            ConvAlgorithm::kGemm);
  EXPECT_EQ(Check({.x = {1, 40, 70, 70}, .m = 160, .kernel = {3, 3}, .strides = {2, 2}, .pads = {1, 1, 1, 1}}, 8),
            ConvAlgorithm::kGemm);  // several row blocks
  // Small outputs: pixels as the GEMM's rows, output channels as its columns, then
  // transposed -- implicit im2col, pointwise (the input itself), strided pointwise,
  // one image (the product split) or several (the images split).
  EXPECT_EQ(Check({.x = {1, 40, 9, 9}, .m = 160, .kernel = {3, 3}, .strides = {2, 2}, .pads = {1, 1, 1, 1}}, 14),
            ConvAlgorithm::kGemmPixelRows);
  EXPECT_EQ(Check({.x = {2, 64, 7, 7}, .m = 64, .kernel = {1, 1}}, 15), ConvAlgorithm::kGemmPixelRows);
  EXPECT_EQ(Check({.x = {3, 32, 13, 13}, .m = 96, .kernel = {1, 1}, .strides = {2, 2}, .bias = false}, 16),
            ConvAlgorithm::kGemmPixelRows);
  EXPECT_EQ(Check({.x = {2, 0, 5, 5}, .m = 3, .kernel = {3, 3}}, 9), ConvAlgorithm::kBiasOnly);
  EXPECT_EQ(Check({.x = {2, 3, 5, 5}, .m = 0, .kernel = {3, 3}}, 10), ConvAlgorithm::kEmpty);
  EXPECT_EQ(Check({.x = {0, 4, 5, 5}, .m = 4, .kernel = {3, 3}, .bias = false}, 11),
            Avx2() ? ConvAlgorithm::kDirect : ConvAlgorithm::kGemm);
}

TEST_P(ConvPreparedTest, RandomShapes) {
  for (uint32_t seed = 2000; seed < 2030; ++seed) {
    std::mt19937 rng(seed);
    auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
    const int rank = static_cast<int>(pick(1, 3));
    Case c;
    c.group = pick(1, 3);
    const bool depthwise = pick(0, 3) == 0;
    const int64_t channels = depthwise ? c.group : c.group * pick(1, 6);
    c.m = c.group * pick(1, 5);
    c.x = {pick(1, 2), channels};
    for (int d = 0; d < rank; ++d) {
      c.x.push_back(pick(1, rank == 3 ? 6 : 15));
      c.kernel.push_back(pick(1, 4));
      c.strides.push_back(pick(1, 3));
      c.dilations.push_back(pick(1, 2));
    }
    c.pads.assign(2 * rank, 0);
    for (int d = 0; d < rank; ++d) {  // asymmetric, and enough that every window fits
      const int64_t span = (c.kernel[d] - 1) * c.dilations[d] + 1;
      const int64_t need = std::max<int64_t>(0, span - c.x[2 + d]);
      c.pads[d] = pick(0, 2) + need / 2;
      c.pads[rank + d] = pick(0, 2) + need - need / 2;
    }
    c.bias = pick(0, 1) == 1;
    Check(c, seed);
  }
}

// Large random 2-D shapes that reach Winograd and the threaded GEMM splits.
TEST_P(ConvPreparedTest, RandomLargerShapes) {
  for (uint32_t seed = 3000; seed < 3006; ++seed) {
    std::mt19937 rng(seed);
    auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
    const int64_t k = pick(0, 1) ? 3 : 1, stride = pick(1, 2), size = pick(7, 30);
    Case c{.x = {1, pick(16, 40), size, size + pick(0, 3)}, .m = pick(16, 40), .kernel = {k, k}};
    c.strides = {stride, stride};
    c.pads = k == 3 ? std::vector<int64_t>{1, pick(0, 1), pick(0, 1), 1} : std::vector<int64_t>{0, 0, 0, 0};
    Check(c, seed);
  }
}

TEST_P(ConvPreparedTest, InconsistentGeometriesAreErrors) {
  ConvGeometry g = Geometry({.x = {1, 4, 5, 5}, .m = 4, .kernel = {3, 3}});
  const std::vector<float> w(4 * 4 * 9, 0.0f);
  ASSERT_TRUE(PrepareConvWeights(g, w.data()).ok());
  ConvGeometry bad = g;
  bad.group = 3;
  EXPECT_EQ(PrepareConvWeights(bad, w.data()).status().code(), absl::StatusCode::kInvalidArgument);
  bad = g;
  bad.group = 0;
  EXPECT_EQ(PrepareConvWeights(bad, w.data()).status().code(), absl::StatusCode::kInvalidArgument);
  bad = g;
  bad.window.stride[2] = 0;
  EXPECT_EQ(PrepareConvWeights(bad, w.data()).status().code(), absl::StatusCode::kInvalidArgument);
  bad = g;
  bad.window.out[1] = 4;
  const absl::Status status = PrepareConvWeights(bad, w.data()).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("output size"), absl::string_view::npos) << status;
}

TSR_INSTANTIATE_FOR_ALL_ISAS(ConvPreparedTest);

}  // namespace
}  // namespace tsr

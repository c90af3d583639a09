// Tests of the f32 cpu kernels of FusedConv (kernels/cpu/fused_conv.h) and FusedMatMul
// (kernels/cpu/fused_matmul.h) at every ISA level: against the reference kernels for
// every activation, with and without bias and residual, on odd and zero sizes, over
// the convolution algorithms (Winograd, direct, depthwise, 1x1 GEMM, implicit GEMM,
// 1-D and 3-D), single-threaded and over 3 threads; FusedConv bit for bit equal to
// the cpu Conv, Add and activation kernels run one after the other; and
// FusedConvForward on weights prepared once equal to the registered kernel.
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/attr_reader.h"
#include "graph/attribute.h"
#include "graph/op_registry.h"
#include "graph/ops/conv_geometry.h"
#include "graph/tensor.h"
#include "gtest/gtest.h"
#include "kernels/cpu/conv_prepared.h"
#include "kernels/cpu/conv_window.h"
#include "kernels/cpu/fused_activation.h"
#include "kernels/cpu/fused_conv.h"
#include "kernels/run_op.h"
#include "tests/kernels/cpu/cpu_test_util.h"

namespace tsr {
namespace {

using testing::CpuIsaTest;
using testing::ExpectCpuMatchesReference;
using testing::ExpectSameTensor;
using testing::RandomF32;
using testing::ThreadedParallelFor;

// Winograd rounds more than direct sums (as in conv_kernels_test.cc); the vector
// transcendentals are a few ulp.
constexpr double kConvTolerance = 2e-4;
constexpr double kMatMulTolerance = 1e-4;

constexpr const char* kActivations[] = {"None", "Relu", "LeakyRelu", "Clip", "Sigmoid", "Tanh", "Gelu"};

AttrMap ActivationAttrs(absl::string_view act) {
  AttrMap attrs{{"activation", AttrValue::String(std::string(act))}};
  if (act == "LeakyRelu") attrs["alpha"] = AttrValue::Float(0.2);
  if (act == "Clip") {
    attrs["min"] = AttrValue::Float(-0.5);
    attrs["max"] = AttrValue::Float(0.75);
  }
  return attrs;
}

struct ConvCase {
  std::vector<int64_t> x;  // [N, C, spatial...]
  int64_t m;
  std::vector<int64_t> kernel;
  int64_t group = 1;
  std::vector<int64_t> strides = {};
  std::vector<int64_t> pads = {};
  std::vector<int64_t> dilations = {};
};

std::string Describe(const ConvCase& c) {
  return absl::StrCat("x=[", absl::StrJoin(c.x, ","), "] m=", c.m, " kernel=[", absl::StrJoin(c.kernel, ","),
                      "] group=", c.group, " strides=[", absl::StrJoin(c.strides, ","), "] pads=[",
                      absl::StrJoin(c.pads, ","), "] dilations=[", absl::StrJoin(c.dilations, ","), "]");
}

AttrMap ConvAttrs(const ConvCase& c) {
  AttrMap attrs{{"group", AttrValue::Int(c.group)}};
  if (!c.strides.empty()) attrs["strides"] = AttrValue::Ints(c.strides);
  if (!c.pads.empty()) attrs["pads"] = AttrValue::Ints(c.pads);
  if (!c.dilations.empty()) attrs["dilations"] = AttrValue::Ints(c.dilations);
  return attrs;
}

// Covers each algorithm conv_prepared.h picks (at AVX2; the scalar level runs GEMMs).
const std::vector<ConvCase>& ConvCases() {
  static const std::vector<ConvCase> cases = {
      {{1, 16, 10, 9}, 16, {3, 3}, 1, {}, {1, 1, 1, 1}},           // Winograd
      {{2, 3, 7, 6}, 5, {3, 3}, 1, {}, {1, 0, 0, 1}},              // direct (few input channels)
      {{1, 6, 9, 8}, 6, {3, 3}, 6, {2, 1}, {1, 1, 1, 1}},          // depthwise, strided
      {{2, 8, 5, 3}, 12, {1, 1}},                                  // 1x1 GEMM
      {{1, 8, 9, 9}, 4, {3, 3}, 2, {2, 2}, {0, 1, 1, 0}, {1, 2}},  // implicit GEMM, grouped, dilated
      {{3, 4, 17}, 3, {3}, 1, {1}, {1, 1}},                        // 1-D, odd length
      {{1, 2, 3, 4, 5}, 3, {2, 2, 3}, 1, {1, 1, 2}},               // 3-D
      {{2, 4, 3, 3}, 5, {3, 3}},                                   // 1x1 output planes
      {{1, 3, 3}, 17, {1}},                                        // 1-D, planes of 3
      {{0, 4, 5, 5}, 4, {3, 3}},                                   // empty batch
      // The epilogue on the GEMM's finished blocks: several row and column blocks in one
      // image (split over threads inside the GEMM), and images split over threads.
      {{1, 40, 37, 41}, 70, {1, 1}},
      {{5, 8, 12, 12}, 16, {1, 1}},
  };
  return cases;
}

std::vector<int64_t> WeightDims(const ConvCase& c) {
  std::vector<int64_t> dims = {c.m, c.x[1] / c.group};
  dims.insert(dims.end(), c.kernel.begin(), c.kernel.end());
  return dims;
}

// Conv's output shape for the case.
Shape ConvOutput(const ConvCase& c, const Tensor& x, const Tensor& w) {
  RunOpOptions reference;
  absl::StatusOr<std::vector<Tensor>> y = RunOp("Conv", {x, w}, ConvAttrs(c), reference);
  EXPECT_TRUE(y.ok()) << y.status();
  return y.ok() ? (*y)[0].shape() : Shape{};
}

class FusedKernelsTest : public CpuIsaTest {};

TEST_P(FusedKernelsTest, FusedConvMatchesReference) {
  uint32_t seed = 1;
  for (size_t ci = 0; ci < ConvCases().size(); ++ci) {
    const ConvCase& c = ConvCases()[ci];
    for (size_t ai = 0; ai < std::size(kActivations); ++ai) {
      const char* act = kActivations[ai];
      // Relu (ResNet's case) with every operand combination; the others with one each, rotating.
      for (int variant = 0; variant < 4; ++variant) {
        if (std::string(act) != "Relu" && variant != static_cast<int>((ci + ai) % 4)) continue;
        const bool with_bias = variant & 1, with_residual = variant & 2;
        SCOPED_TRACE(absl::StrCat("seed=", seed, " ", Describe(c), " act=", act, " bias=", with_bias,
                                  " residual=", with_residual));
        std::mt19937 rng(seed++);
        const Tensor x = RandomF32(rng, Shape(c.x)), w = RandomF32(rng, Shape(WeightDims(c)));
        std::vector<std::optional<Tensor>> inputs = {x, w, std::nullopt, std::nullopt};
        if (with_bias) inputs[2] = RandomF32(rng, Shape{c.m});
        if (with_residual) inputs[3] = RandomF32(rng, ConvOutput(c, x, w), -2.0f, 2.0f);
        AttrMap attrs = ConvAttrs(c);
        for (const auto& [name, value] : ActivationAttrs(act)) attrs[name] = value;
        ExpectCpuMatchesReference("FusedConv", inputs, attrs, kConvTolerance);
      }
    }
  }
}

// The epilogue gives exactly what the cpu Add and activation kernels give after the cpu
// Conv kernel (which picks the same algorithm per call).
TEST_P(FusedKernelsTest, FusedConvEqualsCpuComposition) {
  uint32_t seed = 300;
  RunOpOptions cpu;
  cpu.device = kCpuDevice;
  for (int threads : {1, 3}) {
    cpu.parallel_for = threads > 1 ? ThreadedParallelFor(threads) : ParallelForFn();
    for (const ConvCase& c : ConvCases()) {
      for (const char* act : kActivations) {
        SCOPED_TRACE(absl::StrCat("seed=", seed, " ", Describe(c), " act=", act, " threads=", threads));
        std::mt19937 rng(seed++);
        const Tensor x = RandomF32(rng, Shape(c.x)), w = RandomF32(rng, Shape(WeightDims(c)));
        const Tensor b = RandomF32(rng, Shape{c.m});
        const Tensor z = RandomF32(rng, ConvOutput(c, x, w), -2.0f, 2.0f);
        absl::StatusOr<std::vector<Tensor>> conv = RunOp("Conv", {x, w, b}, ConvAttrs(c), cpu);
        ASSERT_TRUE(conv.ok()) << conv.status();
        absl::StatusOr<std::vector<Tensor>> want = RunOp("Add", {(*conv)[0], z}, {}, cpu);
        ASSERT_TRUE(want.ok()) << want.status();
        const std::string name = act;
        if (name == "LeakyRelu") {
          want = RunOp("LeakyRelu", {(*want)[0]}, {{"alpha", AttrValue::Float(0.2)}}, cpu);
        } else if (name == "Clip") {
          want = RunOp("Clip", {(*want)[0], Tensor::Scalar<float>(-0.5f), Tensor::Scalar<float>(0.75f)}, {}, cpu);
        } else if (name != "None") {
          want = RunOp(name, {(*want)[0]}, {}, cpu);
        }
        ASSERT_TRUE(want.ok()) << want.status();
        AttrMap attrs = ConvAttrs(c);
        for (const auto& [attr, value] : ActivationAttrs(act)) attrs[attr] = value;
        absl::StatusOr<std::vector<Tensor>> got = RunOp("FusedConv", {x, w, b, z}, attrs, cpu);
        ASSERT_TRUE(got.ok()) << got.status();
        ExpectSameTensor((*got)[0], (*want)[0], 0.0, "FusedConv vs Conv, Add, activation");
      }
    }
  }
}

ConvGeometry Geometry(const ConvCase& c) {
  absl::StatusOr<WindowSpec> spec = WindowSpecFromAttrs(ConvAttrs(c));
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

TEST_P(FusedKernelsTest, FusedConvForwardOnPreparedWeights) {
  uint32_t seed = 700;
  for (const ConvCase& c : ConvCases()) {
    for (const char* act : {"Relu", "Gelu", "Clip"}) {
      for (int threads : {1, 3}) {
        SCOPED_TRACE(absl::StrCat("seed=", seed, " ", Describe(c), " act=", act, " threads=", threads));
        std::mt19937 rng(seed++);
        const Tensor x = RandomF32(rng, Shape(c.x)), w = RandomF32(rng, Shape(WeightDims(c)));
        const Tensor b = RandomF32(rng, Shape{c.m});
        const Tensor z = RandomF32(rng, ConvOutput(c, x, w), -2.0f, 2.0f);
        AttrMap attrs = ConvAttrs(c);
        for (const auto& [name, value] : ActivationAttrs(act)) attrs[name] = value;
        const ParallelForFn parallel_for = threads > 1 ? ThreadedParallelFor(threads) : ParallelForFn();
        RunOpOptions cpu;
        cpu.device = kCpuDevice;
        cpu.fall_back_to_reference = false;
        cpu.parallel_for = parallel_for;
        absl::StatusOr<std::vector<Tensor>> want = RunOp("FusedConv", {x, w, b, z}, attrs, cpu);
        ASSERT_TRUE(want.ok()) << want.status();

        const ConvGeometry geometry = Geometry(c);
        absl::StatusOr<PreparedConvWeights> prepared = PrepareConvWeights(geometry, w.data<float>(), parallel_for);
        ASSERT_TRUE(prepared.ok()) << prepared.status();
        absl::StatusOr<FusedActivation> activation =
            ParseFusedActivation(AttrReader(*OpRegistry::Global().Find("FusedConv"), attrs));
        ASSERT_TRUE(activation.ok()) << activation.status();
        Tensor got(DType::kF32, (*want)[0].shape());
        FusedConvForward(*prepared, c.x[0], x.data<float>(), b.data<float>(), z.data<float>(), *activation,
                         got.data<float>(), parallel_for);
        // The kernel prepares per call; where that picks the same algorithm, the same floats.
        PreparedConvWeights per_call;
        ASSERT_TRUE(PrepareConvWeightsInto(geometry, w.data<float>(), /*per_call=*/true, nullptr, &per_call).ok());
        const bool same =
            per_call.algorithm() == prepared->algorithm() && per_call.winograd_tile() == prepared->winograd_tile();
        ExpectSameTensor(got, (*want)[0], same ? 0.0 : kConvTolerance, "FusedConvForward vs the FusedConv kernel");
      }
    }
  }
}

struct MatMulCase {
  std::vector<int64_t> a;  // [..., M, K]
  int64_t n;
};

TEST_P(FusedKernelsTest, FusedMatMulMatchesReference) {
  const std::vector<MatMulCase> cases = {
      {{1, 1}, 1},    {{3, 17}, 5}, {{2, 3, 17}, 3}, {{2, 5}, 1023}, {{3, 1023}, 2},
      {{17, 33}, 40}, {{0, 5}, 3},  {{4, 0}, 3},     {{2, 0, 4}, 6},
  };
  uint32_t seed = 900;
  for (size_t ci = 0; ci < cases.size(); ++ci) {
    const MatMulCase& c = cases[ci];
    for (size_t ai = 0; ai < std::size(kActivations); ++ai) {
      const char* act = kActivations[ai];
      for (int variant = 0; variant < 8; ++variant) {
        // Gelu (a transformer MLP's case) with every combination; the others with two each.
        if (std::string(act) != "Gelu" && variant % 4 != static_cast<int>((ci + ai) % 4)) continue;
        const bool with_bias = variant & 1, with_residual = variant & 2, transpose_b = variant & 4;
        SCOPED_TRACE(absl::StrCat("seed=", seed, " a=[", absl::StrJoin(c.a, ","), "] n=", c.n, " act=", act,
                                  " bias=", with_bias, " residual=", with_residual, " transpose_b=", transpose_b));
        std::mt19937 rng(seed++);
        const int64_t k = c.a.back();
        std::vector<int64_t> y_dims = c.a;
        y_dims.back() = c.n;
        std::vector<std::optional<Tensor>> inputs = {RandomF32(rng, Shape(c.a)),
                                                     RandomF32(rng, transpose_b ? Shape{c.n, k} : Shape{k, c.n}),
                                                     std::nullopt, std::nullopt};
        if (with_bias) inputs[2] = RandomF32(rng, Shape{c.n});
        if (with_residual) inputs[3] = RandomF32(rng, Shape(y_dims), -2.0f, 2.0f);
        AttrMap attrs = ActivationAttrs(act);
        attrs["transpose_b"] = AttrValue::Int(transpose_b ? 1 : 0);
        ExpectCpuMatchesReference("FusedMatMul", inputs, attrs, kMatMulTolerance);
      }
    }
  }
}

TSR_INSTANTIATE_FOR_ALL_ISAS(FusedKernelsTest);

TEST(FusedActivationTest, ParsesTheAttributes) {
  const OpDef& def = *OpRegistry::Global().Find("FusedMatMul");
  absl::StatusOr<FusedActivation> act = ParseFusedActivation(AttrReader(def, {}));
  ASSERT_TRUE(act.ok());
  EXPECT_EQ(act->kind, FusedActivationKind::kNone);
  act = ParseFusedActivation(AttrReader(def, ActivationAttrs("Clip")));
  ASSERT_TRUE(act.ok());
  EXPECT_EQ(act->kind, FusedActivationKind::kClip);
  EXPECT_EQ(act->min, -0.5f);
  EXPECT_EQ(act->max, 0.75f);
  act = ParseFusedActivation(AttrReader(def, ActivationAttrs("LeakyRelu")));
  ASSERT_TRUE(act.ok());
  EXPECT_EQ(act->kind, FusedActivationKind::kLeakyRelu);
  EXPECT_EQ(act->alpha, 0.2);
  act = ParseFusedActivation(AttrReader(def, {{"activation", AttrValue::String("Swish")}}));
  EXPECT_EQ(act.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(act.status().message().find("\"Swish\""), std::string::npos) << act.status();
}

}  // namespace
}  // namespace tsr

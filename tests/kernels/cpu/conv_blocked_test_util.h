// Helpers of the channel-blocked convolution tests (conv_blocked_direct_test.cc,
// conv_blocked_winograd_test.cc): a case (shapes, epilogue), its random operands, the
// reference FusedConv on the plain tensors, and BlockedConvForward on the blocked ones
// with NaNs in the padding lanes, which the kernels must neither read (x) nor let
// through (residual).
#ifndef TESSERA_TESTS_KERNELS_CPU_CONV_BLOCKED_TEST_UTIL_H_
#define TESSERA_TESTS_KERNELS_CPU_CONV_BLOCKED_TEST_UTIL_H_

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/attribute.h"
#include "graph/tensor.h"
#include "gtest/gtest.h"
#include "kernels/cpu/conv_blocked.h"
#include "kernels/cpu/conv_prepared.h"
#include "kernels/cpu/fused_activation.h"
#include "kernels/kernel.h"
#include "kernels/run_op.h"
#include "tests/kernels/cpu/cpu_test_util.h"

namespace tsr::testing {

struct DirectCase {
  int64_t n = 1, c = 1, m = 1;
  std::vector<int64_t> in;      // spatial sizes: {h, w} or {w} (1-D)
  std::vector<int64_t> kernel;  // same rank
  std::vector<int64_t> strides;
  std::vector<int64_t> pads;  // begins then ends
  bool x_blocked = true;
  bool bias = true;
  bool residual = false;
  bool in_place = false;  // residual == y
  std::string act = "None";
  float clip_min = 0.0f, clip_max = 6.0f;
};

inline std::string Describe(const DirectCase& c) {
  return absl::StrCat("n=", c.n, " c=", c.c, " m=", c.m, " in=[", absl::StrJoin(c.in, ","), "] kernel=[",
                      absl::StrJoin(c.kernel, ","), "] strides=[", absl::StrJoin(c.strides, ","), "] pads=[",
                      absl::StrJoin(c.pads, ","), "] x_blocked=", c.x_blocked, " bias=", c.bias,
                      " residual=", c.residual, " in_place=", c.in_place, " act=", c.act,
                      c.act == "Clip" ? absl::StrCat("(", c.clip_min, ",", c.clip_max, ")") : "");
}

// The output size of spatial dimension d, or < 1 when the window does not fit.
inline int64_t OutSize(const DirectCase& c, size_t d) {
  const size_t rank = c.in.size();
  const int64_t span = c.in[d] + c.pads[d] + c.pads[rank + d] - c.kernel[d];
  return span < 0 ? 0 : span / c.strides[d] + 1;
}

inline ConvGeometry GeometryOf(const DirectCase& c) {
  ConvGeometry g;
  const int rank = static_cast<int>(c.in.size());
  for (int d = 0; d < 3; ++d) {
    const int i = d - (3 - rank);
    g.window.in[d] = i < 0 ? 1 : c.in[i];
    g.window.out[d] = i < 0 ? 1 : OutSize(c, i);
    g.window.kernel[d] = i < 0 ? 1 : c.kernel[i];
    g.window.stride[d] = i < 0 ? 1 : c.strides[i];
    g.window.dilation[d] = 1;
    g.window.pad_begin[d] = i < 0 ? 0 : c.pads[i];
    g.window.pad_end[d] = i < 0 ? 0 : c.pads[rank + i];
  }
  g.channels = c.c;
  g.out_channels = c.m;
  g.group = 1;
  return g;
}

inline FusedActivation ActivationOf(const DirectCase& c) {
  FusedActivation act;
  if (c.act == "Relu") act.kind = FusedActivationKind::kRelu;
  if (c.act == "Sigmoid") act.kind = FusedActivationKind::kSigmoid;
  if (c.act == "Clip") {
    act.kind = FusedActivationKind::kClip;
    act.min = c.clip_min;
    act.max = c.clip_max;
  }
  return act;
}

// The case's random operands, plain NCHW.
struct Operands {
  Tensor x, w;
  std::optional<Tensor> bias, residual;
};

inline Operands MakeOperands(const DirectCase& c, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<int64_t> x_dims = {c.n, c.c}, w_dims = {c.m, c.c}, y_dims = {c.n, c.m};
  x_dims.insert(x_dims.end(), c.in.begin(), c.in.end());
  w_dims.insert(w_dims.end(), c.kernel.begin(), c.kernel.end());
  for (size_t d = 0; d < c.in.size(); ++d) y_dims.push_back(OutSize(c, d));
  Operands ops{RandomF32(rng, Shape(x_dims)), RandomF32(rng, Shape(w_dims)), std::nullopt, std::nullopt};
  if (c.bias) ops.bias = RandomF32(rng, Shape({c.m}));
  if (c.residual) ops.residual = RandomF32(rng, Shape(y_dims), -2.0f, 2.0f);
  return ops;
}

// The reference FusedConv on the plain tensors.
inline Tensor Reference(const DirectCase& c, const Operands& ops) {
  AttrMap attrs{{"group", AttrValue::Int(1)},
                {"strides", AttrValue::Ints(c.strides)},
                {"pads", AttrValue::Ints(c.pads)},
                {"activation", AttrValue::String(c.act)}};
  if (c.act == "Clip") {
    attrs["min"] = AttrValue::Float(c.clip_min);
    attrs["max"] = AttrValue::Float(c.clip_max);
  }
  RunOpOptions reference;
  reference.device = kReferenceDevice;
  absl::StatusOr<std::vector<Tensor>> y = RunOp("FusedConv", {ops.x, ops.w, ops.bias, ops.residual}, attrs, reference);
  EXPECT_TRUE(y.ok()) << y.status();
  return y.ok() ? (*y)[0] : Tensor();
}

// Blocks `plain` ([n, channels, pixels]) and puts NaN into the padding lanes, which the
// kernel must neither read (x) nor let through (residual).
inline std::vector<float> BlockWithNanPadding(int64_t n, int64_t channels, int64_t pixels, const float* plain) {
  std::vector<float> blocked(static_cast<size_t>(n * ChannelBlocks(channels) * kChannelBlock * pixels));
  BlockChannels(n, channels, pixels, plain, blocked.data());
  const int64_t blocks = ChannelBlocks(channels), lanes = channels - (blocks - 1) * kChannelBlock;
  for (int64_t i = 0; i < n; ++i) {
    float* last = blocked.data() + ((i * blocks + blocks - 1) * pixels) * kChannelBlock;
    for (int64_t p = 0; p < pixels; ++p) {
      for (int64_t l = lanes; l < kChannelBlock; ++l) last[p * kChannelBlock + l] = std::nanf("");
    }
  }
  return blocked;
}

// BlockedConvForward on the case's operands: the blocked output (with its padding lanes).
inline std::vector<float> RunBlocked(const DirectCase& c, const Operands& ops, const PreparedBlockedConv& prepared,
                                     const ParallelForFn& parallel_for) {
  const ConvGeometry& g = prepared.geometry();
  const int64_t in_pixels = g.window.in_size(), out_pixels = g.window.out_size();
  const std::vector<float> x = c.x_blocked ? BlockWithNanPadding(c.n, c.c, in_pixels, ops.x.data<float>())
                                           : std::vector<float>(ops.x.flat<float>().begin(), ops.x.flat<float>().end());
  const size_t y_floats = static_cast<size_t>(c.n * ChannelBlocks(c.m) * kChannelBlock * out_pixels);
  std::vector<float> y(y_floats, std::numeric_limits<float>::quiet_NaN());
  std::vector<float> residual;
  const float* z = nullptr;
  if (c.residual) {
    residual = BlockWithNanPadding(c.n, c.m, out_pixels, ops.residual->data<float>());
    if (c.in_place) {
      y = residual;
      z = y.data();
    } else {
      z = residual.data();
    }
  }
  BlockedConvForward(prepared, c.n, x.data(), c.x_blocked, c.bias ? ops.bias->data<float>() : nullptr, z,
                     ActivationOf(c), y.data(), parallel_for);
  return y;
}

inline void ExpectBitwiseEqual(const std::vector<float>& got, const std::vector<float>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(std::memcmp(&got[i], &want[i], sizeof(float)), 0)
        << what << ": element " << i << " is " << got[i] << ", want " << want[i];
  }
}

// The blocked kernel (`algorithm`) against the reference within `tolerance`, inline and
// over 3 threads (bit for bit the same), with zeros in the output's padding lanes.
inline void CheckBlocked(const DirectCase& c, uint32_t seed, BlockedConvAlgorithm algorithm, double tolerance) {
  SCOPED_TRACE(absl::StrCat("seed=", seed, " ", Describe(c), " isa=", CpuIsaName(ActiveCpuIsa())));
  const ConvGeometry g = GeometryOf(c);
  ASSERT_TRUE(BlockedConvApplies(g));
  const Operands ops = MakeOperands(c, seed);
  const Tensor want = Reference(c, ops);
  absl::StatusOr<PreparedBlockedConv> prepared = PrepareBlockedConv(g, ops.w.data<float>(), algorithm);
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  EXPECT_FALSE(prepared->depthwise());

  const std::vector<float> y = RunBlocked(c, ops, *prepared, nullptr);
  const int64_t out_pixels = g.window.out_size(), blocks = ChannelBlocks(c.m);
  const int64_t lanes = c.m - (blocks - 1) * kChannelBlock;
  for (int64_t i = 0; i < c.n; ++i) {
    const float* last = y.data() + ((i * blocks + blocks - 1) * out_pixels) * kChannelBlock;
    for (int64_t p = 0; p < out_pixels; ++p) {
      for (int64_t l = lanes; l < kChannelBlock; ++l) {
        ASSERT_EQ(std::memcmp(&last[p * kChannelBlock + l], "\0\0\0\0", sizeof(float)), 0)
            << "padding lane " << l << " of pixel " << p << " of image " << i << " is " << last[p * kChannelBlock + l];
      }
    }
  }
  Tensor got(DType::kF32, want.shape());
  UnblockChannels(c.n, c.m, out_pixels, y.data(), got.data<float>());
  ExpectSameTensor(got, want, tolerance, "blocked conv vs reference FusedConv");

  const std::vector<float> threaded = RunBlocked(c, ops, *prepared, ThreadedParallelFor(3));
  ExpectBitwiseEqual(threaded, y, "3 threads vs inline");
}

// The AVX-512 kernels and the portable fallback compute the same floats for the case,
// prepared with `algorithm`.
// The vector kernels of `isa` (AVX2 or AVX-512) and the portable fallback compute the
// same floats; skipped where the CPU lacks `isa`.
inline void ExpectVectorEqualsFallback(const DirectCase& c, uint32_t seed, BlockedConvAlgorithm algorithm, CpuIsa isa) {
  if (SupportedCpuIsa(isa) != isa) GTEST_SKIP() << "CPU lacks " << CpuIsaName(isa);
  SCOPED_TRACE(absl::StrCat("seed=", seed, " isa=", CpuIsaName(isa), " ", Describe(c)));
  const Operands ops = MakeOperands(c, seed);
  absl::StatusOr<PreparedBlockedConv> prepared = PrepareBlockedConv(GeometryOf(c), ops.w.data<float>(), algorithm);
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  ::setenv("TESSERA_CPU_ISA", std::string(CpuIsaName(isa)).c_str(), 1);
  const std::vector<float> vector = RunBlocked(c, ops, *prepared, nullptr);
  ::setenv("TESSERA_CPU_ISA", "scalar", 1);
  const std::vector<float> fallback = RunBlocked(c, ops, *prepared, nullptr);
  ::unsetenv("TESSERA_CPU_ISA");
  ExpectBitwiseEqual(vector, fallback, absl::StrCat(CpuIsaName(isa), " vs fallback"));
}

inline DirectCase Square(int64_t c, int64_t m, int64_t size, int64_t kernel, int64_t stride, int64_t pad) {
  return {.c = c,
          .m = m,
          .in = {size, size},
          .kernel = {kernel, kernel},
          .strides = {stride, stride},
          .pads = {pad, pad, pad, pad}};
}

}  // namespace tsr::testing

#endif  // TESSERA_TESTS_KERNELS_CPU_CONV_BLOCKED_TEST_UTIL_H_

// Tests of the cpu activation kernels (kernels/cpu/activation_kernels.cc) against the
// reference kernels at every ISA level: ranks 0..5, sizes 1, 3, 17, 1023, zero-size
// dimensions, special values, every attribute variant and in-place execution. Relu
// and LeakyRelu must match bit for bit; the others within their ulp bounds (relative
// above 1, absolute below, as ExpectCpuMatchesReference compares).
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/attribute.h"
#include "graph/op_registry.h"
#include "graph/tensor.h"
#include "gtest/gtest.h"
#include "kernels/kernel.h"
#include "kernels/run_op.h"
#include "tests/kernels/cpu/cpu_test_util.h"

namespace tsr {
namespace {

using testing::CpuIsaTest;
using testing::ExpectCpuMatchesReference;
using testing::RandomF32;
using testing::ThreadedParallelFor;

// 4 ulp of values near 1.
constexpr double kTolerance = 5e-7;

Tensor SpecialF32(std::mt19937& rng, const Shape& shape, float range) {
  const float inf = std::numeric_limits<float>::infinity();
  const float specials[] = {std::numeric_limits<float>::quiet_NaN(),
                            inf,
                            -inf,
                            0.0f,
                            -0.0f,
                            3e38f,
                            -3e38f,
                            1e-45f,
                            -1e-40f,
                            1e-30f,
                            88.0f,
                            -88.0f,
                            100.0f,
                            -100.0f,
                            9.0f,
                            -9.0f,
                            0.55f,
                            -0.55f};
  Tensor t = RandomF32(rng, shape, -range, range);
  std::uniform_int_distribution<int> pick(0, 3 * static_cast<int>(std::size(specials)) - 1);
  for (float& x : t.flat<float>()) {
    const int k = pick(rng);
    if (k < static_cast<int>(std::size(specials))) x = specials[k];
  }
  return t;
}

std::vector<Shape> Shapes() {
  return {Shape{},  Shape{1},    Shape{3},     Shape{17},           Shape{1023},
          Shape{0}, Shape{3, 0}, Shape{4, 33}, Shape{2, 3, 1, 5, 7}};
}

struct Case {
  const char* op;
  AttrMap attrs;
  bool exact;
};

std::vector<Case> Cases() {
  return {
      {"Relu", {}, true},
      {"LeakyRelu", {}, true},
      {"LeakyRelu", {{"alpha", AttrValue::Float(0.2)}}, true},
      {"LeakyRelu", {{"alpha", AttrValue::Float(-1.7)}}, true},
      {"LeakyRelu", {{"alpha", AttrValue::Float(0.0)}}, true},
      {"Sigmoid", {}, false},
      {"Tanh", {}, false},
      {"Silu", {}, false},
      {"Softplus", {}, false},
      {"Erf", {}, false},
      {"Gelu", {}, false},
      {"Gelu", {{"approximate", AttrValue::String("none")}}, false},
      {"Gelu", {{"approximate", AttrValue::String("tanh")}}, false},
  };
}

class ActivationTest : public CpuIsaTest {};

TEST_P(ActivationTest, MatchesReference) {
  uint32_t seed = 10;
  for (const Shape& shape : Shapes()) {
    for (float range : {1.0f, 12.0f}) {
      ++seed;
      SCOPED_TRACE(absl::StrCat("seed=", seed, " shape=", shape.ToString(), " range=", range));
      std::mt19937 rng(seed);
      const Tensor x = SpecialF32(rng, shape, range);
      for (const Case& c : Cases()) {
        SCOPED_TRACE(c.op);
        ExpectCpuMatchesReference(c.op, {x}, c.attrs, c.exact ? 0.0 : kTolerance);
        if (!c.exact) continue;
        // Exact ops: bit for bit, -0 included.
        RunOpOptions cpu;
        cpu.device = kCpuDevice;
        EXPECT_TRUE(RunOp(c.op, {x}, c.attrs, cpu)->at(0).BitwiseEquals(RunOp(c.op, {x}, c.attrs)->at(0)));
      }
    }
  }
}

// Output 0 aliasing input 0, as the executor may run them.
TEST_P(ActivationTest, InPlace) {
  std::mt19937 rng(20);
  SCOPED_TRACE("seed=20");
  const Tensor x = SpecialF32(rng, Shape{7, 1023}, 8.0f);
  RunOpOptions cpu;
  cpu.device = kCpuDevice;
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.op);
    const Tensor want = RunOp(c.op, {x}, c.attrs, cpu)->at(0);
    Tensor y = x.Clone();
    const OpDef* def = *OpRegistry::Global().Lookup(c.op);
    const KernelFn* fn = KernelRegistry::Global().Find(c.op, kCpuDevice, DType::kF32);
    ASSERT_NE(fn, nullptr);
    KernelContext ctx(*def, "in_place", c.attrs, {&y}, {&y});
    ctx.set_parallel_for(ThreadedParallelFor(3));
    ASSERT_TRUE((*fn)(ctx).ok());
    EXPECT_TRUE(y.BitwiseEquals(want));
  }
}

TEST_P(ActivationTest, GeluRejectsUnknownApproximation) {
  const OpDef* def = *OpRegistry::Global().Lookup("Gelu");
  const KernelFn* fn = KernelRegistry::Global().Find("Gelu", kCpuDevice, DType::kF32);
  ASSERT_NE(fn, nullptr);
  Tensor x(DType::kF32, Shape{4});
  Tensor y(DType::kF32, Shape{4});
  KernelContext ctx(*def, "gelu", {{"approximate", AttrValue::String("fast")}}, {&x}, {&y});
  const absl::Status status = (*fn)(ctx);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("approximate"), absl::string_view::npos) << status;
}

TSR_INSTANTIATE_FOR_ALL_ISAS(ActivationTest);

}  // namespace
}  // namespace tsr

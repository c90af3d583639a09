// Tests of the cpu elementwise kernels (kernels/cpu/elementwise_kernels.cc) against the
// reference kernels at every ISA level: every broadcasting corner, ranks 0..5, sizes
// around the vector width (1, 3, 17, 1023), zero-size dimensions, special values
// (NaN, +-inf, -0, huge, tiny, subnormal) and in-place execution. All ops but Exp and
// Log must match the reference bit for bit.
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <utility>
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

// Random values with a third of them drawn from the special ones.
Tensor SpecialF32(std::mt19937& rng, const Shape& shape) {
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
                            1.0f,
                            -1.0f,
                            2.0f,
                            0.5f};
  Tensor t = RandomF32(rng, shape, -4.0f, 4.0f);
  std::uniform_int_distribution<int> pick(0, 3 * static_cast<int>(std::size(specials)) - 1);
  for (float& x : t.flat<float>()) {
    const int k = pick(rng);
    if (k < static_cast<int>(std::size(specials))) x = specials[k];
  }
  return t;
}

// The cpu kernel's output (1 and 3 threads) equals the reference's bit for bit.
void ExpectBitwiseEqual(absl::string_view op, const std::vector<std::optional<Tensor>>& inputs,
                        const AttrMap& attrs = {}) {
  RunOpOptions reference;
  absl::StatusOr<std::vector<Tensor>> want = RunOp(op, inputs, attrs, reference);
  ASSERT_TRUE(want.ok()) << want.status();
  for (int threads : {1, 3}) {
    RunOpOptions cpu;
    cpu.device = kCpuDevice;
    cpu.fall_back_to_reference = false;
    if (threads > 1) cpu.parallel_for = ThreadedParallelFor(threads);
    absl::StatusOr<std::vector<Tensor>> got = RunOp(op, inputs, attrs, cpu);
    ASSERT_TRUE(got.ok()) << got.status();
    ASSERT_EQ((*got)[0].shape(), (*want)[0].shape()) << op;
    EXPECT_TRUE((*got)[0].BitwiseEquals((*want)[0]))
        << op << " threads=" << threads << "\ngot  " << (*got)[0].DebugString(32) << "\nwant "
        << (*want)[0].DebugString(32);
  }
}

// Runs the registered cpu kernel with output 0 aliasing input 0 (as the executor may)
// and returns the result.
Tensor RunInPlace(absl::string_view op, std::vector<Tensor> inputs, const AttrMap& attrs = {}, int threads = 3) {
  const OpDef* def = *OpRegistry::Global().Lookup(op);
  const KernelFn* fn = KernelRegistry::Global().Find(op, kCpuDevice, inputs[0].dtype());
  EXPECT_NE(fn, nullptr) << op;
  std::vector<const Tensor*> in;
  for (const Tensor& t : inputs) in.push_back(&t);
  KernelContext ctx(*def, "in_place", attrs, in, {&inputs[0]});
  ctx.set_parallel_for(ThreadedParallelFor(threads));
  const absl::Status status = (*fn)(ctx);
  EXPECT_TRUE(status.ok()) << status;
  return inputs[0];
}

// Pairs of shapes covering the broadcasting corners (each is also tried swapped).
std::vector<std::pair<Shape, Shape>> BroadcastPairs() {
  return {
      {Shape{}, Shape{}},
      {Shape{1}, Shape{}},
      {Shape{1023}, Shape{}},
      {Shape{17}, Shape{17}},
      {Shape{1023}, Shape{1023}},
      {Shape{3}, Shape{1}},
      {Shape{4, 17}, Shape{17}},
      {Shape{4, 17}, Shape{4, 1}},
      {Shape{4, 1}, Shape{1, 17}},
      {Shape{2, 3, 5}, Shape{2, 1, 5}},
      {Shape{2, 1, 5}, Shape{1, 3, 1}},
      {Shape{2, 3, 4, 5}, Shape{3, 1, 5}},
      {Shape{0, 3}, Shape{3}},
      {Shape{2, 0, 3}, Shape{1, 1, 3}},
      {Shape{1, 2, 3, 4, 5}, Shape{2, 1, 4, 1}},
      {Shape{3, 1, 1, 2}, Shape{1, 4, 5, 1}},
      {Shape{37, 3}, Shape{37, 1}},
      {Shape{2, 1023}, Shape{1, 1023}},
      {Shape{5, 1, 9}, Shape{1, 1, 1}},
      {Shape{1, 1}, Shape{7, 1, 1}},
  };
}

class ElementwiseTest : public CpuIsaTest {};

TEST_P(ElementwiseTest, BinaryOpsMatchReferenceBitwise) {
  uint32_t seed = 100;
  for (const auto& [s0, s1] : BroadcastPairs()) {
    for (bool swap : {false, true}) {
      const Shape& a_shape = swap ? s1 : s0;
      const Shape& b_shape = swap ? s0 : s1;
      ++seed;
      SCOPED_TRACE(absl::StrCat("seed=", seed, " a=", a_shape.ToString(), " b=", b_shape.ToString()));
      std::mt19937 rng(seed);
      const Tensor a = SpecialF32(rng, a_shape);
      const Tensor b = SpecialF32(rng, b_shape);
      for (const char* op : {"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Equal", "Less", "Greater"}) {
        SCOPED_TRACE(op);
        ExpectBitwiseEqual(op, {a, b});
      }
      // Plain random values, so comparisons and Max/Min see many ordinary ties too.
      const Tensor c = RandomF32(rng, a_shape);
      for (const char* op : {"Equal", "Less", "Greater", "Max", "Min"}) {
        SCOPED_TRACE(op);
        ExpectBitwiseEqual(op, {c, c});
        ExpectBitwiseEqual(op, {a, b});
      }
    }
  }
}

TEST_P(ElementwiseTest, VariadicMaxMin) {
  const std::vector<std::vector<Shape>> cases = {
      {Shape{17}},
      {Shape{2, 1, 3}},
      {Shape{1023}, Shape{1023}, Shape{1023}},
      {Shape{4, 1, 5}, Shape{3, 1}, Shape{}, Shape{1, 1, 5}},
      {Shape{}, Shape{2, 3}},
      {Shape{0, 4}, Shape{4}, Shape{1, 4}},
  };
  uint32_t seed = 300;
  for (const std::vector<Shape>& shapes : cases) {
    ++seed;
    SCOPED_TRACE(absl::StrCat("seed=", seed, " inputs=", shapes.size(), " first=", shapes[0].ToString()));
    std::mt19937 rng(seed);
    std::vector<std::optional<Tensor>> inputs;
    for (const Shape& s : shapes) inputs.push_back(SpecialF32(rng, s));
    ExpectBitwiseEqual("Max", inputs);
    ExpectBitwiseEqual("Min", inputs);
  }
}

TEST_P(ElementwiseTest, PowSpecialExponents) {
  std::mt19937 rng(400);
  SCOPED_TRACE("seed=400");
  const Tensor x = SpecialF32(rng, Shape{3, 17});
  for (float e : {2.0f, 0.5f, 0.0f, -1.0f, 3.0f}) ExpectBitwiseEqual("Pow", {x, Tensor::Scalar<float>(e)});
  // An integer exponent is declined to the reference kernel.
  ExpectBitwiseEqual("Pow", {x, Tensor::FromVector<int32_t>(Shape{17}, std::vector<int32_t>(17, 3))});
}

TEST_P(ElementwiseTest, Where) {
  const std::vector<std::vector<Shape>> cases = {
      {Shape{}, Shape{}, Shape{}},
      {Shape{17}, Shape{17}, Shape{17}},
      {Shape{1023}, Shape{}, Shape{1023}},
      {Shape{1023}, Shape{1023}, Shape{}},
      {Shape{4, 1}, Shape{1, 17}, Shape{}},
      {Shape{2, 3, 5}, Shape{3, 1}, Shape{2, 1, 5}},
      {Shape{}, Shape{3, 5}, Shape{5}},
      {Shape{0, 5}, Shape{5}, Shape{1}},
      {Shape{2, 1, 4, 1, 3}, Shape{1, 3, 1, 2, 1}, Shape{4, 2, 3}},
  };
  uint32_t seed = 500;
  for (const std::vector<Shape>& shapes : cases) {
    ++seed;
    SCOPED_TRACE(absl::StrCat("seed=", seed, " cond=", shapes[0].ToString(), " x=", shapes[1].ToString(),
                              " y=", shapes[2].ToString()));
    std::mt19937 rng(seed);
    Tensor cond(DType::kBool, shapes[0]);
    std::bernoulli_distribution coin(0.5);
    for (bool& c : cond.flat<bool>()) c = coin(rng);
    ExpectBitwiseEqual("Where", {cond, SpecialF32(rng, shapes[1]), SpecialF32(rng, shapes[2])});
    // Non-f32 values are declined to the reference kernel.
    Tensor xi(DType::kI32, shapes[1]);
    Tensor yi(DType::kI32, shapes[2]);
    for (int32_t& v : xi.flat<int32_t>()) v = 1;
    for (int32_t& v : yi.flat<int32_t>()) v = 2;
    ExpectBitwiseEqual("Where", {cond, xi, yi});
  }
}

TEST_P(ElementwiseTest, UnaryOps) {
  uint32_t seed = 600;
  for (const Shape& shape : {Shape{}, Shape{1}, Shape{3}, Shape{17}, Shape{1023}, Shape{0}, Shape{2, 0, 3},
                             Shape{3, 5, 7}, Shape{2, 1, 3, 1, 5}}) {
    ++seed;
    SCOPED_TRACE(absl::StrCat("seed=", seed, " shape=", shape.ToString()));
    std::mt19937 rng(seed);
    const Tensor x = SpecialF32(rng, shape);
    for (const char* op : {"Abs", "Neg", "Sqrt", "Rsqrt", "Reciprocal"}) {
      SCOPED_TRACE(op);
      ExpectBitwiseEqual(op, {x});
    }
    // Exp and Log: within 2 ulp (vector_math_test.cc has the precise bounds).
    ExpectCpuMatchesReference("Exp", {x}, {}, 3e-7);
    ExpectCpuMatchesReference("Log", {x}, {}, 3e-7);
    ExpectCpuMatchesReference("Exp", {RandomF32(rng, shape, -100.0f, 100.0f)}, {}, 3e-7);
    ExpectCpuMatchesReference("Log", {RandomF32(rng, shape, 0.0f, 10.0f)}, {}, 3e-7);
  }
}

TEST_P(ElementwiseTest, Clip) {
  std::mt19937 rng(700);
  SCOPED_TRACE("seed=700");
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (const Shape& shape : {Shape{}, Shape{17}, Shape{1023}, Shape{0, 2}, Shape{3, 1, 5}}) {
    SCOPED_TRACE(shape.ToString());
    const Tensor x = SpecialF32(rng, shape);
    const std::vector<std::pair<std::optional<float>, std::optional<float>>> bounds = {
        {std::nullopt, std::nullopt},
        {-0.5f, std::nullopt},
        {std::nullopt, 0.5f},
        {-0.5f, 0.5f},
        {1.0f, -1.0f},  // min > max: every element becomes max
        {nan, 0.0f},
        {0.0f, -0.0f},
    };
    for (const auto& [lo, hi] : bounds) {
      std::vector<std::optional<Tensor>> inputs = {x, std::nullopt, std::nullopt};
      if (lo) inputs[1] = Tensor::Scalar<float>(*lo);
      if (hi) inputs[2] = Tensor::Scalar<float>(*hi);
      ExpectBitwiseEqual("Clip", inputs);
    }
  }
}

TEST_P(ElementwiseTest, InPlace) {
  std::mt19937 rng(800);
  SCOPED_TRACE("seed=800");
  const Tensor x = SpecialF32(rng, Shape{5, 1023});
  const Tensor row = SpecialF32(rng, Shape{1023});
  for (const char* op : {"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min"}) {
    SCOPED_TRACE(op);
    const Tensor want = RunOp(op, {x, row})->at(0);
    EXPECT_TRUE(RunInPlace(op, {x.Clone(), row}).BitwiseEquals(want));
  }
  for (const char* op : {"Abs", "Neg", "Sqrt", "Rsqrt", "Reciprocal", "Exp", "Log"}) {
    SCOPED_TRACE(op);
    RunOpOptions cpu;
    cpu.device = kCpuDevice;
    const Tensor want = RunOp(op, {x}, {}, cpu)->at(0);  // out of place
    EXPECT_TRUE(RunInPlace(op, {x.Clone()}).BitwiseEquals(want));
  }
  const Tensor lo = Tensor::Scalar<float>(-1.0f), hi = Tensor::Scalar<float>(1.0f);
  EXPECT_TRUE(RunInPlace("Clip", {x.Clone(), lo, hi}).BitwiseEquals(RunOp("Clip", {x, lo, hi})->at(0)));
}

TEST_P(ElementwiseTest, Errors) {
  // Clip's bounds must hold one value.
  RunOpOptions cpu;
  cpu.device = kCpuDevice;
  cpu.fall_back_to_reference = false;
  const OpDef* def = *OpRegistry::Global().Lookup("Clip");
  const KernelFn* fn = KernelRegistry::Global().Find("Clip", kCpuDevice, DType::kF32);
  ASSERT_NE(fn, nullptr);
  Tensor x(DType::kF32, Shape{4});
  Tensor bad(DType::kF32, Shape{2});
  Tensor out(DType::kF32, Shape{4});
  KernelContext ctx(*def, "clip", {}, {&x, &bad, nullptr}, {&out});
  EXPECT_FALSE((*fn)(ctx).ok());
}

TSR_INSTANTIATE_FOR_ALL_ISAS(ElementwiseTest);

}  // namespace
}  // namespace tsr

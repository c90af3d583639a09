// Tests of the reference kernels of the ONNX math, logic and activation ops added with
// kernels/reference/math_kernels.cc (and their broadcasting and activation siblings
// in elementwise_kernels.cc and activation_kernels.cc), against hand-computed values:
// domain edges, NaN/inf propagation, Mod's sign rules, Round's ties to even, IsInf's
// flags, integer wrap-around.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/attribute.h"
#include "gtest/gtest.h"
#include "kernels/kernel.h"
#include "kernels/run_op.h"
#include "tests/kernels/kernel_test_util.h"

namespace tsr {
namespace {

using ::tsr::testing::AcceptedDTypes;
using ::tsr::testing::ExpectValues;
using ::tsr::testing::kInf;
using ::tsr::testing::kNaN;
using ::tsr::testing::Make;
using ::tsr::testing::RunOne;

constexpr DType kFloats[] = {DType::kF32, DType::kF64, DType::kF16, DType::kBF16};

Tensor Bools(Shape shape, const std::vector<double>& values) { return Make(DType::kBool, std::move(shape), values); }

TEST(MathKernelsTest, RegisteredForEveryAcceptedDType) {
  for (const char* op : {"Sin",         "Cos",      "Tan",
                         "Asin",        "Acos",     "Atan",
                         "Sinh",        "Cosh",     "Asinh",
                         "Acosh",       "Atanh",    "Floor",
                         "Ceil",        "Round",    "Sign",
                         "IsNaN",       "IsInf",    "Not",
                         "Mod",         "BitShift", "And",
                         "Or",          "Xor",      "GreaterOrEqual",
                         "LessOrEqual", "PRelu",    "Elu",
                         "Selu",        "Celu",     "HardSigmoid",
                         "HardSwish",   "Softsign", "ThresholdedRelu",
                         "Shrink"}) {
    SCOPED_TRACE(op);
    EXPECT_EQ(KernelRegistry::Global().DTypesFor(op, kReferenceDevice), AcceptedDTypes(op));
  }
}

// ---------------------------------------------------------------------------
// Trigonometric and hyperbolic functions.

TEST(MathKernelsTest, TrigonometricMatchesLibm) {
  const std::vector<double> x = {-0.9, -0.25, 0, 0.5, 0.75};
  const std::vector<std::pair<const char*, double (*)(double)>> cases = {
      {"Sin", std::sin},   {"Cos", std::cos},   {"Tan", std::tan},   {"Asin", std::asin},   {"Acos", std::acos},
      {"Atan", std::atan}, {"Sinh", std::sinh}, {"Cosh", std::cosh}, {"Asinh", std::asinh}, {"Atanh", std::atanh},
  };
  for (const auto& [op, fn] : cases) {
    for (DType dtype : kFloats) {
      SCOPED_TRACE(absl::StrCat(op, " ", DTypeName(dtype)));
      const Tensor in = Make(dtype, Shape{5}, x);
      std::vector<double> expected;
      for (int i = 0; i < 5; ++i) expected.push_back(fn(in.GetAsDouble(i)));  // of the rounded input
      const double tolerance = dtype == DType::kF64 ? 0 : (dtype == DType::kF32 ? 1e-7 : 1e-2);
      ExpectValues(RunOne(op, {in}), expected, tolerance);
    }
  }
  ExpectValues(RunOne("Acosh", {Make(DType::kF64, Shape{3}, {1, 2, 10})}), {0, std::acosh(2.0), std::acosh(10.0)},
               1e-15);  // the constant-folded std::acosh may differ in the last bit
}

TEST(MathKernelsTest, HandValues) {
  const Tensor x = Make(DType::kF64, Shape{2}, {0, 1});
  ExpectValues(RunOne("Sin", {Make(DType::kF64, Shape{2}, {0, M_PI / 2})}), {0, 1});
  ExpectValues(RunOne("Cos", {x}), {1, std::cos(1.0)});
  ExpectValues(RunOne("Asin", {x}), {0, M_PI / 2});
  ExpectValues(RunOne("Acos", {x}), {M_PI / 2, 0});
  ExpectValues(RunOne("Atan", {x}), {0, M_PI / 4});
  ExpectValues(RunOne("Cosh", {Make(DType::kF32, Shape{1}, {0})}), {1});
}

TEST(MathKernelsTest, DomainEdgesAndSpecialValues) {
  // Outside [-1, 1] the inverse functions are NaN; Atanh(+-1) is +-inf.
  ExpectValues(RunOne("Asin", {Make(DType::kF32, Shape{2}, {1.5, -2})}), {kNaN, kNaN});
  ExpectValues(RunOne("Acos", {Make(DType::kF64, Shape{1}, {1.0001})}), {kNaN});
  ExpectValues(RunOne("Acosh", {Make(DType::kF32, Shape{2}, {0.5, -1})}), {kNaN, kNaN});
  ExpectValues(RunOne("Atanh", {Make(DType::kF32, Shape{3}, {1, -1, 2})}), {kInf, -kInf, kNaN});
  // Infinities and NaN.
  ExpectValues(RunOne("Sin", {Make(DType::kF64, Shape{2}, {kInf, kNaN})}), {kNaN, kNaN});
  ExpectValues(RunOne("Atan", {Make(DType::kF64, Shape{2}, {kInf, -kInf})}), {M_PI / 2, -M_PI / 2});
  ExpectValues(RunOne("Sinh", {Make(DType::kF32, Shape{3}, {kInf, -kInf, 1000})}), {kInf, -kInf, kInf});
  ExpectValues(RunOne("Cosh", {Make(DType::kF16, Shape{2}, {-kInf, kNaN})}), {kInf, kNaN});
  ExpectValues(RunOne("Asinh", {Make(DType::kBF16, Shape{2}, {-kInf, kNaN})}), {-kInf, kNaN});
}

// ---------------------------------------------------------------------------
// Rounding and Sign.

TEST(MathKernelsTest, FloorCeilRound) {
  const std::vector<double> x = {-2.5, -1.5, -0.5, -0.4, 0.5, 1.5, 2.5, 2.6, 3.49, -7, kInf, kNaN};
  for (DType dtype : kFloats) {
    SCOPED_TRACE(DTypeName(dtype));
    const Tensor in = Make(dtype, Shape{12}, x);
    ExpectValues(RunOne("Floor", {in}), {-3, -2, -1, -1, 0, 1, 2, 2, 3, -7, kInf, kNaN});
    ExpectValues(RunOne("Ceil", {in}), {-2, -1, 0, 0, 1, 2, 3, 3, 4, -7, kInf, kNaN});
    // Halves go to the even neighbour (bf16 holds 2.6 as 2.59375 and 3.49 as 3.484375).
    ExpectValues(RunOne("Round", {in}), {-2, -2, 0, 0, 0, 2, 2, 3, 3, -7, kInf, kNaN});
  }
  // Above 2^52 every double is an integer; the halves test must not disturb it.
  ExpectValues(RunOne("Round", {Make(DType::kF64, Shape{2}, {4503599627370497.0, 0.49999999999999994})}),
               {4503599627370497.0, 0});
  // -0.4 rounds to -0 (equal to 0 but with the sign kept, as libm gives).
  EXPECT_TRUE(std::signbit(RunOne("Round", {Make(DType::kF64, Shape{1}, {-0.4})}).GetAsDouble(0)));
}

TEST(MathKernelsTest, SignEveryDType) {
  for (DType dtype : kNumericDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    if (dtype == DType::kU8) {
      ExpectValues(RunOne("Sign", {Make(dtype, Shape{3}, {0, 1, 255})}), {0, 1, 1});
    } else {
      ExpectValues(RunOne("Sign", {Make(dtype, Shape{4}, {-5, 0, 3, -1})}), {-1, 0, 1, -1});
    }
  }
  ExpectValues(RunOne("Sign", {Make(DType::kF32, Shape{4}, {kNaN, -kInf, kInf, 1e-30})}), {kNaN, -1, 1, 1});
  ExpectValues(RunOne("Sign", {Make(DType::kI64, Shape{2}, {static_cast<double>(INT64_MIN), 1e18})}), {-1, 1});
}

// ---------------------------------------------------------------------------
// Predicates and logic.

TEST(MathKernelsTest, IsNaNAndIsInfFlags) {
  const std::vector<double> x = {1, kNaN, kInf, -kInf, 0, -6e4};  // -6e4 is finite in f16
  for (DType dtype : kFloats) {
    SCOPED_TRACE(DTypeName(dtype));
    const Tensor in = Make(dtype, Shape{6}, x);
    Tensor nan = RunOne("IsNaN", {in});
    ASSERT_EQ(nan.dtype(), DType::kBool);
    ExpectValues(nan, {0, 1, 0, 0, 0, 0});
    ExpectValues(RunOne("IsInf", {in}), {0, 0, 1, 1, 0, 0});
    ExpectValues(RunOne("IsInf", {in}, {{"detect_negative", AttrValue::Int(0)}}), {0, 0, 1, 0, 0, 0});
    ExpectValues(RunOne("IsInf", {in}, {{"detect_positive", AttrValue::Int(0)}}), {0, 0, 0, 1, 0, 0});
    ExpectValues(
        RunOne("IsInf", {in}, {{"detect_negative", AttrValue::Int(0)}, {"detect_positive", AttrValue::Int(0)}}),
        {0, 0, 0, 0, 0, 0});
  }
}

TEST(MathKernelsTest, LogicBroadcasts) {
  const Tensor a = Bools(Shape{2, 2}, {0, 0, 1, 1});  // rows: a = 0, a = 1
  const Tensor b = Bools(Shape{2}, {0, 1});
  ExpectValues(RunOne("And", {a, b}), {0, 0, 0, 1});
  ExpectValues(RunOne("Or", {a, b}), {0, 1, 1, 1});
  ExpectValues(RunOne("Xor", {a, b}), {0, 1, 1, 0});
  ExpectValues(RunOne("Not", {a}), {1, 1, 0, 0});
  Tensor scalar = RunOne("Xor", {Bools(Shape{}, {1}), Bools(Shape{3, 1}, {1, 0, 1})});
  ASSERT_EQ(scalar.shape(), (Shape{3, 1}));
  ExpectValues(scalar, {0, 1, 0});
}

TEST(MathKernelsTest, GreaterOrEqualLessOrEqual) {
  for (DType dtype : kNumericDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    const Tensor a = Make(dtype, Shape{2, 3}, {1, 2, 3, 4, 5, 6});
    const Tensor b = Make(dtype, Shape{3}, {2, 2, 2});
    ExpectValues(RunOne("GreaterOrEqual", {a, b}), {0, 1, 1, 1, 1, 1});
    ExpectValues(RunOne("LessOrEqual", {a, b}), {1, 1, 0, 0, 0, 0});
  }
  // NaN compares false both ways.
  const Tensor n = Make(DType::kF32, Shape{2}, {kNaN, 1});
  const Tensor m = Make(DType::kF32, Shape{2}, {1, kNaN});
  ExpectValues(RunOne("GreaterOrEqual", {n, m}), {0, 0});
  ExpectValues(RunOne("LessOrEqual", {n, m}), {0, 0});
}

// ---------------------------------------------------------------------------
// Mod and BitShift.

TEST(MathKernelsTest, ModIntegerSignRules) {
  const std::vector<double> a = {7, -7, 7, -7, 6, 0};
  const std::vector<double> b = {3, 3, -3, -3, 3, -5};
  for (DType dtype : {DType::kI8, DType::kI32, DType::kI64}) {
    SCOPED_TRACE(DTypeName(dtype));
    const Tensor ta = Make(dtype, Shape{6}, a), tb = Make(dtype, Shape{6}, b);
    // fmod = 0: the divisor's sign (Python's %).
    ExpectValues(RunOne("Mod", {ta, tb}), {1, 2, -2, -1, 0, 0});
    // fmod = 1: the dividend's sign (C's %).
    ExpectValues(RunOne("Mod", {ta, tb}, {{"fmod", AttrValue::Int(1)}}), {1, -1, 1, -1, 0, 0});
  }
  ExpectValues(RunOne("Mod", {Make(DType::kU8, Shape{3}, {250, 7, 3}), Make(DType::kU8, Shape{1}, {7})}), {5, 0, 3});
  // The minimum over -1 would overflow in C++; the remainder is 0.
  const double min32 = std::numeric_limits<int32_t>::min();
  ExpectValues(RunOne("Mod", {Make(DType::kI32, Shape{2}, {min32, min32}), Make(DType::kI32, Shape{2}, {-1, 3})}),
               {0, 1});
  ExpectValues(RunOne("Mod", {Make(DType::kI8, Shape{1}, {-128}), Make(DType::kI8, Shape{1}, {-1})},
                      {{"fmod", AttrValue::Int(1)}}),
               {0});
}

TEST(MathKernelsTest, ModFloatIsFmod) {
  for (DType dtype : kFloats) {
    SCOPED_TRACE(DTypeName(dtype));
    const Tensor a = Make(dtype, Shape{5}, {5.5, -5.5, 5.5, -5.5, 1});
    const Tensor b = Make(dtype, Shape{5}, {2, 2, -2, -2, 0});
    ExpectValues(RunOne("Mod", {a, b}, {{"fmod", AttrValue::Int(1)}}), {1.5, -1.5, 1.5, -1.5, kNaN});
  }
  ExpectValues(RunOne("Mod", {Make(DType::kF64, Shape{3}, {kInf, kNaN, 3}), Make(DType::kF64, Shape{3}, {2, 2, kInf})},
                      {{"fmod", AttrValue::Int(1)}}),
               {kNaN, kNaN, 3});
}

TEST(MathKernelsTest, ModBroadcastsAndRejectsIntegerZero) {
  Tensor out = RunOne("Mod", {Make(DType::kI64, Shape{2, 1}, {10, -10}), Make(DType::kI64, Shape{3}, {3, 4, -6})});
  ASSERT_EQ(out.shape(), (Shape{2, 3}));
  ExpectValues(out, {1, 2, -2, 2, 2, -4});
  absl::StatusOr<std::vector<Tensor>> zero =
      RunOp("Mod", {Make(DType::kI32, Shape{2}, {1, 2}), Make(DType::kI32, Shape{2}, {1, 0})});
  ASSERT_FALSE(zero.ok());
  EXPECT_NE(zero.status().message().find("integer Mod by zero (output element 1)"), std::string::npos) << zero.status();
}

TEST(MathKernelsTest, BitShift) {
  const Tensor x = Make(DType::kU8, Shape{5}, {16, 4, 1, 255, 200});
  const Tensor y = Make(DType::kU8, Shape{5}, {1, 2, 7, 8, 9});
  ExpectValues(RunOne("BitShift", {x, y}, {{"direction", AttrValue::String("RIGHT")}}), {8, 1, 0, 0, 0});
  // Bits shifted past the top are lost.
  ExpectValues(RunOne("BitShift", {x, y}, {{"direction", AttrValue::String("LEFT")}}), {32, 16, 128, 0, 0});
  ExpectValues(RunOne("BitShift", {Make(DType::kU8, Shape{2, 1}, {3, 5}), Make(DType::kU8, Shape{2}, {0, 1})},
                      {{"direction", AttrValue::String("LEFT")}}),
               {3, 6, 5, 10});
}

// ---------------------------------------------------------------------------
// Activations.

TEST(MathKernelsTest, ExponentialLinearUnits) {
  const std::vector<double> x = {-2, -0.5, 0, 1.5, kNaN};
  for (DType dtype : {DType::kF32, DType::kF64}) {
    SCOPED_TRACE(DTypeName(dtype));
    const Tensor in = Make(dtype, Shape{5}, x);
    const double tol = dtype == DType::kF32 ? 1e-7 : 1e-15;
    ExpectValues(RunOne("Elu", {in}, {{"alpha", AttrValue::Float(2)}}),
                 {2 * std::expm1(-2), 2 * std::expm1(-0.5), 0, 1.5, kNaN}, tol);
    const double a = 1.67326319217681884765625, g = 1.05070102214813232421875;
    ExpectValues(RunOne("Selu", {in}), {g * a * std::expm1(-2), g * a * std::expm1(-0.5), 0, g * 1.5, kNaN}, tol);
    ExpectValues(RunOne("Celu", {in}, {{"alpha", AttrValue::Float(0.5)}}),
                 {0.5 * std::expm1(-4), 0.5 * std::expm1(-1), 0, 1.5, kNaN}, tol);
  }
  // Large negative inputs saturate at -alpha without NaN.
  ExpectValues(RunOne("Elu", {Make(DType::kF64, Shape{1}, {-1e300})}), {-1});
}

TEST(MathKernelsTest, HardSigmoidHardSwishSoftsign) {
  const Tensor x = Make(DType::kF64, Shape{7}, {-4, -3, -1, 0, 1, 3, 4});
  ExpectValues(RunOne("HardSigmoid", {x}), {0, 0, 0.3, 0.5, 0.7, 1, 1}, 1e-15);
  ExpectValues(RunOne("HardSigmoid", {x}, {{"alpha", AttrValue::Float(0.5)}, {"beta", AttrValue::Float(0)}}),
               {0, 0, 0, 0, 0.5, 1, 1});
  ExpectValues(RunOne("HardSwish", {x}), {0, 0, -1.0 / 3, 0, 2.0 / 3, 3, 4}, 1e-15);
  ExpectValues(RunOne("Softsign", {x}), {-0.8, -0.75, -0.5, 0, 0.5, 0.75, 0.8}, 1e-15);
  // The limits at +-inf (not inf / inf).
  ExpectValues(RunOne("Softsign", {Make(DType::kF32, Shape{3}, {kInf, -kInf, kNaN})}), {1, -1, kNaN});
}

TEST(MathKernelsTest, ThresholdedReluAndShrink) {
  const Tensor x = Make(DType::kF32, Shape{6}, {-2, -0.5, 0.5, 1, 1.5, 3});
  ExpectValues(RunOne("ThresholdedRelu", {x}), {0, 0, 0, 0, 1.5, 3});
  ExpectValues(RunOne("ThresholdedRelu", {x}, {{"alpha", AttrValue::Float(-1)}}), {0, -0.5, 0.5, 1, 1.5, 3});
  // Default lambd 0.5, bias 0: the boundary itself shrinks to 0.
  ExpectValues(RunOne("Shrink", {x}), {-2, 0, 0, 1, 1.5, 3});
  ExpectValues(RunOne("Shrink", {x}, {{"lambd", AttrValue::Float(1)}, {"bias", AttrValue::Float(1)}}),
               {-1, 0, 0, 0, 0.5, 2});
  // Integers: computed like the float formula, then converted like Cast.
  ExpectValues(RunOne("Shrink", {Make(DType::kI8, Shape{5}, {-128, -2, 1, 2, 127})},
                      {{"lambd", AttrValue::Float(1.5)}, {"bias", AttrValue::Float(1.5)}}),
               {-126, 0, 0, 0, 125});
}

TEST(MathKernelsTest, PReluBroadcastsSlope) {
  // Channel slopes [3,1,1] over x [1,3,1,2].
  const Tensor x = Make(DType::kF32, Shape{1, 3, 1, 2}, {-1, 2, -3, 4, -5, 0});
  const Tensor slope = Make(DType::kF32, Shape{3, 1, 1}, {0.1, 0.2, 0.3});
  Tensor y = RunOne("PRelu", {x, slope});
  ASSERT_EQ(y.shape(), x.shape());
  ExpectValues(y, {-0.1, 2, -0.6, 4, -1.5, 0}, 1e-7);
  ExpectValues(RunOne("PRelu", {Make(DType::kF64, Shape{3}, {-2, kNaN, 3}), Make(DType::kF64, Shape{}, {0.5})}),
               {-1, kNaN, 3});
  // Integers wrap around instead of overflowing.
  ExpectValues(RunOne("PRelu", {Make(DType::kI32, Shape{3}, {-3, 5, -2147483648.0}), Make(DType::kI32, Shape{1}, {2})}),
               {-6, 5, 0});
  ExpectValues(RunOne("PRelu", {Make(DType::kI64, Shape{2}, {-3, 4}), Make(DType::kI64, Shape{2}, {-2, 9})}), {6, 4});
}

}  // namespace
}  // namespace tsr

// Shape/dtype inference, attribute checks and FLOP estimates of the ONNX math, logic
// and activation ops added with graph/ops/math_ops.cc: the unary math ops there, the
// broadcasting ones in elementwise_ops.cc (Mod, BitShift, And/Or/Xor,
// GreaterOrEqual/LessOrEqual) and the activations in activation_ops.cc (PRelu, Elu,
// Selu, Celu, HardSigmoid, HardSwish, Softsign, ThresholdedRelu, Shrink).
#include <cstdint>
#include <string>
#include <utility>

#include "graph/op_def.h"
#include "gtest/gtest.h"
#include "tests/graph/ops/op_test_util.h"

namespace tsr {
namespace {

using ::tsr::testing::F32;
using ::tsr::testing::FailsWith;
using ::tsr::testing::Flops;
using ::tsr::testing::Infer1;
using ::tsr::testing::Str;
using ::tsr::testing::T;

constexpr int64_t N = kBatchDim;

TensorType Bool(Shape s) { return T(DType::kBool, std::move(s)); }

// ---------------------------------------------------------------------------
// Unary float functions: same type and shape out, floats only.

class UnaryFloatTest : public ::testing::TestWithParam<const char*> {};

TEST_P(UnaryFloatTest, KeepsTypeAndShape) {
  EXPECT_EQ(Str(Infer1(GetParam(), {F32({N, 3})})), "f32[N,3]");
  EXPECT_EQ(Str(Infer1(GetParam(), {T(DType::kF64, {})})), "f64[]");
  EXPECT_EQ(Str(Infer1(GetParam(), {T(DType::kF16, {2})})), "f16[2]");
  EXPECT_EQ(Str(Infer1(GetParam(), {T(DType::kBF16, {0, 4})})), "bf16[0,4]");
}

TEST_P(UnaryFloatTest, RejectsIntegersAndBool) {
  EXPECT_TRUE(FailsWith(Infer1(GetParam(), {T(DType::kI32, {2})}), GetParam(), "has dtype i32"));
  EXPECT_TRUE(FailsWith(Infer1(GetParam(), {Bool({2})}), GetParam(), "has dtype bool"));
}

TEST_P(UnaryFloatTest, OneFlopPerElementOrMore) { EXPECT_GE(Flops(GetParam(), {F32({4, 5})}), 20); }

INSTANTIATE_TEST_SUITE_P(Math, UnaryFloatTest,
                         ::testing::Values("Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh",
                                           "Acosh", "Atanh", "Floor", "Ceil", "Round", "Elu", "Selu", "Celu",
                                           "HardSigmoid", "HardSwish", "Softsign", "ThresholdedRelu"));

TEST(MathOpsTest, TrigonometricFlops) {
  EXPECT_EQ(Flops("Sin", {F32({4, 5})}), 20);
  EXPECT_EQ(Flops("Atanh", {T(DType::kF64, {7})}), 7);
  EXPECT_EQ(Flops("Elu", {F32({10})}), 40);
  EXPECT_EQ(Flops("HardSwish", {F32({10})}), 50);
}

TEST(MathOpsTest, SignTakesEveryNumericType) {
  EXPECT_EQ(Str(Infer1("Sign", {T(DType::kI8, {3})})), "i8[3]");
  EXPECT_EQ(Str(Infer1("Sign", {T(DType::kU8, {3})})), "u8[3]");
  EXPECT_EQ(Str(Infer1("Sign", {T(DType::kI64, {N})})), "i64[N]");
  EXPECT_TRUE(FailsWith(Infer1("Sign", {Bool({3})}), "Sign", "has dtype bool"));
}

TEST(MathOpsTest, ShrinkTakesIntegersAndChecksLambd) {
  EXPECT_EQ(Str(Infer1("Shrink", {T(DType::kI8, {3})})), "i8[3]");
  EXPECT_EQ(Str(Infer1("Shrink", {F32({N, 2})}, {{"lambd", AttrValue::Float(1.5)}})), "f32[N,2]");
  EXPECT_TRUE(FailsWith(Infer1("Shrink", {F32({2})}, {{"lambd", AttrValue::Float(-1)}}), "Shrink", "'lambd'"));
}

TEST(MathOpsTest, CeluRejectsZeroAlpha) {
  EXPECT_TRUE(FailsWith(Infer1("Celu", {F32({2})}, {{"alpha", AttrValue::Float(0)}}), "Celu", "'alpha' is 0"));
}

TEST(MathOpsTest, ActivationAttributeDefaultsAreOnnx) {
  const OpDef* selu = OpRegistry::Global().Find("Selu");
  ASSERT_NE(selu, nullptr);
  EXPECT_DOUBLE_EQ(selu->FindAttr("alpha")->default_value->f(), 1.67326319217681884765625);
  EXPECT_DOUBLE_EQ(selu->FindAttr("gamma")->default_value->f(), 1.05070102214813232421875);
  const OpDef* hard_sigmoid = OpRegistry::Global().Find("HardSigmoid");
  ASSERT_NE(hard_sigmoid, nullptr);
  EXPECT_DOUBLE_EQ(hard_sigmoid->FindAttr("alpha")->default_value->f(), 0.2);
  EXPECT_DOUBLE_EQ(hard_sigmoid->FindAttr("beta")->default_value->f(), 0.5);
  EXPECT_DOUBLE_EQ(OpRegistry::Global().Find("Elu")->FindAttr("alpha")->default_value->f(), 1.0);
  EXPECT_DOUBLE_EQ(OpRegistry::Global().Find("ThresholdedRelu")->FindAttr("alpha")->default_value->f(), 1.0);
  EXPECT_DOUBLE_EQ(OpRegistry::Global().Find("Shrink")->FindAttr("lambd")->default_value->f(), 0.5);
}

// ---------------------------------------------------------------------------
// Predicates and logic.

TEST(MathOpsTest, IsNaNAndIsInfGiveBool) {
  EXPECT_EQ(Str(Infer1("IsNaN", {F32({N, 3})})), "bool[N,3]");
  EXPECT_EQ(Str(Infer1("IsInf", {T(DType::kF64, {2})})), "bool[2]");
  EXPECT_EQ(Str(Infer1("IsInf", {T(DType::kF16, {2})}, {{"detect_negative", AttrValue::Int(0)}})), "bool[2]");
  EXPECT_TRUE(FailsWith(Infer1("IsNaN", {T(DType::kI32, {2})}), "IsNaN", "has dtype i32"));
  EXPECT_TRUE(
      FailsWith(Infer1("IsInf", {F32({2})}, {{"detect_positive", AttrValue::Int(2)}}), "IsInf", "'detect_positive'"));
}

TEST(MathOpsTest, NotIsBoolOnly) {
  EXPECT_EQ(Str(Infer1("Not", {Bool({N, 2})})), "bool[N,2]");
  EXPECT_TRUE(FailsWith(Infer1("Not", {F32({2})}), "Not", "has dtype f32"));
}

class LogicTest : public ::testing::TestWithParam<const char*> {};

TEST_P(LogicTest, BoolBroadcast) {
  EXPECT_EQ(Str(Infer1(GetParam(), {Bool({3, 1, 5}), Bool({4, 1})})), "bool[3,4,5]");
  EXPECT_EQ(Str(Infer1(GetParam(), {Bool({N, 2}), Bool({})})), "bool[N,2]");
  EXPECT_TRUE(FailsWith(Infer1(GetParam(), {F32({2}), F32({2})}), GetParam(), "has dtype f32"));
  EXPECT_TRUE(FailsWith(Infer1(GetParam(), {Bool({2}), Bool({3})}), GetParam(), "cannot be broadcast"));
}

INSTANTIATE_TEST_SUITE_P(Logic, LogicTest, ::testing::Values("And", "Or", "Xor"));

TEST(MathOpsTest, OrderedComparisonsGiveBool) {
  for (const char* op : {"GreaterOrEqual", "LessOrEqual"}) {
    SCOPED_TRACE(op);
    EXPECT_EQ(Str(Infer1(op, {F32({N, 1}), F32({1, 5})})), "bool[N,5]");
    EXPECT_EQ(Str(Infer1(op, {T(DType::kI64, {2}), T(DType::kI64, {})})), "bool[2]");
    EXPECT_TRUE(FailsWith(Infer1(op, {Bool({2}), Bool({2})}), op, "has dtype bool"));
    EXPECT_TRUE(FailsWith(Infer1(op, {F32({2}), T(DType::kF64, {2})}), op, "has dtype f64"));
    EXPECT_EQ(Flops(op, {F32({3, 4}), F32({4})}), 12);
  }
}

// ---------------------------------------------------------------------------
// Mod and BitShift.

TEST(MathOpsTest, ModBroadcastsAndRequiresFmodForFloats) {
  EXPECT_EQ(Str(Infer1("Mod", {T(DType::kI32, {3, 1}), T(DType::kI32, {4})})), "i32[3,4]");
  EXPECT_EQ(Str(Infer1("Mod", {T(DType::kU8, {2}), T(DType::kU8, {2})}, {{"fmod", AttrValue::Int(1)}})), "u8[2]");
  EXPECT_EQ(Str(Infer1("Mod", {F32({N, 2}), F32({2})}, {{"fmod", AttrValue::Int(1)}})), "f32[N,2]");
  EXPECT_TRUE(FailsWith(Infer1("Mod", {F32({2}), F32({2})}), "Mod", "requires attribute 'fmod' = 1"));
  EXPECT_TRUE(FailsWith(Infer1("Mod", {T(DType::kF16, {2}), T(DType::kF16, {2})}, {{"fmod", AttrValue::Int(0)}}), "Mod",
                        "f16"));
  EXPECT_TRUE(FailsWith(Infer1("Mod", {T(DType::kI32, {2}), T(DType::kI32, {2})}, {{"fmod", AttrValue::Int(3)}}), "Mod",
                        "'fmod' is 3"));
  EXPECT_TRUE(FailsWith(Infer1("Mod", {Bool({2}), Bool({2})}), "Mod", "has dtype bool"));
}

TEST(MathOpsTest, BitShiftIsU8WithADirection) {
  const AttrMap left = {{"direction", AttrValue::String("LEFT")}};
  EXPECT_EQ(Str(Infer1("BitShift", {T(DType::kU8, {3, 1}), T(DType::kU8, {2})}, left)), "u8[3,2]");
  EXPECT_EQ(
      Str(Infer1("BitShift", {T(DType::kU8, {3}), T(DType::kU8, {})}, {{"direction", AttrValue::String("RIGHT")}})),
      "u8[3]");
  EXPECT_TRUE(FailsWith(
      Infer1("BitShift", {T(DType::kU8, {3}), T(DType::kU8, {3})}, {{"direction", AttrValue::String("left")}}),
      "BitShift", "'direction' is \"left\""));
  EXPECT_TRUE(FailsWith(Infer1("BitShift", {T(DType::kU8, {3}), T(DType::kU8, {3})}), "BitShift", "direction"));
  EXPECT_TRUE(
      FailsWith(Infer1("BitShift", {T(DType::kI32, {3}), T(DType::kI32, {3})}, left), "BitShift", "has dtype i32"));
}

// ---------------------------------------------------------------------------
// PRelu: the slope broadcasts to X, never the other way.

TEST(MathOpsTest, PReluSlopeBroadcastsToX) {
  EXPECT_EQ(Str(Infer1("PRelu", {F32({N, 3, 4, 4}), F32({3, 1, 1})})), "f32[N,3,4,4]");
  EXPECT_EQ(Str(Infer1("PRelu", {F32({2, 3}), F32({})})), "f32[2,3]");
  EXPECT_EQ(Str(Infer1("PRelu", {T(DType::kI64, {2, 3}), T(DType::kI64, {3})})), "i64[2,3]");
  EXPECT_TRUE(FailsWith(Infer1("PRelu", {F32({3}), F32({2, 3})}), "PRelu", "does not broadcast to X's shape [3]"));
  EXPECT_TRUE(FailsWith(Infer1("PRelu", {F32({2, 3}), F32({4})}), "PRelu", "cannot be broadcast"));
  EXPECT_TRUE(FailsWith(Infer1("PRelu", {T(DType::kU8, {2}), T(DType::kU8, {2})}), "PRelu", "has dtype u8"));
  EXPECT_EQ(Flops("PRelu", {F32({2, 3}), F32({3})}), 12);
}

}  // namespace
}  // namespace tsr

// Shape/dtype inference and FLOP estimates of the elementwise ops (graph/ops/elementwise_ops.cc).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/op_def.h"
#include "gtest/gtest.h"
#include "tests/graph/ops/op_test_util.h"

namespace tsr {
namespace {

using ::tsr::testing::F32;
using ::tsr::testing::FailsWith;
using ::tsr::testing::Flops;
using ::tsr::testing::I64;
using ::tsr::testing::Infer1;
using ::tsr::testing::Str;
using ::tsr::testing::T;

constexpr int64_t N = kBatchDim;

// ---------------------------------------------------------------------------
// Add, Sub, Mul, Div share one definition shape.

class BinaryArithmeticTest : public ::testing::TestWithParam<const char*> {};

TEST_P(BinaryArithmeticTest, SameShapes) { EXPECT_EQ(Str(Infer1(GetParam(), {F32({2, 3}), F32({2, 3})})), "f32[2,3]"); }

TEST_P(BinaryArithmeticTest, ScalarWithTensorEitherSide) {
  EXPECT_EQ(Str(Infer1(GetParam(), {F32({}), F32({2, 3})})), "f32[2,3]");
  EXPECT_EQ(Str(Infer1(GetParam(), {F32({N, 3}), F32({})})), "f32[N,3]");
  EXPECT_EQ(Str(Infer1(GetParam(), {F32({}), F32({})})), "f32[]");
}

TEST_P(BinaryArithmeticTest, BroadcastsBothWays) {
  EXPECT_EQ(Str(Infer1(GetParam(), {F32({N, 1}), F32({1, 5})})), "f32[N,5]");
  EXPECT_EQ(Str(Infer1(GetParam(), {F32({3, 1, 5}), F32({4, 1})})), "f32[3,4,5]");
  EXPECT_EQ(Str(Infer1(GetParam(), {F32({4, 1}), F32({3, 1, 5})})), "f32[3,4,5]");
}

TEST_P(BinaryArithmeticTest, PropagatesBatchDim) {
  EXPECT_EQ(Str(Infer1(GetParam(), {F32({N, 784}), F32({784})})), "f32[N,784]");
  EXPECT_EQ(Str(Infer1(GetParam(), {F32({N, 3}), F32({N, 3})})), "f32[N,3]");
  // Against a static size the batch must be bound to that size; the result is static.
  EXPECT_EQ(Str(Infer1(GetParam(), {F32({N, 3}), F32({5, 3})})), "f32[5,3]");
}

TEST_P(BinaryArithmeticTest, IncompatibleShapesNameTheNode) {
  EXPECT_TRUE(
      FailsWith(Infer1(GetParam(), {F32({2, 3}), F32({4, 3})}), GetParam(), "[2,3] and [4,3] cannot be broadcast"));
  EXPECT_TRUE(FailsWith(Infer1(GetParam(), {F32({3, 1, 5}), F32({4, 2})}), GetParam(), "cannot be broadcast"));
}

TEST_P(BinaryArithmeticTest, IntegerTypesAllowed) {
  EXPECT_EQ(Str(Infer1(GetParam(), {T(DType::kI32, {N, 2}), T(DType::kI32, {2})})), "i32[N,2]");
  EXPECT_EQ(Str(Infer1(GetParam(), {T(DType::kU8, {4}), T(DType::kU8, {4})})), "u8[4]");
  EXPECT_EQ(Str(Infer1(GetParam(), {T(DType::kBF16, {4}), T(DType::kBF16, {})})), "bf16[4]");
}

TEST_P(BinaryArithmeticTest, MismatchedDTypes) {
  EXPECT_TRUE(FailsWith(Infer1(GetParam(), {F32({2}), I64({2})}), GetParam(),
                        "input 1 ('B') has dtype i64 but input 0 has f32"));
  EXPECT_TRUE(FailsWith(Infer1(GetParam(), {T(DType::kF16, {2}), F32({2})}), GetParam(), "they must match"));
}

TEST_P(BinaryArithmeticTest, BoolRejected) {
  EXPECT_TRUE(FailsWith(Infer1(GetParam(), {T(DType::kBool, {2}), T(DType::kBool, {2})}), GetParam(),
                        "input 0 ('A') has dtype bool"));
}

TEST_P(BinaryArithmeticTest, WrongInputCount) {
  EXPECT_TRUE(FailsWith(Infer1(GetParam(), {F32({2})}), GetParam(), "has 1 inputs but 2 expected"));
  EXPECT_TRUE(FailsWith(Infer1(GetParam(), {F32({2}), F32({2}), F32({2})}), GetParam(), "has 3 inputs but 2 expected"));
  EXPECT_TRUE(FailsWith(Infer1(GetParam(), {F32({2}), std::nullopt}), GetParam(), "input 1 ('B') is required"));
}

TEST_P(BinaryArithmeticTest, TakesNoAttributes) {
  EXPECT_TRUE(FailsWith(Infer1(GetParam(), {F32({2}), F32({2})}, {{"broadcast", AttrValue::Int(1)}}), GetParam(),
                        "unknown attribute 'broadcast' (the op takes none)"));
}

TEST_P(BinaryArithmeticTest, OneFlopPerOutputElement) {
  EXPECT_EQ(Flops(GetParam(), {F32({N, 1}), F32({1, 5})}), 5);
  EXPECT_EQ(Flops(GetParam(), {F32({3, 1, 5}), F32({4, 1})}), 60);
}

INSTANTIATE_TEST_SUITE_P(Ops, BinaryArithmeticTest, ::testing::Values("Add", "Sub", "Mul", "Div"));

// ---------------------------------------------------------------------------

TEST(PowTest, ExponentTypeMayDifferAndOutputHasBaseType) {
  EXPECT_EQ(Str(Infer1("Pow", {F32({N, 3}), I64({})})), "f32[N,3]");
  EXPECT_EQ(Str(Infer1("Pow", {I64({2, 1}), F32({1, 4})})), "i64[2,4]");
  EXPECT_EQ(Str(Infer1("Pow", {T(DType::kF16, {3, 1, 5}), T(DType::kU8, {4, 1})})), "f16[3,4,5]");
  EXPECT_EQ(Str(Infer1("Pow", {F32({N, 1}), F32({1, 5})})), "f32[N,5]");
}

TEST(PowTest, DisallowedTypes) {
  // ONNX Pow's base excludes 8-bit integers and bool; the exponent excludes bool.
  EXPECT_TRUE(FailsWith(Infer1("Pow", {T(DType::kI8, {2}), F32({2})}), "Pow", "input 0 ('X') has dtype i8"));
  EXPECT_TRUE(FailsWith(Infer1("Pow", {T(DType::kBool, {2}), F32({2})}), "Pow", "input 0 ('X') has dtype bool"));
  EXPECT_TRUE(FailsWith(Infer1("Pow", {F32({2}), T(DType::kBool, {2})}), "Pow", "input 1 ('Y') has dtype bool"));
}

TEST(PowTest, IncompatibleShapesAndCounts) {
  EXPECT_TRUE(FailsWith(Infer1("Pow", {F32({3}), F32({4})}), "Pow", "cannot be broadcast"));
  EXPECT_TRUE(FailsWith(Infer1("Pow", {F32({3})}), "Pow", "has 1 inputs but 2 expected"));
}

// ---------------------------------------------------------------------------
// Unary math ops.

struct UnaryCase {
  const char* op;
  DType allowed;     // a non-f32 type the op accepts
  DType disallowed;  // a type it rejects
  int64_t flops_per_element;
};

class UnaryMathTest : public ::testing::TestWithParam<UnaryCase> {};

TEST_P(UnaryMathTest, KeepsShapeAndType) {
  const char* op = GetParam().op;
  EXPECT_EQ(Str(Infer1(op, {F32({N, 3, 4})})), "f32[N,3,4]");
  EXPECT_EQ(Str(Infer1(op, {F32({})})), "f32[]");
  EXPECT_EQ(Str(Infer1(op, {F32({0, 2})})), "f32[0,2]");
  EXPECT_EQ(Str(Infer1(op, {T(GetParam().allowed, {N, 7})})), absl::StrCat(DTypeName(GetParam().allowed), "[N,7]"));
}

TEST_P(UnaryMathTest, RejectsDisallowedTypes) {
  const char* op = GetParam().op;
  EXPECT_TRUE(FailsWith(Infer1(op, {T(GetParam().disallowed, {2})}), op,
                        absl::StrCat("input 0 ('X') has dtype ", DTypeName(GetParam().disallowed))));
  EXPECT_TRUE(FailsWith(Infer1(op, {T(DType::kBool, {2})}), op, "has dtype bool"));
}

TEST_P(UnaryMathTest, WrongInputCountAndAttributes) {
  const char* op = GetParam().op;
  EXPECT_TRUE(FailsWith(Infer1(op, {}), op, "has 0 inputs but 1 expected"));
  EXPECT_TRUE(FailsWith(Infer1(op, {F32({2}), F32({2})}), op, "has 2 inputs but 1 expected"));
  EXPECT_TRUE(FailsWith(Infer1(op, {F32({2})}, {{"alpha", AttrValue::Float(1.0)}}), op, "unknown attribute 'alpha'"));
}

TEST_P(UnaryMathTest, Flops) { EXPECT_EQ(Flops(GetParam().op, {F32({N, 10})}), 10 * GetParam().flops_per_element); }

INSTANTIATE_TEST_SUITE_P(
    Ops, UnaryMathTest,
    ::testing::Values(UnaryCase{"Neg", DType::kI32, DType::kU8, 1}, UnaryCase{"Abs", DType::kU8, DType::kBool, 1},
                      UnaryCase{"Exp", DType::kBF16, DType::kI64, 1}, UnaryCase{"Log", DType::kF16, DType::kI32, 1},
                      UnaryCase{"Sqrt", DType::kF64, DType::kI64, 1}, UnaryCase{"Rsqrt", DType::kF16, DType::kI64, 2},
                      UnaryCase{"Reciprocal", DType::kF64, DType::kI8, 1}),
    [](const ::testing::TestParamInfo<UnaryCase>& info) { return std::string(info.param.op); });

// ---------------------------------------------------------------------------
// Max, Min: variadic.

class VariadicExtremumTest : public ::testing::TestWithParam<const char*> {};

TEST_P(VariadicExtremumTest, SingleInputIsItsOwnShape) {
  EXPECT_EQ(Str(Infer1(GetParam(), {F32({N, 3})})), "f32[N,3]");
}

TEST_P(VariadicExtremumTest, BroadcastsAllInputs) {
  EXPECT_EQ(Str(Infer1(GetParam(), {F32({N, 1}), F32({1, 5}), F32({})})), "f32[N,5]");
  EXPECT_EQ(Str(Infer1(GetParam(), {F32({3, 1, 5}), F32({4, 1})})), "f32[3,4,5]");
  EXPECT_EQ(Str(Infer1(GetParam(), {I64({2}), I64({2}), I64({1}), I64({2})})), "i64[2]");
}

TEST_P(VariadicExtremumTest, Errors) {
  EXPECT_TRUE(FailsWith(Infer1(GetParam(), {}), GetParam(), "has 0 inputs but at least 1 expected"));
  EXPECT_TRUE(FailsWith(Infer1(GetParam(), {F32({2}), F32({2}), I64({2})}), GetParam(),
                        "input 2 ('data_0') has dtype i64 but input 0 has f32"));
  EXPECT_TRUE(FailsWith(Infer1(GetParam(), {F32({2}), F32({1}), F32({3})}), GetParam(), "cannot be broadcast"));
  EXPECT_TRUE(FailsWith(Infer1(GetParam(), {T(DType::kBool, {2})}), GetParam(), "has dtype bool"));
}

TEST_P(VariadicExtremumTest, OneComparisonPerExtraInput) {
  EXPECT_EQ(Flops(GetParam(), {F32({2, 5}), F32({2, 5}), F32({5})}), 20);
  EXPECT_EQ(Flops(GetParam(), {F32({2, 5})}), 0);
}

INSTANTIATE_TEST_SUITE_P(Ops, VariadicExtremumTest, ::testing::Values("Max", "Min"));

// ---------------------------------------------------------------------------
// Comparisons.

class ComparisonTest : public ::testing::TestWithParam<const char*> {};

TEST_P(ComparisonTest, OutputIsBoolAndBroadcast) {
  EXPECT_EQ(Str(Infer1(GetParam(), {F32({3, 1, 5}), F32({4, 1})})), "bool[3,4,5]");
  EXPECT_EQ(Str(Infer1(GetParam(), {I64({N, 1}), I64({1, 5})})), "bool[N,5]");
  EXPECT_EQ(Str(Infer1(GetParam(), {F32({}), F32({N})})), "bool[N]");
}

TEST_P(ComparisonTest, Errors) {
  EXPECT_TRUE(FailsWith(Infer1(GetParam(), {F32({2}), I64({2})}), GetParam(), "they must match"));
  EXPECT_TRUE(FailsWith(Infer1(GetParam(), {F32({2}), F32({3})}), GetParam(), "cannot be broadcast"));
  EXPECT_TRUE(FailsWith(Infer1(GetParam(), {F32({2})}), GetParam(), "has 1 inputs but 2 expected"));
}

INSTANTIATE_TEST_SUITE_P(Ops, ComparisonTest, ::testing::Values("Equal", "Less", "Greater"));

TEST(ComparisonTest, EqualTakesBoolButOrderingsDoNot) {
  EXPECT_EQ(Str(Infer1("Equal", {T(DType::kBool, {2}), T(DType::kBool, {2})})), "bool[2]");
  EXPECT_TRUE(FailsWith(Infer1("Less", {T(DType::kBool, {2}), T(DType::kBool, {2})}), "Less", "has dtype bool"));
  EXPECT_TRUE(FailsWith(Infer1("Greater", {T(DType::kBool, {2}), T(DType::kBool, {2})}), "Greater", "has dtype bool"));
}

// ---------------------------------------------------------------------------

TEST(WhereTest, BroadcastsAllThreeAndTakesXsType) {
  const TensorType cond = T(DType::kBool, {N, 1});
  EXPECT_EQ(Str(Infer1("Where", {cond, F32({1, 5}), F32({})})), "f32[N,5]");
  EXPECT_EQ(Str(Infer1("Where", {T(DType::kBool, {3, 1, 1}), I64({1, 4, 1}), I64({5})})), "i64[3,4,5]");
  EXPECT_EQ(Str(Infer1("Where", {T(DType::kBool, {}), T(DType::kBool, {2}), T(DType::kBool, {2})})), "bool[2]");
  EXPECT_EQ(Str(Infer1("Where", {T(DType::kBool, {3, 1, 5}), F32({4, 1}), F32({1})})), "f32[3,4,5]");
}

TEST(WhereTest, Errors) {
  EXPECT_TRUE(FailsWith(Infer1("Where", {F32({2}), F32({2}), F32({2})}), "Where",
                        "input 0 ('condition') has dtype f32 but one of {bool} is required"));
  EXPECT_TRUE(FailsWith(Infer1("Where", {T(DType::kBool, {2}), F32({2}), I64({2})}), "Where",
                        "input 2 ('Y') has dtype i64 but input 1 has f32"));
  EXPECT_TRUE(FailsWith(Infer1("Where", {T(DType::kBool, {3}), F32({2}), F32({2})}), "Where", "cannot be broadcast"));
  EXPECT_TRUE(FailsWith(Infer1("Where", {T(DType::kBool, {2}), F32({2})}), "Where", "has 2 inputs but 3 expected"));
}

TEST(WhereTest, CountsNoFlops) { EXPECT_EQ(Flops("Where", {T(DType::kBool, {4}), F32({4}), F32({4})}), 0); }

// ---------------------------------------------------------------------------

TEST(CastTest, ConvertsAnyTypeToAny) {
  EXPECT_EQ(Str(Infer1("Cast", {F32({N, 3})}, {{"to", AttrValue::Type(DType::kI64)}})), "i64[N,3]");
  EXPECT_EQ(Str(Infer1("Cast", {T(DType::kBool, {})}, {{"to", AttrValue::Type(DType::kF16)}})), "f16[]");
  EXPECT_EQ(Str(Infer1("Cast", {T(DType::kU8, {2})}, {{"to", AttrValue::Type(DType::kBool)}})), "bool[2]");
  EXPECT_EQ(Str(Infer1("Cast", {F32({2})}, {{"to", AttrValue::Type(DType::kF32)}})), "f32[2]");
}

TEST(CastTest, AttributeErrors) {
  EXPECT_TRUE(FailsWith(Infer1("Cast", {F32({2})}), "Cast", "required attribute 'to' (type) is missing"));
  EXPECT_TRUE(FailsWith(Infer1("Cast", {F32({2})}, {{"to", AttrValue::Int(7)}}), "Cast",
                        "attribute 'to' has type int but type is required"));
  EXPECT_TRUE(FailsWith(Infer1("Cast", {F32({2})}, {{"to", AttrValue::Type(DType::kInvalid)}}), "Cast",
                        "'to' is not a valid dtype"));
  EXPECT_TRUE(
      FailsWith(Infer1("Cast", {F32({2})}, {{"to", AttrValue::Type(DType::kI32)}, {"dtype", AttrValue::Int(1)}}),
                "Cast", "unknown attribute 'dtype' (known: to)"));
}

TEST(CastTest, WrongInputCount) {
  EXPECT_TRUE(FailsWith(Infer1("Cast", {F32({2}), F32({2})}, {{"to", AttrValue::Type(DType::kI32)}}), "Cast",
                        "has 2 inputs but 1 expected"));
}

// ---------------------------------------------------------------------------

TEST(ClipTest, BoundsAreOptional) {
  EXPECT_EQ(Str(Infer1("Clip", {F32({N, 3})})), "f32[N,3]");
  EXPECT_EQ(Str(Infer1("Clip", {F32({N, 3}), F32({}), F32({})})), "f32[N,3]");
  EXPECT_EQ(Str(Infer1("Clip", {F32({N, 3}), std::nullopt, F32({1})})), "f32[N,3]");
  EXPECT_EQ(Str(Infer1("Clip", {I64({4}), I64({1})})), "i64[4]");
}

TEST(ClipTest, BoundsMustBeScalars) {
  EXPECT_TRUE(FailsWith(Infer1("Clip", {F32({4}), F32({2})}), "Clip",
                        "input 1 ('min') has shape [2] but a scalar (shape [] or [1]) is required"));
  EXPECT_TRUE(
      FailsWith(Infer1("Clip", {F32({4}), std::nullopt, F32({1, 1})}), "Clip", "input 2 ('max') has shape [1,1]"));
  // A batch-sized bound is not known to hold one value.
  EXPECT_TRUE(FailsWith(Infer1("Clip", {F32({N}), F32({N})}), "Clip", "input 1 ('min') has shape [N]"));
}

TEST(ClipTest, TypeAndCountErrors) {
  EXPECT_TRUE(FailsWith(Infer1("Clip", {F32({4}), I64({})}), "Clip", "input 1 ('min') has dtype i64"));
  EXPECT_TRUE(FailsWith(Infer1("Clip", {T(DType::kBool, {4})}), "Clip", "has dtype bool"));
  EXPECT_TRUE(
      FailsWith(Infer1("Clip", {F32({4}), F32({}), F32({}), F32({})}), "Clip", "has 4 inputs but 1 to 3 expected"));
  EXPECT_TRUE(
      FailsWith(Infer1("Clip", {F32({4})}, {{"min", AttrValue::Float(0.0)}}), "Clip", "unknown attribute 'min'"));
}

TEST(ClipTest, OneFlopPerBoundAndElement) {
  EXPECT_EQ(Flops("Clip", {F32({N, 4, 5}), F32({}), F32({})}), 40);
  EXPECT_EQ(Flops("Clip", {F32({4, 5}), std::nullopt, F32({})}), 20);
  EXPECT_EQ(Flops("Clip", {F32({4, 5})}), 0);
}

TEST(CastTest, CountsNoFlops) { EXPECT_EQ(Flops("Cast", {F32({4})}, {{"to", AttrValue::Type(DType::kI32)}}), 0); }

}  // namespace
}  // namespace tsr

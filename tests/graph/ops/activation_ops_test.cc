// Shape/dtype inference and FLOP estimates of the activation ops (graph/ops/activation_ops.cc).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/op_def.h"
#include "graph/op_registry.h"
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

struct ActivationCase {
  const char* op;
  int64_t flops_per_element;  // with default attributes
};

class ActivationTest : public ::testing::TestWithParam<ActivationCase> {};

TEST_P(ActivationTest, KeepsShapeAndTypeForEveryFloatType) {
  const char* op = GetParam().op;
  for (DType dtype : kFloatDTypes) {
    EXPECT_EQ(Str(Infer1(op, {T(dtype, {N, 3, 4})})), absl::StrCat(DTypeName(dtype), "[N,3,4]"));
  }
  EXPECT_EQ(Str(Infer1(op, {F32({})})), "f32[]");
  EXPECT_EQ(Str(Infer1(op, {F32({0, 8})})), "f32[0,8]");
}

TEST_P(ActivationTest, RejectsUnsignedAndBool) {
  const char* op = GetParam().op;
  EXPECT_TRUE(FailsWith(Infer1(op, {T(DType::kU8, {2})}), op, "input 0 ('X') has dtype u8 but one of {"));
  EXPECT_TRUE(FailsWith(Infer1(op, {T(DType::kBool, {2})}), op, "input 0 ('X') has dtype bool"));
}

TEST_P(ActivationTest, WrongInputCount) {
  const char* op = GetParam().op;
  EXPECT_TRUE(FailsWith(Infer1(op, {}), op, "has 0 inputs but 1 expected"));
  EXPECT_TRUE(FailsWith(Infer1(op, {F32({2}), F32({2})}), op, "has 2 inputs but 1 expected"));
  EXPECT_TRUE(FailsWith(Infer1(op, {std::nullopt}), op, "input 0 ('X') is required but absent"));
}

TEST_P(ActivationTest, UnknownAttribute) {
  const char* op = GetParam().op;
  EXPECT_TRUE(FailsWith(Infer1(op, {F32({2})}, {{"beta", AttrValue::Float(1.0)}}), op, "unknown attribute 'beta'"));
}

TEST_P(ActivationTest, FlopsScaleWithElementsAndIgnoreBatch) {
  EXPECT_EQ(Flops(GetParam().op, {F32({N, 10})}), 10 * GetParam().flops_per_element);
  EXPECT_EQ(Flops(GetParam().op, {F32({4, 10})}), 40 * GetParam().flops_per_element);
}

INSTANTIATE_TEST_SUITE_P(Ops, ActivationTest,
                         ::testing::Values(ActivationCase{"Relu", 1}, ActivationCase{"LeakyRelu", 2},
                                           ActivationCase{"Gelu", 5}, ActivationCase{"Sigmoid", 4},
                                           ActivationCase{"Tanh", 1}, ActivationCase{"Erf", 1},
                                           ActivationCase{"Softplus", 3}, ActivationCase{"Silu", 5}),
                         [](const ::testing::TestParamInfo<ActivationCase>& info) {
                           return std::string(info.param.op);
                         });

TEST(ReluTest, AcceptsSignedIntegersLikeOnnx) {
  EXPECT_EQ(Str(Infer1("Relu", {I64({N, 3})})), "i64[N,3]");
  EXPECT_EQ(Str(Infer1("Relu", {T(DType::kI32, {2})})), "i32[2]");
  EXPECT_EQ(Str(Infer1("Relu", {T(DType::kI8, {2})})), "i8[2]");
}

TEST(ActivationTest, FloatOnlyOpsRejectIntegers) {
  for (const char* op : {"LeakyRelu", "Gelu", "Sigmoid", "Tanh", "Erf", "Softplus", "Silu"}) {
    EXPECT_TRUE(FailsWith(Infer1(op, {I64({2})}), op, "input 0 ('X') has dtype i64")) << op;
    EXPECT_TRUE(FailsWith(Infer1(op, {T(DType::kI32, {2})}), op, "has dtype i32")) << op;
  }
}

TEST(LeakyReluTest, Alpha) {
  EXPECT_EQ(Str(Infer1("LeakyRelu", {F32({N, 4})}, {{"alpha", AttrValue::Float(0.2)}})), "f32[N,4]");
  EXPECT_TRUE(FailsWith(Infer1("LeakyRelu", {F32({2})}, {{"alpha", AttrValue::Int(1)}}), "LeakyRelu",
                        "attribute 'alpha' has type int but float is required"));
  EXPECT_TRUE(FailsWith(Infer1("LeakyRelu", {F32({2})}, {{"slope", AttrValue::Float(0.1)}}), "LeakyRelu",
                        "unknown attribute 'slope' (known: alpha)"));
}

TEST(LeakyReluTest, DefaultAlphaIsOnnxs) {
  const AttrDef* alpha = OpRegistry::Global().Find("LeakyRelu")->FindAttr("alpha");
  ASSERT_NE(alpha, nullptr);
  ASSERT_TRUE(alpha->default_value.has_value());
  EXPECT_DOUBLE_EQ(alpha->default_value->f(), 0.01);
}

TEST(GeluTest, Approximate) {
  EXPECT_EQ(Str(Infer1("Gelu", {F32({N, 8})}, {{"approximate", AttrValue::String("none")}})), "f32[N,8]");
  EXPECT_EQ(Str(Infer1("Gelu", {T(DType::kBF16, {N, 8})}, {{"approximate", AttrValue::String("tanh")}})), "bf16[N,8]");
  EXPECT_TRUE(FailsWith(Infer1("Gelu", {F32({2})}, {{"approximate", AttrValue::String("erf")}}), "Gelu",
                        "attribute 'approximate' is \"erf\" but \"none\" or \"tanh\" is required"));
  // Case matters, as in ONNX.
  EXPECT_TRUE(FailsWith(Infer1("Gelu", {F32({2})}, {{"approximate", AttrValue::String("Tanh")}}), "Gelu",
                        "'approximate' is \"Tanh\""));
  EXPECT_TRUE(FailsWith(Infer1("Gelu", {F32({2})}, {{"approximate", AttrValue::Bool(true)}}), "Gelu",
                        "attribute 'approximate' has type bool but string is required"));
}

TEST(GeluTest, TanhFormulaCostsMore) {
  EXPECT_EQ(Flops("Gelu", {F32({N, 10})}, {{"approximate", AttrValue::String("none")}}), 50);
  EXPECT_EQ(Flops("Gelu", {F32({N, 10})}, {{"approximate", AttrValue::String("tanh")}}), 90);
}

}  // namespace
}  // namespace tsr

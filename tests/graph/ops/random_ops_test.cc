// Shape/dtype inference and FLOP estimates of Dropout (graph/ops/random_ops.cc).
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

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
using ::tsr::testing::Infer;
using ::tsr::testing::Str;
using ::tsr::testing::T;

constexpr int64_t N = kBatchDim;

TensorType Bool(Shape shape) { return TensorType(DType::kBool, std::move(shape)); }

TEST(DropoutTest, OutputAndBoolMaskOfTheDataShape) {
  EXPECT_EQ(Str(Infer("Dropout", {F32({N, 10})})), "f32[N,10], bool[N,10]");
  EXPECT_EQ(Str(Infer("Dropout", {T(DType::kBF16, {})})), "bf16[], bool[]");
  EXPECT_EQ(Str(Infer("Dropout", {F32({N, 3, 4}), F32({}), Bool({})})), "f32[N,3,4], bool[N,3,4]");
}

TEST(DropoutTest, OptionalInputsMayBeSkipped) {
  EXPECT_EQ(Str(Infer("Dropout", {F32({N, 10}), std::nullopt, Bool({})})), "f32[N,10], bool[N,10]");
  EXPECT_EQ(Str(Infer("Dropout", {F32({N, 10}), F32({1})})), "f32[N,10], bool[N,10]");
  EXPECT_EQ(Str(Infer("Dropout", {F32({N, 10}), std::nullopt, std::nullopt})), "f32[N,10], bool[N,10]");
}

TEST(DropoutTest, RatioTypeIsIndependentOfDataType) {
  EXPECT_EQ(Str(Infer("Dropout", {F32({4}), T(DType::kF16, {})})), "f32[4], bool[4]");
  EXPECT_EQ(Str(Infer("Dropout", {T(DType::kF64, {4}), F32({})})), "f64[4], bool[4]");
}

TEST(DropoutTest, DisallowedDTypes) {
  EXPECT_TRUE(FailsWith(Infer("Dropout", {I64({4})}), "Dropout", "input 0 ('data') has dtype i64"));
  EXPECT_TRUE(FailsWith(Infer("Dropout", {Bool({4})}), "Dropout", "input 0 ('data') has dtype bool"));
  EXPECT_TRUE(FailsWith(Infer("Dropout", {F32({4}), I64({})}), "Dropout", "input 1 ('ratio') has dtype i64"));
  EXPECT_TRUE(FailsWith(Infer("Dropout", {F32({4}), F32({}), F32({})}), "Dropout",
                        "input 2 ('training_mode') has dtype f32 but one of {bool} is required"));
}

TEST(DropoutTest, RatioAndTrainingModeMustBeScalars) {
  EXPECT_TRUE(FailsWith(Infer("Dropout", {F32({4}), F32({2})}), "Dropout",
                        "input 1 ('ratio') has shape [2] but a scalar (shape [] or [1]) is required"));
  EXPECT_TRUE(FailsWith(Infer("Dropout", {F32({N, 4}), F32({N})}), "Dropout", "input 1 ('ratio') has shape [N]"));
  EXPECT_TRUE(FailsWith(Infer("Dropout", {F32({4}), F32({}), Bool({4})}), "Dropout",
                        "input 2 ('training_mode') has shape [4]"));
}

TEST(DropoutTest, ConstantRatioMustBeInZeroOne) {
  for (float ok : {0.0f, 0.5f, 0.99f}) {
    const Tensor ratio = Tensor::Scalar<float>(ok);
    EXPECT_EQ(Str(Infer("Dropout", {F32({4}), F32({})}, {}, {nullptr, &ratio})), "f32[4], bool[4]") << ok;
  }
  for (float bad : {1.0f, 1.5f, -0.1f, std::numeric_limits<float>::quiet_NaN()}) {
    const Tensor ratio = Tensor::Scalar<float>(bad);
    EXPECT_TRUE(
        FailsWith(Infer("Dropout", {F32({4}), F32({})}, {}, {nullptr, &ratio}), "Dropout", "input 1 ('ratio') is"))
        << bad;
  }
  const Tensor one = Tensor::FromVector<double>(Shape{1}, {1.0});
  EXPECT_TRUE(FailsWith(Infer("Dropout", {F32({4}), T(DType::kF64, {1})}, {}, {nullptr, &one}), "Dropout",
                        "input 1 ('ratio') is 1 but a value in [0, 1) is required"));
}

TEST(DropoutTest, Attributes) {
  EXPECT_EQ(Str(Infer("Dropout", {F32({4})}, {{"seed", AttrValue::Int(42)}})), "f32[4], bool[4]");
  EXPECT_TRUE(FailsWith(Infer("Dropout", {F32({4})}, {{"seed", AttrValue::Float(1.5)}}), "Dropout",
                        "attribute 'seed' has type float but int is required"));
  // Opset 12 made ratio an input; as an attribute it is unknown.
  EXPECT_TRUE(FailsWith(Infer("Dropout", {F32({4})}, {{"ratio", AttrValue::Float(0.5)}}), "Dropout",
                        "unknown attribute 'ratio' (known: seed, element_offset)"));
  const AttrDef* seed = OpRegistry::Global().Find("Dropout")->FindAttr("seed");
  ASSERT_NE(seed, nullptr);
  EXPECT_FALSE(seed->required);
  EXPECT_FALSE(seed->default_value.has_value());
}

TEST(DropoutTest, WrongInputCount) {
  EXPECT_TRUE(FailsWith(Infer("Dropout", {}), "Dropout", "has 0 inputs but 1 to 3 expected"));
  EXPECT_TRUE(
      FailsWith(Infer("Dropout", {F32({4}), F32({}), Bool({}), Bool({})}), "Dropout", "has 4 inputs but 1 to 3"));
  EXPECT_TRUE(FailsWith(Infer("Dropout", {std::nullopt}), "Dropout", "input 0 ('data') is required but absent"));
}

TEST(DropoutTest, IsStateful) { EXPECT_TRUE(OpRegistry::Global().Find("Dropout")->stateful); }

TEST(DropoutTest, FlopsOnlyInTraining) {
  const Tensor on = Tensor::Scalar<bool>(true);
  const Tensor off = Tensor::Scalar<bool>(false);
  EXPECT_EQ(Flops("Dropout", {F32({N, 10})}), 0);
  EXPECT_EQ(Flops("Dropout", {F32({N, 10}), std::nullopt, Bool({})}, {}, {nullptr, nullptr, &off}), 0);
  EXPECT_EQ(Flops("Dropout", {F32({N, 10}), std::nullopt, Bool({})}, {}, {nullptr, nullptr, &on}), 20);
  // Unknown at compile time: counted as training.
  EXPECT_EQ(Flops("Dropout", {F32({4, 10}), F32({}), Bool({})}), 80);
}

}  // namespace
}  // namespace tsr

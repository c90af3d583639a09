// Constant, Placeholder, Variable and Identity.
#include "gtest/gtest.h"
#include "tests/graph/ops/op_test_util.h"

namespace tsr {
namespace {

using ::tsr::testing::F32;
using ::tsr::testing::Infer1;

void ExpectError(const absl::Status& s, const std::string& fragment) {
  ASSERT_FALSE(s.ok()) << "expected an error containing: " << fragment;
  EXPECT_NE(s.message().find(fragment), std::string::npos) << s.message();
}

TEST(SourceOpsTest, Constant) {
  Tensor v = Tensor::FromVector<int32_t>(Shape{2, 2}, {1, 2, 3, 4});
  absl::StatusOr<TensorType> t = Infer1("Constant", {}, {{"value", AttrValue::FromTensor(v)}});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->ToString(), "i32[2,2]");
  ExpectError(Infer1("Constant", {}, {}).status(), "required attribute 'value'");
  ExpectError(Infer1("Constant", {}, {{"value", AttrValue::FromTensor(Tensor())}}).status(), "holds no tensor");
  ExpectError(Infer1("Constant", {F32(Shape{1})}, {{"value", AttrValue::FromTensor(v)}}).status(),
              "has 1 inputs but 0 expected");
}

TEST(SourceOpsTest, Placeholder) {
  absl::StatusOr<TensorType> t =
      Infer1("Placeholder", {},
             {{"dtype", AttrValue::Type(DType::kF32)}, {"shape", AttrValue::FromShape(Shape{kBatchDim, 784})}});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->ToString(), "f32[N,784]");
  ExpectError(Infer1("Placeholder", {}, {{"dtype", AttrValue::Type(DType::kF32)}}).status(),
              "required attribute 'shape'");
  ExpectError(
      Infer1("Placeholder", {}, {{"dtype", AttrValue::Type(DType::kF32)}, {"shape", AttrValue::FromShape(Shape{-5})}})
          .status(),
      "negative dimension");
}

TEST(SourceOpsTest, Variable) {
  AttrMap attrs = {{"dtype", AttrValue::Type(DType::kF32)},
                   {"shape", AttrValue::FromShape(Shape{784, 256})},
                   {"initializer", AttrValue::String("glorot_uniform")}};
  absl::StatusOr<TensorType> t = Infer1("Variable", {}, attrs);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->ToString(), "f32[784,256]");

  AttrMap bad_init = attrs;
  bad_init["initializer"] = AttrValue::String("xavier");
  ExpectError(Infer1("Variable", {}, bad_init).status(), "unknown initializer 'xavier'");

  AttrMap batch = attrs;
  batch["shape"] = AttrValue::FromShape(Shape{kBatchDim, 3});
  ExpectError(Infer1("Variable", {}, batch).status(), "must be static");

  AttrMap uniform = attrs;
  uniform["initializer"] = AttrValue::String("uniform");
  uniform["init_min"] = AttrValue::Float(1);
  uniform["init_max"] = AttrValue::Float(-1);
  ExpectError(Infer1("Variable", {}, uniform).status(), "init_min < init_max");

  AttrMap value = attrs;
  value["value"] = AttrValue::FromTensor(Tensor(DType::kF32, Shape{2}));
  ExpectError(Infer1("Variable", {}, value).status(), "attribute 'value' is f32[2] but the variable is f32[784,256]");
  value["value"] = AttrValue::FromTensor(Tensor(DType::kF32, Shape{784, 256}));
  EXPECT_TRUE(Infer1("Variable", {}, value).ok());
  EXPECT_TRUE(OpRegistry::Global().Find("Variable")->stateful);
}

TEST(SourceOpsTest, Identity) {
  EXPECT_EQ(Infer1("Identity", {F32(Shape{kBatchDim, 3})})->ToString(), "f32[N,3]");
  ExpectError(Infer1("Identity", {}).status(), "has 0 inputs but 1 expected");
}

}  // namespace
}  // namespace tsr

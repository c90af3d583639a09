// AttrValue kinds, printing and equality.
#include "graph/attribute.h"

#include "gtest/gtest.h"

namespace tsr {
namespace {

TEST(AttrValueTest, KindsAndPrinting) {
  EXPECT_EQ(AttrValue::Int(3).type(), AttrType::kInt);
  EXPECT_EQ(AttrValue::Float(0.5).ToString(), "0.5");
  EXPECT_EQ(AttrValue::String("same_upper").ToString(), "\"same_upper\"");
  EXPECT_EQ(AttrValue::Bool(true).ToString(), "true");
  EXPECT_EQ(AttrValue::Ints({1, 2}).ToString(), "[1,2]");
  EXPECT_EQ(AttrValue::Floats({0.5, 1}).type(), AttrType::kFloats);
  EXPECT_EQ(AttrValue::Strings({"a", "b"}).ToString(), "[\"a\",\"b\"]");
  EXPECT_EQ(AttrValue::Type(DType::kBF16).ToString(), "bf16");
  EXPECT_EQ(AttrValue::FromShape(Shape{kBatchDim, 4}).ToString(), "[N,4]");
  EXPECT_EQ(AttrValue::FromTensor(Tensor::FromVector<int32_t>(Shape{2}, {7, 8})).ToString(), "i32[2] {7, 8}");
}

TEST(AttrValueTest, Equality) {
  EXPECT_EQ(AttrValue::Int(1), AttrValue::Int(1));
  EXPECT_NE(AttrValue::Int(1), AttrValue::Float(1));
  EXPECT_NE(AttrValue::Int(1), AttrValue::Bool(true));
  EXPECT_NE(AttrValue::Ints({1, 2}), AttrValue::Ints({2, 1}));
  Tensor a = Tensor::FromVector<float>(Shape{2}, {1, 2});
  EXPECT_EQ(AttrValue::FromTensor(a), AttrValue::FromTensor(a.Clone()));
  EXPECT_NE(AttrValue::FromTensor(a), AttrValue::FromTensor(Tensor::FromVector<float>(Shape{2}, {1, 3})));
  EXPECT_NE(AttrValue::FromTensor(a), AttrValue::FromTensor(Tensor::FromVector<float>(Shape{1, 2}, {1, 2})));
}

}  // namespace
}  // namespace tsr

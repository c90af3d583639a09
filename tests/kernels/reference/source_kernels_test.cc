// Tests of the reference Constant and Identity kernels.
#include <optional>
#include <vector>

#include "graph/attribute.h"
#include "graph/op_registry.h"
#include "gtest/gtest.h"
#include "kernels/kernel.h"
#include "kernels/run_op.h"

namespace tsr {
namespace {

TEST(SourceKernelsTest, ConstantCopiesValue) {
  const Tensor value = Tensor::FromVector<float>(Shape{2, 2}, {1.5f, -2.0f, 3.25f, 0.0f});
  absl::StatusOr<std::vector<Tensor>> out = RunOp("Constant", {}, {{"value", AttrValue::FromTensor(value)}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE((*out)[0].BitwiseEquals(value));
  // A copy, not an alias of the attribute's buffer.
  EXPECT_NE((*out)[0].raw_data(), value.raw_data());
}

TEST(SourceKernelsTest, ConstantEveryDType) {
  for (DType dtype : kAllDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    Tensor value(dtype, Shape{3});
    for (size_t b = 0; b < value.num_bytes(); ++b) static_cast<uint8_t*>(value.raw_data())[b] = b % 2;  // 0/1 bytes
    absl::StatusOr<std::vector<Tensor>> out = RunOp("Constant", {}, {{"value", AttrValue::FromTensor(value)}});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_TRUE((*out)[0].BitwiseEquals(value));
  }
}

TEST(SourceKernelsTest, ConstantScalarAndEmpty) {
  const Tensor scalar = Tensor::Scalar<int64_t>(-7);
  absl::StatusOr<std::vector<Tensor>> out = RunOp("Constant", {}, {{"value", AttrValue::FromTensor(scalar)}});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*out)[0].GetAsInt64(0), -7);
  const Tensor empty(DType::kF32, Shape{0, 4});
  out = RunOp("Constant", {}, {{"value", AttrValue::FromTensor(empty)}});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*out)[0].shape(), (Shape{0, 4}));
}

TEST(SourceKernelsTest, IdentityEveryDType) {
  for (DType dtype : kAllDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    Tensor in(dtype, Shape{2, 3});
    for (size_t b = 0; b < in.num_bytes(); ++b) static_cast<uint8_t*>(in.raw_data())[b] = (b * 7) % 2;
    absl::StatusOr<std::vector<Tensor>> out = RunOp("Identity", {in});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_TRUE((*out)[0].BitwiseEquals(in));
  }
}

TEST(SourceKernelsTest, RegisteredForEveryDType) {
  for (const char* op : {"Constant", "Identity"}) {
    EXPECT_EQ(KernelRegistry::Global().DTypesFor(op, kReferenceDevice).size(), std::size(kAllDTypes)) << op;
  }
  EXPECT_TRUE(KernelRegistry::Global().DTypesFor("Placeholder", kReferenceDevice).empty());
  EXPECT_TRUE(KernelRegistry::Global().DTypesFor("Variable", kReferenceDevice).empty());
}

}  // namespace
}  // namespace tsr

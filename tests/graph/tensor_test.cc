// Tensor allocation, alignment, typed views, sharing and cloning.
#include "graph/tensor.h"

#include <cstdint>

#include "gtest/gtest.h"

namespace tsr {
namespace {

TEST(TensorTest, AllocatesAlignedZeroedBuffers) {
  for (DType d : kAllDTypes) {
    Tensor t(d, Shape{3, 5});
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t.raw_data()) % kTensorAlignment, 0u) << DTypeName(d);
    EXPECT_EQ(t.num_bytes(), 15 * DTypeSize(d));
    const auto* bytes = static_cast<const uint8_t*>(t.raw_data());
    for (size_t i = 0; i < t.num_bytes(); ++i) ASSERT_EQ(bytes[i], 0);
  }
  Tensor empty(DType::kF32, Shape{0, 4});
  EXPECT_EQ(empty.num_elements(), 0);
  EXPECT_NE(empty.raw_data(), nullptr);
}

TEST(TensorTest, CreateRejectsBadShapes) {
  EXPECT_FALSE(Tensor::Create(DType::kF32, Shape{kBatchDim, 3}).ok());
  EXPECT_FALSE(Tensor::Create(DType::kF32, Shape{-2}).ok());
  EXPECT_FALSE(Tensor::Create(DType::kInvalid, Shape{2}).ok());
  EXPECT_FALSE(Tensor::Create(DType::kF32, Shape{int64_t{1} << 30, int64_t{1} << 30}).ok());
  EXPECT_TRUE(Tensor::Create(DType::kI64, Shape{2, 2}).ok());
}

TEST(TensorTest, CopiesShareCloneIsDeep) {
  Tensor a = Tensor::FromVector<float>(Shape{2, 2}, {1, 2, 3, 4});
  Tensor shared = a;
  Tensor deep = a.Clone();
  a.data<float>()[0] = 42;
  EXPECT_EQ(shared.data<float>()[0], 42);
  EXPECT_EQ(deep.data<float>()[0], 1);
  EXPECT_FALSE(a.BitwiseEquals(deep));
  deep.data<float>()[0] = 42;
  EXPECT_TRUE(a.BitwiseEquals(deep));
}

TEST(TensorTest, ConversionsAndReshape) {
  Tensor h = Tensor::FromVector<Float16>(Shape{2}, {Float16::FromFloat(1.5f), Float16::FromFloat(-2)});
  EXPECT_EQ(h.GetAsDouble(0), 1.5);
  EXPECT_EQ(h.GetAsInt64(1), -2);
  Tensor i = Tensor::FromVector<int64_t>(Shape{2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(i.ToInt64Vector(), (std::vector<int64_t>{1, 2, 3, 4, 5, 6}));
  absl::StatusOr<Tensor> r = i.Reshaped(Shape{3, 2});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->shape(), (Shape{3, 2}));
  EXPECT_EQ(r->raw_data(), i.raw_data());
  EXPECT_FALSE(i.Reshaped(Shape{4}).ok());
  EXPECT_EQ(Tensor::Scalar<bool>(true).DebugString(), "bool[] {1}");
  EXPECT_EQ(i.DebugString(4), "i64[2,3] {1, 2, 3, 4, ...}");
}

}  // namespace
}  // namespace tsr

namespace tsr {
namespace {

TEST(TensorTest, WrapSharesExternalMemory) {
  auto owner = std::shared_ptr<void>(std::aligned_alloc(kTensorAlignment, 64), [](void* p) { std::free(p); });
  Tensor t = Tensor::Wrap(DType::kI32, Shape{4}, owner, owner.get());
  t.data<int32_t>()[2] = 7;
  EXPECT_EQ(static_cast<int32_t*>(owner.get())[2], 7);
  EXPECT_EQ(t.num_bytes(), 16u);
  EXPECT_EQ(owner.use_count(), 2);
}

}  // namespace
}  // namespace tsr

// Tests of Allocator: alignment, zero fill and statistics.
#include "runtime/allocator.h"

#include <cstdint>
#include <optional>

#include "gtest/gtest.h"

namespace tsr {
namespace {

TEST(AllocatorTest, TensorsAreAlignedZeroedAndTyped) {
  Allocator alloc;
  absl::StatusOr<Tensor> t = alloc.Allocate(DType::kF32, Shape({3, 5}));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->type(), TensorType(DType::kF32, Shape({3, 5})));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t->raw_data()) % kTensorAlignment, 0u);
  for (float v : t->flat<float>()) EXPECT_EQ(v, 0.0f);
}

TEST(AllocatorTest, StatisticsFollowLifetimes) {
  Allocator alloc;
  EXPECT_EQ(alloc.stats().bytes_in_use, 0);
  std::optional<Tensor> a = *alloc.Allocate(DType::kF32, Shape({100}));  // 400 bytes
  std::optional<Tensor> b = *alloc.Allocate(DType::kF64, Shape({10}));   // 80 bytes
  EXPECT_EQ(alloc.stats().bytes_in_use, 480);
  EXPECT_EQ(alloc.stats().peak_bytes, 480);
  EXPECT_EQ(alloc.stats().num_allocations, 2);
  {
    Tensor shared = *a;  // copies share the buffer: nothing is freed below
    a.reset();
    EXPECT_EQ(alloc.stats().bytes_in_use, 480);
  }
  EXPECT_EQ(alloc.stats().bytes_in_use, 80);
  EXPECT_EQ(alloc.stats().peak_bytes, 480);
  alloc.ResetPeak();
  EXPECT_EQ(alloc.stats().peak_bytes, 80);
  Tensor c = *alloc.Allocate(DType::kI8, Shape({7}));
  EXPECT_EQ(alloc.stats().peak_bytes, 87);
  EXPECT_EQ(alloc.stats().num_allocations, 3);
  EXPECT_EQ(alloc.stats().bytes_allocated, 487);
  b.reset();
  EXPECT_EQ(alloc.stats().bytes_in_use, 7);
}

TEST(AllocatorTest, TensorsMayOutliveTheAllocator) {
  std::optional<Tensor> t;
  {
    Allocator alloc;
    t = *alloc.Allocate(DType::kI32, Shape({4}));
  }
  t->data<int32_t>()[3] = 7;
  EXPECT_EQ(t->GetAsInt64(3), 7);
}

TEST(AllocatorTest, EmptyTensorsAndErrors) {
  Allocator alloc;
  absl::StatusOr<Tensor> empty = alloc.Allocate(DType::kF32, Shape({0, 4}));
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ(empty->num_elements(), 0);
  EXPECT_FALSE(alloc.Allocate(DType::kF32, Shape({kBatchDim, 4})).ok());
  EXPECT_FALSE(alloc.Allocate(DType::kInvalid, Shape({4})).ok());
}

}  // namespace
}  // namespace tsr

// Tests of Allocator: alignment, poisoning, statistics, the size classes and reuse
// through the caching arena, and concurrent use.
#include "runtime/allocator.h"

#include <cmath>
#include <cstdint>
#include <optional>
#include <set>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace tsr {
namespace {

TEST(AllocatorTest, TensorsAreAlignedAndTyped) {
  Allocator alloc;
  for (int64_t n : {0, 1, 3, 17, 1023, 100000}) {
    absl::StatusOr<Tensor> t = alloc.Allocate(DType::kF32, Shape({n, 5}));
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_EQ(t->type(), TensorType(DType::kF32, Shape({n, 5})));
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t->raw_data()) % kTensorAlignment, 0u);
  }
}

TEST(AllocatorTest, PoisonFillsEveryElement) {
  AllocatorOptions options;
  options.poison = true;
  Allocator alloc(options);
  for (int round = 0; round < 2; ++round) {  // fresh and reused buffers alike
    Tensor f = *alloc.Allocate(DType::kF32, Shape({33}));
    for (float v : f.flat<float>()) EXPECT_TRUE(std::isnan(v));
    Tensor i = *alloc.Allocate(DType::kI64, Shape({9}));
    for (int64_t v : i.flat<int64_t>()) EXPECT_EQ(v, -1);
    Tensor b = *alloc.Allocate(DType::kBool, Shape({5}));
    for (bool v : b.flat<bool>()) EXPECT_TRUE(v);
    f.flat<float>()[0] = 1.0f;
  }
}

TEST(AllocatorTest, SizeClassesAreTightAlignedAndMonotone) {
  int64_t previous = 0;
  for (int64_t bytes = 0; bytes < (int64_t{1} << 22); bytes = bytes < 5000 ? bytes + 1 : bytes * 17 / 16 + 3) {
    const int64_t c = Allocator::SizeClass(bytes);
    ASSERT_GE(c, std::max<int64_t>(bytes, 1)) << bytes;
    ASSERT_EQ(c % 64, 0) << bytes;
    ASSERT_LE(c, bytes + std::max<int64_t>(64, bytes / 4)) << bytes;
    ASSERT_GE(c, previous) << bytes;
    previous = c;
  }
  // Few classes: sizes within one class share buffers.
  std::set<int64_t> classes;
  for (int64_t bytes = (1 << 20) + 1; bytes <= (1 << 21); bytes += 997) classes.insert(Allocator::SizeClass(bytes));
  EXPECT_EQ(classes.size(), 4u);
}

TEST(AllocatorTest, FreedBuffersAreReusedWithoutSystemCalls) {
  Allocator alloc;
  const void* first = nullptr;
  {
    Tensor t = *alloc.Allocate(DType::kF32, Shape({1000}));
    first = t.raw_data();
  }
  EXPECT_EQ(alloc.stats().num_system_allocations, 1);
  EXPECT_EQ(alloc.stats().bytes_cached, Allocator::SizeClass(4000));
  // Another request of the same size class (4000 and 3900 bytes) takes it back.
  Tensor again = *alloc.Allocate(DType::kF32, Shape({975}));
  EXPECT_EQ(again.raw_data(), first);
  EXPECT_EQ(alloc.stats().num_system_allocations, 1);
  EXPECT_EQ(alloc.stats().bytes_cached, 0);
  // A step of a graph run many times: after the first, no system allocation.
  for (int step = 0; step < 5; ++step) {
    std::vector<Tensor> live;
    for (int64_t n : {10, 300, 5000, 300, 77777}) live.push_back(*alloc.Allocate(DType::kF32, Shape({n})));
  }
  const int64_t after_steps = alloc.stats().num_system_allocations;
  EXPECT_EQ(after_steps, 6);  // 1 (held by `again`) + 5 live at once in a step
  EXPECT_EQ(alloc.stats().bytes_reserved, alloc.stats().bytes_cached + Allocator::SizeClass(3900));
  alloc.ReleaseCached();
  EXPECT_EQ(alloc.stats().bytes_cached, 0);
  EXPECT_EQ(alloc.stats().bytes_reserved, Allocator::SizeClass(3900));
}

TEST(AllocatorTest, CacheLimitReturnsMemoryToTheSystem) {
  AllocatorOptions options;
  options.max_cached_bytes = 0;
  Allocator alloc(options);
  for (int i = 0; i < 3; ++i) Tensor t = *alloc.Allocate(DType::kF64, Shape({512}));
  EXPECT_EQ(alloc.stats().num_system_allocations, 3);
  EXPECT_EQ(alloc.stats().bytes_reserved, 0);
  EXPECT_EQ(alloc.stats().bytes_cached, 0);
}

TEST(AllocatorTest, ConcurrentAllocationsKeepConsistentStatistics) {
  Allocator alloc;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&alloc, t] {
      for (int i = 0; i < 2000; ++i) {
        Tensor a = *alloc.Allocate(DType::kF32, Shape({(i * 7 + t) % 300 + 1}));
        a.flat<float>()[0] = static_cast<float>(t);
        Tensor b = *alloc.Allocate(DType::kU8, Shape({i % 5000}));
        EXPECT_EQ(a.flat<float>()[0], static_cast<float>(t));
      }
    });
  }
  for (std::thread& th : threads) th.join();
  const AllocatorStats s = alloc.stats();
  EXPECT_EQ(s.bytes_in_use, 0);
  EXPECT_EQ(s.num_allocations, 16000);
  EXPECT_EQ(s.bytes_reserved, s.bytes_cached);
  EXPECT_LE(s.num_system_allocations, 16000);
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

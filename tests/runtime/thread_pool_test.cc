// Tests of ThreadPool: Schedule, ParallelFor coverage and nesting.
#include "runtime/thread_pool.h"

#include <atomic>
#include <vector>

#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace tsr {
namespace {

TEST(ThreadPoolTest, SizeFromOptionOrHardware) {
  EXPECT_EQ(ThreadPool(3).num_threads(), 3);
  EXPECT_GE(ThreadPool(0).num_threads(), 1);
}

TEST(ThreadPoolTest, ScheduleRunsEveryTaskOnAWorker) {
  std::atomic<int> count{0};
  std::atomic<int> on_workers{0};
  {
    ThreadPool pool(4);
    for (int i = 0; i < 1000; ++i) {
      pool.Schedule([&] {
        count.fetch_add(1);
        if (pool.CurrentThreadId() > 0) on_workers.fetch_add(1);
      });
    }
  }  // the destructor drains the queue
  EXPECT_EQ(count.load(), 1000);
  EXPECT_EQ(on_workers.load(), 1000);
}

TEST(ThreadPoolTest, CurrentThreadIdIsZeroOutsideThePool) {
  ThreadPool pool(2);
  EXPECT_EQ(pool.CurrentThreadId(), 0);
  absl::Notification done;
  int id = -1;
  pool.Schedule([&] {
    id = pool.CurrentThreadId();
    done.Notify();
  });
  done.WaitForNotification();
  EXPECT_GE(id, 1);
  EXPECT_LE(id, 2);
}

// Every index in [0, n) is visited exactly once, for sizes and costs that do and do
// not split.
TEST(ThreadPoolTest, ParallelForCoversEveryIndexOnce) {
  ThreadPool pool(4);
  for (int64_t n : {1, 2, 3, 7, 100, 1001, 100000}) {
    for (int64_t cost : {1, 100, 10000, 1000000}) {
      SCOPED_TRACE(testing::Message() << "n=" << n << " cost=" << cost);
      std::vector<std::atomic<int>> hits(n);
      std::atomic<int> calls{0};
      pool.ParallelFor(n, cost, [&](int64_t begin, int64_t end) {
        ASSERT_LE(0, begin);
        ASSERT_LT(begin, end);
        ASSERT_LE(end, n);
        calls.fetch_add(1);
        for (int64_t i = begin; i < end; ++i) hits[i].fetch_add(1);
      });
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << "index " << i;
      if (n * cost < ThreadPool::kMinCostPerChunk) {
        EXPECT_EQ(calls.load(), 1) << "small work must not split";
      }
    }
  }
}

TEST(ThreadPoolTest, ParallelForSplitsBigWorkAcrossThreads) {
  ThreadPool pool(4);
  std::atomic<int> calls{0};
  pool.ParallelFor(1000, 1000000, [&](int64_t, int64_t) { calls.fetch_add(1); });
  EXPECT_GT(calls.load(), 1);
}

// A caller whose helpers are all busy runs every chunk itself, in order, instead of
// waiting for them: with the only worker blocked, ParallelFor still returns.
TEST(ThreadPoolTest, ParallelForRunsTheChunksOfABusyWorker) {
  ThreadPool pool(1);
  absl::Notification release;
  absl::Notification worker_blocked;
  pool.Schedule([&] {
    worker_blocked.Notify();
    release.WaitForNotification();
  });
  worker_blocked.WaitForNotification();
  std::vector<int64_t> begins;  // only the caller runs chunks: no lock needed
  pool.ParallelFor(8, 1000000, [&](int64_t begin, int64_t end) {
    EXPECT_EQ(pool.CurrentThreadId(), 0);
    begins.push_back(begin);
  });
  release.Notify();
  EXPECT_EQ(begins, (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7}));
}

// Each participant starts on its own contiguous share of the chunks (the caller the
// first, its helper the second half), so that consecutive ParallelFors over the same
// data give each thread the part it wrote before. The caller's first chunk waits until
// the worker has started one: the worker's first chunk must be the second half's first,
// which no other participant can have taken by then.
TEST(ThreadPoolTest, ParallelForStartsEachThreadOnItsOwnShare) {
  ThreadPool pool(1);
  absl::Notification worker_started;
  std::atomic<int64_t> worker_first{-1};
  bool waited = true;
  pool.ParallelFor(8, 1000000, [&](int64_t begin, int64_t) {
    if (pool.CurrentThreadId() != 0) {
      int64_t none = -1;
      if (worker_first.compare_exchange_strong(none, begin)) worker_started.Notify();
    } else if (begin == 0) {
      waited = worker_started.WaitForNotificationWithTimeout(absl::Seconds(30));
    }
  });
  ASSERT_TRUE(waited) << "the worker never ran a chunk";
  EXPECT_EQ(worker_first.load(), 4);
}

// A participant done with its own share takes the end of a slower one's in small bites:
// the owner claims less than a whole chunk once less than two are left. 64 items in 8
// chunks: the caller owns [0, 32); its claim from item 24 on waits until the worker,
// done with [32, 64), has run an item of the caller's last chunk -- which it could not
// if the caller had claimed that chunk whole.
TEST(ThreadPoolTest, ParallelForSharesTheEndOfASlowShare) {
  ThreadPool pool(1);
  absl::Notification worker_took_the_end;
  std::atomic<bool> notified{false};
  std::atomic<int64_t> caller_claim{-1};
  bool waited = true;
  pool.ParallelFor(64, 1000000, [&](int64_t begin, int64_t end) {
    if (pool.CurrentThreadId() != 0) {
      if (begin < 32 && end > 24 && !notified.exchange(true)) worker_took_the_end.Notify();
    } else if (end > 24 && begin < 32 && caller_claim.load() < 0) {
      caller_claim = end - begin;
      waited = worker_took_the_end.WaitForNotificationWithTimeout(absl::Seconds(30));
    }
  });
  ASSERT_TRUE(waited) << "the worker never ran an item of the caller's last chunk";
  EXPECT_LT(caller_claim.load(), 8);
}

TEST(ThreadPoolTest, ParallelForOfNothingDoesNothing) {
  ThreadPool pool(2);
  bool called = false;
  pool.ParallelFor(0, 1000000, [&](int64_t, int64_t) { called = true; });
  EXPECT_FALSE(called);
}

// A ParallelFor issued from every worker at once (kernels run by the executor) must
// finish although no worker is free to help.
TEST(ThreadPoolTest, NestedParallelForDoesNotDeadlock) {
  ThreadPool pool(3);
  constexpr int kOuter = 12;
  constexpr int64_t kInner = 5000;
  std::vector<std::atomic<int64_t>> sums(kOuter);
  pool.ParallelFor(kOuter, 1000000, [&](int64_t begin, int64_t end) {
    for (int64_t o = begin; o < end; ++o) {
      pool.ParallelFor(kInner, 1000, [&](int64_t b, int64_t e) {
        int64_t s = 0;
        for (int64_t i = b; i < e; ++i) s += i;
        sums[o].fetch_add(s);
      });
    }
  });
  for (int o = 0; o < kOuter; ++o) EXPECT_EQ(sums[o].load(), kInner * (kInner - 1) / 2) << "outer " << o;
}

TEST(ThreadPoolTest, ParallelForInsideScheduledTasks) {
  ThreadPool pool(2);
  constexpr int kTasks = 8;
  std::atomic<int> finished{0};
  std::atomic<int64_t> total{0};
  absl::Notification all_done;
  for (int t = 0; t < kTasks; ++t) {
    pool.Schedule([&] {
      pool.ParallelFor(1000, 100000, [&](int64_t b, int64_t e) { total.fetch_add(e - b); });
      if (finished.fetch_add(1) + 1 == kTasks) all_done.Notify();
    });
  }
  all_done.WaitForNotification();
  EXPECT_EQ(total.load(), kTasks * 1000);
}

TEST(ThreadPoolTest, AsParallelForFnUsesThePool) {
  ThreadPool pool(2);
  ParallelForFn fn = pool.AsParallelForFn();
  std::atomic<int64_t> total{0};
  fn(777, 1000000, [&](int64_t b, int64_t e) { total.fetch_add(e - b); });
  EXPECT_EQ(total.load(), 777);
}

}  // namespace
}  // namespace tsr

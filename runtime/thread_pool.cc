// ThreadPool: workers, Schedule and the nesting-safe ParallelFor.
#include "runtime/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>

#include "platform/denormals.h"
#include "platform/spin_wait.h"

namespace tsr {

namespace {

// Which pool the current thread works for, and its 1-based index there.
thread_local const ThreadPool* current_pool = nullptr;
thread_local int current_index = 0;

// Idle workers, and a ParallelFor caller waiting for its helpers' last chunks, spin for
// kDefaultSpin (platform/spin_wait.h) before they sleep on a condition variable. Kernels
// of one model run a few microseconds apart; a futex wake-up costs tens of
// microseconds, which at two threads made the second thread a loss on small ops
// (MobileNetV2's 55 kernels at 2 threads ran no faster than at 1).

// Shared by the caller and the helpers of one ParallelFor. Helpers may start after the
// call returned (all chunks taken): they then find nothing to do, and only touch this
// state, which they keep alive.
struct ParallelForState {
  // At most this many participants (the caller and its helpers) own chunks.
  static constexpr int kMaxOwners = 16;
  // Bites (the smallest claims) per chunk.
  static constexpr int64_t kStealsPerChunk = 8;

  int64_t n = 0;
  int owners = 1;
  int64_t own_step = 1, steal_step = 1;  // items per claim: an owner's, another's
  const std::function<void(int64_t, int64_t)>* fn = nullptr;
  // Owner p's items are [first(p), first(p + 1)); next[p] is the first not yet taken.
  // Each counter on its own cache line, so that owners taking their own chunks do not
  // pull one line back and forth between cores.
  struct alignas(64) Counter {
    std::atomic<int64_t> value;
  };
  Counter next[kMaxOwners];
  alignas(64) std::atomic<int64_t> done{0};  // items finished
  std::mutex mu;
  std::condition_variable cv;

  int64_t num_chunks = 1;
  int64_t first(int p) const { return p * num_chunks / owners * n / num_chunks; }

  void Start(int64_t items, int64_t chunks, int participants, const std::function<void(int64_t, int64_t)>* f) {
    n = items;
    num_chunks = chunks;
    owners = std::max(1, std::min<int>(participants, kMaxOwners));
    own_step = (n + chunks - 1) / chunks;
    steal_step = std::max<int64_t>(1, own_step / kStealsPerChunk);
    fn = f;
    for (int p = 0; p < owners; ++p) next[p].value.store(first(p), std::memory_order_relaxed);
  }

  // Runs owner p's items in order, then takes what is left of the others' (p + 1, p + 2,
  // ... round the ring), until none is left. A participant runs the same share of every
  // ParallelFor when the threads keep pace -- the caller the first, the first helper the
  // next --, so that an op reading what the op before wrote finds most of it in its own
  // core's cache: a read of data another core wrote runs at ~28 GB/s here against ~100
  // from the core's own L2, and chunks taken first-come (the caller's and the helper's
  // interleaved) left half of every activation on the wrong core.
  //
  // An owner claims its items a chunk at a time, then, once less than two chunks are
  // left, half of what is left, down to a bite of an eighth of a chunk; the others' items
  // go in such bites. A participant that finished first thus shares the end of a slower
  // one's share (a core slowed by a neighbour, uneven rows) instead of waiting for a
  // whole chunk: with whole chunks, a 3x3/2 convolution's caller ran 560 us where its
  // helper ran 500 and then waited; now both run 500 (ResNet-18, MobileNetV2 and LeNet at
  // two threads 1-2% faster, in-process A/B).
  void RunChunks(int p) {
    for (int k = 0; k < owners; ++k) {
      const int q = (p + k) % owners;
      const int64_t last = first(q + 1);
      for (;;) {
        int64_t step = steal_step;
        if (k == 0) {
          const int64_t left = last - next[q].value.load(std::memory_order_relaxed);
          step = std::max(steal_step, std::min(own_step, left / 2));
        }
        const int64_t begin = next[q].value.fetch_add(step);
        if (begin >= last) break;
        const int64_t end = std::min(begin + step, last);
        (*fn)(begin, end);
        if (done.fetch_add(end - begin) + (end - begin) == n) {
          std::lock_guard<std::mutex> lock(mu);
          cv.notify_all();
        }
      }
    }
  }
};

}  // namespace

ThreadPool::ThreadPool(int num_threads) {
  if (num_threads <= 0) num_threads = static_cast<int>(std::thread::hardware_concurrency());
  num_threads = std::max(num_threads, 1);
  workers_.reserve(num_threads);
  for (int i = 0; i < num_threads; ++i) workers_.emplace_back([this, i] { WorkerLoop(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    stopping_flag_.store(true);
  }
  cv_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void ThreadPool::Schedule(std::function<void()> fn) {
  bool wake = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(fn));
    queued_.fetch_add(1, std::memory_order_release);
    // A spinning worker takes it without a wake-up; sleepers_ is read under the lock the
    // workers hold while they decide to sleep, so none is left sleeping on a task.
    wake = sleepers_ > 0;
  }
  if (wake) cv_.notify_one();
}

void ThreadPool::WorkerLoop(int index) {
  FlushDenormalsOnThisThread();  // workers only run kernels (platform/denormals.h)
  current_pool = this;
  current_index = index + 1;
  for (;;) {
    SpinUntil([this] { return queued_.load(std::memory_order_acquire) > 0 || stopping_flag_.load(); });
    std::function<void()> task;
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (queue_.empty() && !stopping_) {
        ++sleepers_;
        cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
        --sleepers_;
      }
      if (queue_.empty()) return;  // stopping, and the queue is drained
      task = std::move(queue_.front());
      queue_.pop_front();
      queued_.fetch_sub(1, std::memory_order_relaxed);
    }
    task();
  }
}

int ThreadPool::CurrentThreadId() const { return current_pool == this ? current_index : 0; }

void ThreadPool::ParallelFor(int64_t n, int64_t cost_per_item, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  const int64_t cost = std::max<int64_t>(cost_per_item, 1);
  // Total cost in units of kMinCostPerChunk, saturating instead of overflowing.
  const int64_t worth =
      cost >= kMinCostPerChunk ? n : (n >= INT64_MAX / cost ? INT64_MAX : n * cost) / kMinCostPerChunk;
  // A few chunks per thread balance uneven chunks without much overhead.
  const int64_t max_chunks = int64_t{4} * (num_threads() + 1);
  const int64_t num_chunks = std::min({n, worth, max_chunks});
  if (num_chunks <= 1 || (num_threads() <= 1 && current_pool == this)) {
    fn(0, n);
    return;
  }
  auto state = std::make_shared<ParallelForState>();
  const int64_t helpers = std::min<int64_t>(num_chunks - 1, num_threads());
  state->Start(n, num_chunks, static_cast<int>(helpers + 1), &fn);
  for (int64_t i = 0; i < helpers; ++i) {
    const int owner = static_cast<int>((i + 1) % state->owners);
    Schedule([state, owner] { state->RunChunks(owner); });
  }
  state->RunChunks(0);
  if (SpinUntil([&] { return state->done.load(std::memory_order_acquire) == n; })) return;
  std::unique_lock<std::mutex> lock(state->mu);
  state->cv.wait(lock, [&] { return state->done.load() == n; });
}

ParallelForFn ThreadPool::AsParallelForFn() {
  return [this](int64_t n, int64_t cost_per_item, const std::function<void(int64_t, int64_t)>& fn) {
    ParallelFor(n, cost_per_item, fn);
  };
}

}  // namespace tsr

// `ThreadPool`: a fixed set of worker threads with a FIFO task queue, and the
// `ParallelFor` that kernels see through KernelContext (kernels/kernel.h).
//
// ParallelFor splits [0, n) into chunks only when n * cost_per_item is large enough
// to pay for the hand-off; the calling thread takes chunks too, so a ParallelFor
// issued from inside a worker (a kernel run by the executor) always finishes even
// when every other worker is busy: nesting cannot deadlock.
//
// Idle workers, and a ParallelFor caller waiting for its helpers, spin for ~50 us before
// they sleep, so kernels a few microseconds apart hand off without a wake-up.
//
// Each participant of a ParallelFor (the caller, then its helpers in order) owns a
// contiguous share of the chunks and runs it first, taking the others' leftovers only
// after: threads that keep pace run the same share of every ParallelFor, so a kernel
// splitting its work as the kernel before it did reads from its own core's cache.
#ifndef TESSERA_RUNTIME_THREAD_POOL_H_
#define TESSERA_RUNTIME_THREAD_POOL_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "kernels/kernel.h"

namespace tsr {

class ThreadPool {
 public:
  // `num_threads` workers; 0 picks std::thread::hardware_concurrency() (at least 1).
  explicit ThreadPool(int num_threads = 0);
  ~ThreadPool();  // runs the queued tasks, then joins the workers
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return static_cast<int>(workers_.size()); }

  // Runs `fn` on a worker, some time later.
  void Schedule(std::function<void()> fn);

  // Runs fn(begin, end) over chunks covering [0, n) exactly once; returns when all are
  // done. Work below kMinCostPerChunk cycles in total runs inline in one call.
  void ParallelFor(int64_t n, int64_t cost_per_item, const std::function<void(int64_t, int64_t)>& fn);

  // This pool's ParallelFor as the kernels' callback type.
  ParallelForFn AsParallelForFn();

  // 1 + the worker's index on one of this pool's workers, 0 on any other thread.
  int CurrentThreadId() const;

  // Below this many (estimated) cycles a chunk is not worth a hand-off.
  static constexpr int64_t kMinCostPerChunk = 20000;

 private:
  void WorkerLoop(int index);

  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
  bool stopping_ = false;
  // Read without the lock by spinning workers: tasks queued, and stopping_.
  std::atomic<int64_t> queued_{0};
  std::atomic<bool> stopping_flag_{false};
  int sleepers_ = 0;  // workers waiting on cv_ (guarded by mu_)
};

}  // namespace tsr

#endif  // TESSERA_RUNTIME_THREAD_POOL_H_

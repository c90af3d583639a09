// RunOnEveryDevice and DeviceThreads (see device_threads.h).
#include "runtime/device_threads.h"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "platform/spin_wait.h"

namespace tsr {

namespace {

// The first failure in cause among the devices' results (see RunOnEveryDevice).
absl::Status FirstFailure(const std::vector<absl::Status>& results) {
  int failed = -1;
  for (int d = 0; d < static_cast<int>(results.size()); ++d) {
    if (results[d].ok()) continue;
    if (failed < 0 || (results[failed].code() == absl::StatusCode::kDeadlineExceeded &&
                       results[d].code() != absl::StatusCode::kDeadlineExceeded)) {
      failed = d;
    }
  }
  if (failed < 0) return absl::OkStatus();
  return absl::Status(results[failed].code(), absl::StrCat("device ", failed, ": ", results[failed].message()));
}

}  // namespace

absl::Status RunOnEveryDevice(int n, const std::function<absl::Status(int device)>& fn) {
  std::vector<absl::Status> results(n > 0 ? n : 0);
  std::vector<std::thread> threads;
  threads.reserve(n > 0 ? n - 1 : 0);
  for (int d = 1; d < n; ++d) threads.emplace_back([&, d] { results[d] = fn(d); });
  if (n > 0) results[0] = fn(0);
  for (std::thread& t : threads) t.join();
  return FirstFailure(results);
}

// What the caller and the device threads share; the threads hold it too, so that it
// outlives a thread still on its way to sleep when the object is destroyed.
struct DeviceThreads::Shared {
  std::mutex mu;
  std::condition_variable work_cv, done_cv;
  std::atomic<uint64_t> generation{0};  // bumped by every Run (and by the destructor)
  std::atomic<int> remaining{0};        // device threads still running this generation
  std::atomic<bool> stopping{false};
  const std::function<absl::Status(int)>* fn = nullptr;
  std::vector<absl::Status> results;
  std::vector<std::thread> threads;
};

DeviceThreads::DeviceThreads(int n) : n_(n > 0 ? n : 0), shared_(std::make_shared<Shared>()) {
  shared_->results.resize(n_);
  for (int d = 1; d < n_; ++d) {
    shared_->threads.emplace_back([shared = shared_, d] {
      uint64_t seen = 0;
      for (;;) {
        auto fresh = [&] { return shared->generation.load(std::memory_order_acquire) != seen; };
        if (!SpinUntil(fresh)) {
          std::unique_lock<std::mutex> lock(shared->mu);
          shared->work_cv.wait(lock, fresh);
        }
        seen = shared->generation.load(std::memory_order_acquire);
        if (shared->stopping.load()) return;
        shared->results[d] = (*shared->fn)(d);
        if (shared->remaining.fetch_sub(1, std::memory_order_acq_rel) == 1) {
          std::lock_guard<std::mutex> lock(shared->mu);
          shared->done_cv.notify_one();
        }
      }
    });
  }
}

DeviceThreads::~DeviceThreads() {
  {
    std::lock_guard<std::mutex> lock(shared_->mu);
    shared_->stopping = true;
    shared_->generation.fetch_add(1, std::memory_order_acq_rel);
  }
  shared_->work_cv.notify_all();
  for (std::thread& t : shared_->threads) t.join();
}

absl::Status DeviceThreads::Run(const std::function<absl::Status(int device)>& fn) {
  if (n_ == 0) return absl::OkStatus();
  Shared& s = *shared_;
  s.fn = &fn;
  s.remaining.store(n_ - 1, std::memory_order_relaxed);
  {
    // Under the lock: a thread deciding to sleep re-checks the generation under it.
    std::lock_guard<std::mutex> lock(s.mu);
    s.generation.fetch_add(1, std::memory_order_acq_rel);
  }
  s.work_cv.notify_all();
  s.results[0] = fn(0);
  auto all_done = [&] { return s.remaining.load(std::memory_order_acquire) == 0; };
  if (!SpinUntil(all_done)) {
    std::unique_lock<std::mutex> lock(s.mu);
    s.done_cv.wait(lock, all_done);
  }
  return FirstFailure(s.results);
}

}  // namespace tsr

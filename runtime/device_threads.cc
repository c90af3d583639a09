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

DeviceThreads::DeviceThreads(int n) : n_(n > 0 ? n : 0), results_(n_) {
  for (int d = 1; d < n_; ++d) threads_.emplace_back([this, d] { DeviceLoop(d); });
}

DeviceThreads::~DeviceThreads() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    generation_.fetch_add(1, std::memory_order_acq_rel);
  }
  work_cv_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void DeviceThreads::DeviceLoop(int d) {
  uint64_t seen = 0;
  for (;;) {
    auto fresh = [&] { return generation_.load(std::memory_order_acquire) != seen; };
    if (!SpinUntil(fresh)) {
      std::unique_lock<std::mutex> lock(mu_);
      work_cv_.wait(lock, fresh);
    }
    seen = generation_.load(std::memory_order_acquire);
    if (stopping_.load()) return;
    results_[d] = (*fn_)(d);
    if (remaining_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      std::lock_guard<std::mutex> lock(mu_);
      done_cv_.notify_one();
    }
  }
}

absl::Status DeviceThreads::Run(const std::function<absl::Status(int device)>& fn) {
  if (n_ == 0) return absl::OkStatus();
  fn_ = &fn;
  remaining_.store(n_ - 1, std::memory_order_relaxed);
  {
    // Under the lock: a thread deciding to sleep re-checks the generation under it.
    std::lock_guard<std::mutex> lock(mu_);
    generation_.fetch_add(1, std::memory_order_acq_rel);
  }
  work_cv_.notify_all();
  results_[0] = fn(0);
  auto all_done = [&] { return remaining_.load(std::memory_order_acquire) == 0; };
  if (!SpinUntil(all_done)) {
    std::unique_lock<std::mutex> lock(mu_);
    done_cv_.wait(lock, all_done);
  }
  return FirstFailure(results_);
}

}  // namespace tsr

// The prefetch thread and its bounded queue.
#include "runtime/data/prefetch.h"

#include <algorithm>
#include <utility>

namespace tsr {

Prefetcher::Prefetcher(std::function<std::optional<Batch>()> produce, int capacity)
    : produce_(std::move(produce)), capacity_(static_cast<size_t>(std::max(capacity, 1))), thread_([this] { Run(); }) {}

Prefetcher::~Prefetcher() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

std::optional<Batch> Prefetcher::Next() {
  std::unique_lock<std::mutex> lock(mu_);
  changed_.wait(lock, [this] { return !queue_.empty() || done_; });
  if (queue_.empty()) return std::nullopt;
  Batch batch = std::move(queue_.front());
  queue_.pop_front();
  lock.unlock();
  changed_.notify_all();  // room for the producer
  return batch;
}

void Prefetcher::Run() {
  while (true) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      changed_.wait(lock, [this] { return stop_ || queue_.size() < capacity_; });
      if (stop_) return;
    }
    // Produce outside the lock so the consumer can take queued batches meanwhile.
    std::optional<Batch> batch = produce_();
    const bool end = !batch.has_value();
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (end) {
        done_ = true;
      } else {
        queue_.push_back(*std::move(batch));
      }
    }
    changed_.notify_all();
    if (end) return;
  }
}

}  // namespace tsr

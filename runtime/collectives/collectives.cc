// ReduceOp names and CollectiveHandle, shared by every collectives backend.
#include "runtime/collectives/collectives.h"

#include <atomic>
#include <utility>

#include "absl/synchronization/mutex.h"

namespace tsr {

absl::string_view ReduceOpName(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
      return "sum";
    case ReduceOp::kMean:
      return "mean";
    case ReduceOp::kMax:
      return "max";
    case ReduceOp::kMin:
      return "min";
  }
  return "unknown";
}

bool IsReducibleDType(DType dtype) {
  return dtype == DType::kF32 || dtype == DType::kF64 || dtype == DType::kI32 || dtype == DType::kI64;
}

struct CollectiveHandle::State {
  absl::Mutex mu;
  // Set once, under mu, after `status`; read without mu by a waiter that finds the
  // operation complete (a small collective completes before Wait takes a lock).
  std::atomic<bool> done{false};
  absl::Status status;  // written once, under mu, before `done`
  absl::Time deadline = absl::InfiniteFuture();
  std::function<void()> on_deadline;
  std::function<void(bool wait)> progress;
};

CollectiveHandle CollectiveHandle::Ready(absl::Status status) {
  CollectiveHandle handle = Pending();
  handle.Complete(std::move(status));
  return handle;
}

CollectiveHandle CollectiveHandle::Pending(absl::Time deadline, std::function<void()> on_deadline,
                                           std::function<void(bool wait)> progress) {
  auto state = std::make_shared<State>();
  state->deadline = deadline;
  state->on_deadline = std::move(on_deadline);
  state->progress = std::move(progress);
  return CollectiveHandle(std::move(state));
}

absl::Status CollectiveHandle::Wait() const {
  State& s = *state_;
  if (!s.done.load(std::memory_order_acquire) && s.progress) s.progress(/*wait=*/true);
  if (s.done.load(std::memory_order_acquire)) return s.status;  // the common case once progress ran
  absl::MutexLock lock(&s.mu);
  auto done = [&s] { return s.done.load(std::memory_order_relaxed); };
  if (!s.mu.AwaitWithDeadline(absl::Condition(&done), s.deadline) && s.on_deadline) {
    // on_deadline completes this handle (or finds it completed), which takes s.mu.
    s.mu.Unlock();
    s.on_deadline();
    s.mu.Lock();
  }
  s.mu.Await(absl::Condition(&done));
  return s.status;
}

bool CollectiveHandle::Done() const {
  State& s = *state_;
  if (s.done.load(std::memory_order_acquire) || !s.progress) return s.done.load(std::memory_order_acquire);
  s.progress(/*wait=*/false);
  return s.done.load(std::memory_order_acquire);
}

void CollectiveHandle::Complete(absl::Status status) const {
  absl::MutexLock lock(&state_->mu);
  if (state_->done.load(std::memory_order_relaxed)) return;
  state_->status = std::move(status);
  state_->done.store(true, std::memory_order_release);
}

}  // namespace tsr

// ReduceOp names and CollectiveHandle, shared by every collectives backend.
#include "runtime/collectives/collectives.h"

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
  bool done ABSL_GUARDED_BY(mu) = false;
  absl::Status status ABSL_GUARDED_BY(mu);
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
  if (s.progress) {
    bool done;
    {
      absl::MutexLock lock(&s.mu);
      done = s.done;
    }
    if (!done) s.progress(/*wait=*/true);
  }
  absl::MutexLock lock(&s.mu);
  if (s.done) return s.status;  // the common case once progress ran
  auto done = [&s]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) { return s.done; };
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
  {
    absl::MutexLock lock(&state_->mu);
    if (state_->done || !state_->progress) return state_->done;
  }
  state_->progress(/*wait=*/false);
  absl::MutexLock lock(&state_->mu);
  return state_->done;
}

void CollectiveHandle::Complete(absl::Status status) const {
  absl::MutexLock lock(&state_->mu);
  if (state_->done) return;
  state_->done = true;
  state_->status = std::move(status);
}

}  // namespace tsr

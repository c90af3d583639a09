// GlooHealth (gloo_health.h): the first failure of a communicator, and its action.
#include "runtime/collectives/gloo/gloo_health.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace tsr {

absl::Status GlooHealth::Check(absl::string_view where) const {
  absl::MutexLock lock(&mu_);
  if (reason_.empty()) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(where, ": the communicator is unusable since ", reason_));
}

bool GlooHealth::poisoned() const {
  absl::MutexLock lock(&mu_);
  return !reason_.empty();
}

absl::Status GlooHealth::Poison(absl::Status failure) {
  std::function<void()> action;
  {
    absl::MutexLock lock(&mu_);
    if (!reason_.empty()) return failure;
    reason_ = std::string(failure.message());
    action = std::move(on_poison_);
  }
  if (action) action();
  return failure;
}

void GlooHealth::OnPoison(std::function<void()> action) {
  absl::MutexLock lock(&mu_);
  on_poison_ = std::move(action);
}

absl::Status GlooHealth::Failure(absl::string_view where, int rank, absl::Time deadline, absl::string_view timed_out,
                                 const std::exception& e) {
  // Gloo's own timer and ours may disagree by a few milliseconds.
  if (absl::Now() >= deadline - absl::Milliseconds(20)) {
    return Poison(absl::DeadlineExceededError(absl::StrCat(where, ": ", timed_out)));
  }
  return Poison(absl::UnavailableError(
      absl::StrCat(where, ": rank ", rank,
                   " lost its connections to the other ranks (a rank that gives up waiting closes them): ", e.what())));
}

}  // namespace tsr

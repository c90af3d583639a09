// Internals of the Gloo backend shared by its files: `GlooHealth`, whether a timeout or
// a lost connection has poisoned a communicator, and what the first failure does.
#ifndef TESSERA_RUNTIME_COLLECTIVES_GLOO_GLOO_HEALTH_H_
#define TESSERA_RUNTIME_COLLECTIVES_GLOO_GLOO_HEALTH_H_

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace tsr {

// Slot prefix of the backend's own messages over Gloo (Gloo's collectives use 0x01-0x08).
inline constexpr uint8_t kGlooReduceScatterSlot = 0x41;

// Gloo's waits take milliseconds; at least one, so that an expired deadline still waits
// (and fails) rather than waiting for Gloo's default.
inline std::chrono::milliseconds GlooMillis(absl::Duration d) {
  return std::chrono::milliseconds(std::max<int64_t>(1, absl::ToInt64Milliseconds(d)));
}

// Whether a communicator is still usable; the first failure that poisons it wins.
class GlooHealth {
 public:
  // OK while usable; otherwise FailedPrecondition "<where>: the communicator is
  // unusable since <first failure>".
  absl::Status Check(absl::string_view where) const;
  bool poisoned() const;
  // Records `failure` as the reason (if it is the first) and returns it; the first
  // time, runs the OnPoison action.
  absl::Status Poison(absl::Status failure);
  // What the first Poison does (once, on the thread that poisons, without locks held).
  void OnPoison(std::function<void()> action);
  // A Gloo wait threw: DeadlineExceeded "<where>: <timed_out>" when `deadline` has
  // passed, otherwise Unavailable (a peer closed its connections: it gave up on an
  // operation, or died). Poisons the communicator.
  absl::Status Failure(absl::string_view where, int rank, absl::Time deadline, absl::string_view timed_out,
                       const std::exception& e);

 private:
  mutable absl::Mutex mu_;
  std::string reason_ ABSL_GUARDED_BY(mu_);
  std::function<void()> on_poison_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tsr

#endif  // TESSERA_RUNTIME_COLLECTIVES_GLOO_GLOO_HEALTH_H_

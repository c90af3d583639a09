// Internals of the Gloo backend shared by its files: `GlooHealth`, whether a timeout or
// a lost connection has poisoned a communicator, and `GlooPointToPoint`, its Send/Recv
// half. A transfer runs on a thread of its own over unbound buffers: the sender's
// header (its descriptor), the receiver's acknowledgement (its own descriptor, accepted
// or not) and, when the two agree, the data, straight between the tensors' buffers. A
// rank's transfers to itself are matched in memory.
#ifndef TESSERA_RUNTIME_COLLECTIVES_GLOO_GLOO_POINT_TO_POINT_H_
#define TESSERA_RUNTIME_COLLECTIVES_GLOO_GLOO_POINT_TO_POINT_H_

#include <gloo/context.h>

#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "graph/tensor.h"
#include "runtime/collectives/collectives.h"

namespace tsr {

// Slot prefixes of the backend's own messages (Gloo's collectives use 0x01-0x08).
inline constexpr uint8_t kGlooDescriptorSlot = 0x40;
inline constexpr uint8_t kGlooReduceScatterSlot = 0x41;
inline constexpr uint8_t kGlooHeaderSlot = 0x42;
inline constexpr uint8_t kGlooAckSlot = 0x43;
inline constexpr uint8_t kGlooDataSlot = 0x44;

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

class GlooPointToPoint {
 public:
  GlooPointToPoint(std::shared_ptr<gloo::Context> context, std::shared_ptr<GlooHealth> health, absl::Duration timeout);
  // Transfers still waiting complete with Cancelled.
  ~GlooPointToPoint();

  GlooPointToPoint(const GlooPointToPoint&) = delete;
  GlooPointToPoint& operator=(const GlooPointToPoint&) = delete;

  CollectiveHandle Post(bool is_send, int peer, absl::string_view name, Tensor tensor);

 private:
  struct Transfer;
  class SelfChannel;

  absl::Status Run(Transfer& t);

  const std::shared_ptr<gloo::Context> context_;
  const std::shared_ptr<GlooHealth> health_;
  const int rank_;
  const absl::Duration timeout_;

  absl::Mutex mu_;
  std::map<std::pair<int, bool>, int64_t> next_seq_ ABSL_GUARDED_BY(mu_);  // by (peer, is_send)
  std::list<std::unique_ptr<Transfer>> transfers_ ABSL_GUARDED_BY(mu_);
  // Transfers from this rank to itself (shared with their handles' deadline callbacks).
  std::shared_ptr<SelfChannel> self_;
};

}  // namespace tsr

#endif  // TESSERA_RUNTIME_COLLECTIVES_GLOO_GLOO_POINT_TO_POINT_H_

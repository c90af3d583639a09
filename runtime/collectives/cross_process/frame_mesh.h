// FrameMesh: a full mesh of TCP connections on 127.0.0.1 between the ranks of one
// communicator, for the small frames every collective starts with (the descriptor
// exchange, and a small collective's data riding on it) and for larger data streamed
// between two ranks (consumed as it arrives, see the streamed Exchange). The thread
// that exchanges does the socket I/O itself and polls for up to kSpin, yielding the CPU
// between polls, before it sleeps in poll(): on this virtual machine a thread that
// sleeps takes ~50 us to wake, so a 4 KiB round trip costs ~110 us when both sides
// block and ~12 us when they spin -- and a message through Gloo's transport passes two
// such wake-ups on the receiving side alone (its device thread, then the waiter), after
// a ready-to-receive notification has made a round trip first. The spin is long because
// the ranks of a data-parallel step arrive at its collectives up to a millisecond or
// two apart on a noisy machine; yielding keeps it from starving a thread that shares
// the core.
//
// The connections come from ConnectLoopbackMesh (loopback_mesh.h), under the prefix
// "<prefix>/frames".
//
// Wire: a frame is its length (8 bytes, this machine's order) and its bytes. A rank that
// gives up on the communicator (Close) sends each peer an abort mark instead of a next
// frame before it shuts its connections down, so that a rank arriving late at the
// exchange the others gave up on fails (Unavailable) even though their frames for it
// have arrived; a mesh destroyed normally just closes.
#ifndef TESSERA_RUNTIME_COLLECTIVES_CROSS_PROCESS_FRAME_MESH_H_
#define TESSERA_RUNTIME_COLLECTIVES_CROSS_PROCESS_FRAME_MESH_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "runtime/launch/key_value_store.h"

namespace tsr {

class FrameMesh {
 public:
  // How long an exchange polls its sockets before it sleeps in poll().
  static constexpr absl::Duration kSpin = absl::Milliseconds(2);

  // Connects rank `rank` of `world_size` to every other rank (see above), waiting up to
  // `timeout`: DeadlineExceeded naming a rank that did not come. `prefix` must be new
  // in `store` (the communicator's name).
  static absl::StatusOr<std::unique_ptr<FrameMesh>> Connect(int rank, int world_size, KeyValueStore& store,
                                                            absl::string_view prefix, absl::Duration timeout);
  ~FrameMesh();

  FrameMesh(const FrameMesh&) = delete;
  FrameMesh& operator=(const FrameMesh&) = delete;

  // Sends `mine` to every other rank and receives one frame from each: rank q's lands at
  // theirs + q * capacity (theirs holds world_size * capacity bytes) and its length in
  // lengths[q]. One thread at a time. Returns
  //  - DeadlineExceeded when `deadline` passes first, with the ranks whose frame had not
  //    (wholly) arrived in *missing, in rank order;
  //  - Unavailable naming a rank whose connection closed or broke, or that gave up on
  //    the communicator (its abort mark came with or instead of its frame);
  //  - DataLoss naming a rank that sent a frame longer than `capacity`;
  //  - Cancelled once Close was called.
  // Any error leaves the mesh unusable (the streams are out of step); the caller closes it.
  absl::Status Exchange(absl::string_view mine, char* theirs, size_t capacity, std::vector<size_t>* lengths,
                        absl::Time deadline, std::vector<int>* missing);

  // How far a streamed exchange has come: the bytes of `mine` that every peer has been
  // sent, and the fewest bytes of its frame any peer has delivered.
  using OnProgress = std::function<void(size_t sent, size_t received)>;

  // Exchange for frames too large to wait for whole (a large all-reduce's tensor): rank
  // q's frame lands at into[q] (`capacity` bytes; this rank's entry is not used), and
  // `on_progress` is called after every pass over the streams that moved bytes -- the
  // last time with everything sent and received -- so that the caller can consume what
  // has arrived while the rest is under way (and may then overwrite what every peer has
  // been sent of `mine`). The thread polls for kSpin after the last bytes moved before it
  // sleeps in poll(), so a stream that keeps moving never waits for a wake-up.
  absl::Status Exchange(absl::string_view mine, absl::Span<char* const> into, size_t capacity,
                        std::vector<size_t>* lengths, absl::Time deadline, std::vector<int>* missing,
                        const OnProgress& on_progress);

  // Gives up on the mesh (any thread, more than once): an exchange under way returns
  // Cancelled; each peer is sent the abort mark (unless a frame to it is half sent) and
  // the connections are shut down.
  void Close();

 private:
  // The state of one peer's stream within an exchange.
  struct Peer {
    int fd = -1;
    size_t sent = 0;        // bytes of this exchange's header and frame written
    size_t send_total = 0;  // of the header and frame being sent
    size_t received = 0;    // bytes of the peer's header and frame read
    uint64_t header = 0;    // the incoming frame's length
  };

  FrameMesh(int rank, std::vector<Peer> peers, int wake_fd);

  // One non-blocking pass over every peer's stream; OK while no peer failed. *moved: any
  // bytes were sent or received.
  absl::Status Pump(absl::string_view mine, absl::Span<char* const> into, size_t capacity, std::vector<size_t>* lengths,
                    bool* finished, bool* moved);
  void AbortAndShutDown() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const int rank_;
  std::vector<Peer> peers_;  // by rank; this rank's entry has no fd
  const int wake_fd_;        // an eventfd that wakes an exchange sleeping in poll()
  std::vector<char*> into_;  // the plain Exchange's destinations, by rank

  std::atomic<bool> closing_ = false;  // Close was called (read while spinning)
  absl::Mutex mu_;
  bool exchanging_ ABSL_GUARDED_BY(mu_) = false;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  bool shut_down_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace tsr

#endif  // TESSERA_RUNTIME_COLLECTIVES_CROSS_PROCESS_FRAME_MESH_H_

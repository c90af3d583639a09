// StreamPointToPoint: Send and Recv between the ranks of one communicator over loopback
// TCP connections of its own (loopback_mesh.h), with one I/O thread per communicator
// doing every read and write. A transfer is three messages on its pair's stream: the
// sender's header (its descriptor), the receiver's acknowledgement (its own descriptor,
// accepted or not) once it has posted the matching Recv, then -- if accepted -- the
// data, read straight into the receiver's tensor. So the data moves only once both sides
// are posted and agree; a mismatch fails both sides with the same InvalidArgument and
// leaves the pair usable. A pair's transfers are matched in issue order, each direction
// on its own; a rank's transfers to itself are matched in memory.
//
// Latency: the I/O thread polls its sockets, yielding the CPU between polls, for kSpin
// after any activity before it sleeps in poll(), and a thread that waits for a transfer
// polls its completion likewise before it sleeps. On this virtual machine a sleeping
// thread takes ~50 us to wake, and a transfer's three messages and its completion would
// pay that four times (the Gloo transport's unbound buffers paid it for each message,
// after a ready-to-receive round trip, on a thread started per transfer).
//
// Failures: a transfer still unmatched or unfinished at its deadline fails with
// DeadlineExceeded naming what it waited for and poisons the communicator
// (Hooks::poison, whose owner then closes this transport among its connections); a
// connection that closes or breaks fails the transfers with that peer with Unavailable
// and poisons it too. After Close the connections are shut down: the transfers under way
// fail, and the peers' fail as their connections close.
#ifndef TESSERA_RUNTIME_COLLECTIVES_CROSS_PROCESS_STREAM_POINT_TO_POINT_H_
#define TESSERA_RUNTIME_COLLECTIVES_CROSS_PROCESS_STREAM_POINT_TO_POINT_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "graph/tensor.h"
#include "runtime/collectives/collectives.h"

namespace tsr {

class StreamPointToPoint {
 public:
  struct Hooks {
    // OK while the communicator is usable; otherwise the error to fail `where` with.
    std::function<absl::Status(absl::string_view where)> check;
    // Records a failure that makes the communicator unusable; returns it.
    std::function<absl::Status(absl::Status failure)> poison;
  };

  // How long the I/O thread, and a thread waiting for a transfer, poll before sleeping.
  static constexpr absl::Duration kSpin = absl::Milliseconds(2);

  // Takes the connected sockets by rank (ConnectLoopbackMesh's; -1 at `rank`).
  StreamPointToPoint(int rank, std::vector<int> fds, absl::Duration timeout, Hooks hooks);
  // Transfers still waiting complete with Cancelled.
  ~StreamPointToPoint();

  StreamPointToPoint(const StreamPointToPoint&) = delete;
  StreamPointToPoint& operator=(const StreamPointToPoint&) = delete;

  CollectiveHandle Post(bool is_send, int peer, absl::string_view name, Tensor tensor);

  // Shuts the connections down (any thread, more than once).
  void Close();

 private:
  struct Transfer;
  struct OutMessage;
  struct Peer;
  class SelfChannel;

  void Loop();
  void Start(const std::shared_ptr<Transfer>& t);
  void Match(int q);
  absl::Status Pump(int q, bool* activity);
  absl::Status Deliver(int q);
  void Finish(Transfer& t, absl::Status status);
  void FailPeer(int q, const absl::Status& why);
  void ExpireOverdue();
  void Wake();

  const int rank_;
  const int world_size_;
  const absl::Duration timeout_;
  const Hooks hooks_;
  const int wake_fd_;
  std::vector<Peer> peers_;                        // by rank; the I/O thread's alone
  std::vector<std::shared_ptr<Transfer>> active_;  // the I/O thread's alone
  std::shared_ptr<SelfChannel> self_;

  absl::Mutex mu_;
  std::map<std::pair<int, bool>, int64_t> next_seq_ ABSL_GUARDED_BY(mu_);  // by (peer, is_send)
  std::vector<std::shared_ptr<Transfer>> posted_ ABSL_GUARDED_BY(mu_);     // for the I/O thread
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread io_;  // last: starts once the members above exist
};

}  // namespace tsr

#endif  // TESSERA_RUNTIME_COLLECTIVES_CROSS_PROCESS_STREAM_POINT_TO_POINT_H_

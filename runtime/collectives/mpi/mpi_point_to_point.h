// `MpiPointToPoint`: the Send/Recv half of an MpiCollectives. Transfers are matched
// per (sender, receiver) pair in issue order and run as nonblocking messages on a
// communicator of their own, driven by one progress thread: the sender's header (its
// descriptor), the receiver's acknowledgement (its own descriptor, accepted or not) and,
// when both agree, the data, straight between the two tensors' buffers. A mismatch
// fails both sides with the same InvalidArgument and moves no data. Each side waits up
// to the timeout for the other.
#ifndef TESSERA_RUNTIME_COLLECTIVES_MPI_MPI_POINT_TO_POINT_H_
#define TESSERA_RUNTIME_COLLECTIVES_MPI_MPI_POINT_TO_POINT_H_

#include <mpi.h>

#include <cstdint>
#include <map>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "graph/tensor.h"
#include "runtime/collectives/collectives.h"

namespace tsr {

class MpiPointToPoint {
 public:
  // Takes `comm` (a duplicate used by nothing else) and frees it when destroyed.
  MpiPointToPoint(MPI_Comm comm, int rank, int world_size, absl::Duration timeout);
  // Transfers still waiting for their peer complete with Cancelled; those moving data
  // finish first (up to their deadline).
  ~MpiPointToPoint();

  MpiPointToPoint(const MpiPointToPoint&) = delete;
  MpiPointToPoint& operator=(const MpiPointToPoint&) = delete;

  // Posts a send of `tensor` to `peer` or a receive into it from `peer`.
  CollectiveHandle Post(bool is_send, int peer, absl::string_view name, Tensor tensor);

 private:
  struct Transfer;

  void Loop();
  void Start(Transfer& t);
  bool Advance(Transfer& t);
  void Expire(Transfer& t, absl::Status status);
  void PostData(Transfer& t);
  int Tag(int64_t seq, int part) const;

  const MPI_Comm comm_;
  const int rank_;
  const int world_size_;
  const absl::Duration timeout_;
  int tag_wrap_ = 1;

  absl::Mutex mu_;
  std::vector<std::unique_ptr<Transfer>> posted_ ABSL_GUARDED_BY(mu_);
  // Next sequence number per (peer, is_send).
  std::map<std::pair<int, bool>, int64_t> next_seq_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread progress_;  // last: starts once the members above exist
};

}  // namespace tsr

#endif  // TESSERA_RUNTIME_COLLECTIVES_MPI_MPI_POINT_TO_POINT_H_

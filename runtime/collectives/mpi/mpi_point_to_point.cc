// MpiPointToPoint: the header / acknowledgement / data protocol of Send and Recv and
// the progress thread that drives it.
#include "runtime/collectives/mpi/mpi_point_to_point.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "runtime/collectives/cross_process/collective_descriptor.h"
#include "runtime/collectives/mpi/mpi_process.h"

namespace tsr {
namespace {

using mpi_internal::ScopedMpiCall;

// Messages of one transfer, told apart by tag.
constexpr int kHeaderPart = 0;
constexpr int kAckPart = 1;
constexpr int kDataPart = 2;
// MPI counts are ints: larger tensors move in several messages of this size.
constexpr size_t kChunkBytes = size_t{1} << 30;

bool TestDone(MPI_Request* request) {
  if (*request == MPI_REQUEST_NULL) return true;
  int done = 0;
  MPI_Test(request, &done, MPI_STATUS_IGNORE);
  return done != 0;
}

}  // namespace

struct MpiPointToPoint::Transfer {
  enum class Stage { kNew, kHandshake, kData, kDone };

  bool is_send = false;
  int peer = 0;
  int64_t seq = 0;
  CollectiveDescriptor descriptor;
  Tensor tensor;
  CollectiveHandle handle = CollectiveHandle::Pending();
  absl::Time deadline;
  Stage stage = Stage::kNew;
  // Send: the header sent and the acknowledgement received; Recv: the other way round.
  std::unique_ptr<char[]> header = std::make_unique<char[]>(kDescriptorWireBytes);
  std::unique_ptr<char[]> ack = std::make_unique<char[]>(kDescriptorWireBytes);
  MPI_Request header_request = MPI_REQUEST_NULL;
  MPI_Request ack_request = MPI_REQUEST_NULL;
  std::vector<MPI_Request> data_requests;

  int src(int rank) const { return is_send ? rank : peer; }
  int dst(int rank) const { return is_send ? peer : rank; }
  // The request this side waits on before it knows whether the peer agrees.
  MPI_Request& handshake_request() { return is_send ? ack_request : header_request; }
  // "send 'x' rank 0 -> rank 1 (seq 3)"
  std::string Where(int rank) const {
    return absl::StrCat(is_send ? "send '" : "recv '", descriptor.name, "' rank ", src(rank), " -> rank ", dst(rank),
                        " (seq ", seq, ")");
  }
  bool AllRequestsDone() {
    if (!TestDone(&header_request) || !TestDone(&ack_request)) return false;
    for (MPI_Request& r : data_requests) {
      if (!TestDone(&r)) return false;
    }
    return true;
  }
};

MpiPointToPoint::MpiPointToPoint(MPI_Comm comm, int rank, int world_size, absl::Duration timeout)
    : comm_(comm), rank_(rank), world_size_(world_size), timeout_(timeout) {
  {
    ScopedMpiCall call;
    int* tag_ub = nullptr;
    int found = 0;
    MPI_Comm_get_attr(comm_, MPI_TAG_UB, &tag_ub, &found);
    tag_wrap_ = std::max(1, (found && tag_ub != nullptr ? *tag_ub : 32767) / 3);
  }
  progress_ = std::thread([this] { Loop(); });
}

MpiPointToPoint::~MpiPointToPoint() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  progress_.join();
  ScopedMpiCall call;
  MPI_Comm comm = comm_;
  MPI_Comm_free(&comm);
}

int MpiPointToPoint::Tag(int64_t seq, int part) const { return static_cast<int>(seq % tag_wrap_) * 3 + part; }

CollectiveHandle MpiPointToPoint::Post(bool is_send, int peer, absl::string_view name, Tensor tensor) {
  const absl::string_view verb = is_send ? "send" : "recv";
  if (peer < 0 || peer >= world_size_) {
    return CollectiveHandle::Ready(absl::InvalidArgumentError(absl::StrCat(
        verb, " '", name, "' on rank ", rank_, ": peer ", peer, " is not a rank of a world of size ", world_size_)));
  }
  auto t = std::make_unique<Transfer>();
  t->is_send = is_send;
  t->peer = peer;
  t->descriptor = MakeDescriptor(is_send ? CollectiveKind::kSend : CollectiveKind::kRecv, name, tensor.type());
  t->tensor = std::move(tensor);
  t->deadline = absl::Now() + timeout_;
  CollectiveHandle handle = t->handle;
  absl::MutexLock lock(&mu_);
  t->seq = next_seq_[{peer, is_send}]++;
  posted_.push_back(std::move(t));
  return handle;
}

void MpiPointToPoint::Start(Transfer& t) {
  // The header goes out (send) or is awaited (recv) at once; the acknowledgement is
  // awaited (send) or sent once the header is in (recv).
  EncodeDescriptor(t.descriptor, t.seq, t.header.get());
  if (t.is_send) {
    MPI_Isend(t.header.get(), kDescriptorWireBytes, MPI_BYTE, t.peer, Tag(t.seq, kHeaderPart), comm_,
              &t.header_request);
    MPI_Irecv(t.ack.get(), kDescriptorWireBytes, MPI_BYTE, t.peer, Tag(t.seq, kAckPart), comm_, &t.ack_request);
  } else {
    MPI_Irecv(t.header.get(), kDescriptorWireBytes, MPI_BYTE, t.peer, Tag(t.seq, kHeaderPart), comm_,
              &t.header_request);
  }
  t.stage = Transfer::Stage::kHandshake;
}

void MpiPointToPoint::PostData(Transfer& t) {
  char* data = static_cast<char*>(t.tensor.raw_data());
  const size_t bytes = t.tensor.num_bytes();
  for (size_t offset = 0; offset < bytes; offset += kChunkBytes) {
    const int n = static_cast<int>(std::min(kChunkBytes, bytes - offset));
    MPI_Request request;
    if (t.is_send) {
      MPI_Isend(data + offset, n, MPI_BYTE, t.peer, Tag(t.seq, kDataPart), comm_, &request);
    } else {
      MPI_Irecv(data + offset, n, MPI_BYTE, t.peer, Tag(t.seq, kDataPart), comm_, &request);
    }
    t.data_requests.push_back(request);
  }
  t.stage = Transfer::Stage::kData;
}

// One step of `t`'s protocol if its messages allow; whether anything happened.
bool MpiPointToPoint::Advance(Transfer& t) {
  switch (t.stage) {
    case Transfer::Stage::kNew:
      Start(t);
      return true;
    case Transfer::Stage::kHandshake: {
      if (!TestDone(&t.handshake_request())) return false;
      int64_t seq = 0;
      absl::StatusOr<CollectiveDescriptor> theirs = DecodeDescriptor(t.is_send ? t.ack.get() : t.header.get(), &seq);
      if (!theirs.ok()) {
        t.handle.Complete(absl::DataLossError(absl::StrCat(t.Where(rank_), ": ", theirs.status().message())));
        t.stage = Transfer::Stage::kDone;
        return true;
      }
      if (t.is_send) {
        if (theirs->accepted) {
          PostData(t);
        } else {
          absl::Status mismatch = CheckTransfer(rank_, t.peer, t.seq, t.descriptor, *theirs);
          if (mismatch.ok()) {
            mismatch = absl::InternalError(absl::StrCat(t.Where(rank_), ": the receiver refused a matching header"));
          }
          t.handle.Complete(mismatch);
          t.stage = Transfer::Stage::kDone;
        }
        return true;
      }
      absl::Status agreed = CheckTransfer(t.peer, rank_, t.seq, *theirs, t.descriptor);
      CollectiveDescriptor ack = t.descriptor;
      ack.accepted = agreed.ok();
      EncodeDescriptor(ack, t.seq, t.ack.get());
      MPI_Isend(t.ack.get(), kDescriptorWireBytes, MPI_BYTE, t.peer, Tag(t.seq, kAckPart), comm_, &t.ack_request);
      if (agreed.ok()) {
        PostData(t);
      } else {
        t.handle.Complete(agreed);
        t.stage = Transfer::Stage::kDone;
      }
      return true;
    }
    case Transfer::Stage::kData:
      for (MPI_Request& r : t.data_requests) {
        if (!TestDone(&r)) return false;
      }
      t.handle.Complete(absl::OkStatus());
      t.stage = Transfer::Stage::kDone;
      return true;
    case Transfer::Stage::kDone:
      return false;
  }
  return false;
}

// Gives up on `t`: a receive still waiting for its message is cancelled; requests that
// cannot be cancelled (sends, data in flight) stay with `t` until they finish.
void MpiPointToPoint::Expire(Transfer& t, absl::Status status) {
  MPI_Request& waiting = t.handshake_request();
  if (t.stage == Transfer::Stage::kHandshake && waiting != MPI_REQUEST_NULL) {
    MPI_Cancel(&waiting);
    MPI_Wait(&waiting, MPI_STATUS_IGNORE);
  }
  t.handle.Complete(std::move(status));
  t.stage = Transfer::Stage::kDone;
}

void MpiPointToPoint::Loop() {
  std::vector<std::unique_ptr<Transfer>> active;
  int idle_sweeps = 0;
  while (true) {
    bool stopping = false;
    {
      absl::MutexLock lock(&mu_);
      auto has_work = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_ || !posted_.empty(); };
      if (active.empty()) mu_.Await(absl::Condition(&has_work));
      for (std::unique_ptr<Transfer>& t : posted_) active.push_back(std::move(t));
      posted_.clear();
      stopping = stopping_;
    }
    bool progressed = false;
    {
      ScopedMpiCall call;
      const absl::Time now = absl::Now();
      for (std::unique_ptr<Transfer>& t : active) {
        while (Advance(*t)) progressed = true;
        if (t->stage == Transfer::Stage::kDone) continue;
        if (stopping && t->stage != Transfer::Stage::kData) {
          Expire(*t, absl::CancelledError(absl::StrCat("'", t->descriptor.name, "' rank ", t->src(rank_), " -> rank ",
                                                       t->dst(rank_), " (seq ", t->seq,
                                                       "): the communicator was destroyed")));
        } else if (now >= t->deadline) {
          const std::string what =
              t->stage == Transfer::Stage::kHandshake
                  ? absl::StrCat("rank ", t->peer, " did not post the matching ", t->is_send ? "recv" : "send")
                  : absl::StrCat("the data did not ", t->is_send ? "leave" : "arrive");
          Expire(*t, absl::DeadlineExceededError(
                         absl::StrCat(t->Where(rank_), ": ", what, " within ", absl::FormatDuration(timeout_))));
        }
      }
      // A finished transfer leaves once its last small message (header or
      // acknowledgement) is out; one that expired keeps its buffers until MPI is done
      // with them.
      auto finished = [](std::unique_ptr<Transfer>& t) {
        return t->stage == Transfer::Stage::kDone && t->AllRequestsDone();
      };
      const size_t before = active.size();
      active.erase(std::remove_if(active.begin(), active.end(), finished), active.end());
      progressed |= active.size() != before;
    }
    if (stopping && std::all_of(active.begin(), active.end(), [](const std::unique_ptr<Transfer>& t) {
          return t->stage == Transfer::Stage::kDone;
        })) {
      // Requests MPI never finished (a message to a peer that is gone) keep their
      // buffers: they are released to MPI, never freed.
      ScopedMpiCall call;
      for (std::unique_ptr<Transfer>& t : active) {
        for (MPI_Request* r : {&t->header_request, &t->ack_request}) {
          if (*r != MPI_REQUEST_NULL) MPI_Request_free(r);
        }
        for (MPI_Request& r : t->data_requests) {
          if (r != MPI_REQUEST_NULL) MPI_Request_free(&r);
        }
        new Tensor(t->tensor);  // intentionally leaked: MPI may still write it
        t.release();            // intentionally leaked with its header and ack
      }
      return;
    }
    // Poll hard while messages are moving, then back off to a few wakeups per
    // millisecond so that an idle wait costs little CPU.
    idle_sweeps = progressed ? 0 : idle_sweeps + 1;
    if (idle_sweeps > 200) {
      absl::SleepFor(absl::Microseconds(std::min(50 * (idle_sweeps - 200), 500)));
    } else if (idle_sweeps > 0) {
      std::this_thread::yield();
    }
  }
}

}  // namespace tsr

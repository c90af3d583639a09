// MpiCollectives: the communicator — its collective thread (descriptor exchange, then MPI's blocking collective on the
// tensors' buffers) and the watchdog that fails a collective whose data movement outlives the timeout.
#include "runtime/collectives/mpi/mpi_collectives.h"

#include <algorithm>
#include <climits>
#include <deque>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "graph/status_macros.h"
#include "runtime/collectives/cross_process/collective_descriptor.h"
#include "runtime/collectives/cross_process/described_collectives.h"
#include "runtime/collectives/cross_process/elementwise_reduce.h"
#include "runtime/collectives/mpi/mpi_point_to_point.h"
#include "runtime/collectives/mpi/mpi_process.h"

namespace tsr {

using mpi_internal::MpiStatus;
using mpi_internal::ScopedMpiCall;

namespace {

// Largest element count handed to one MPI call (counts are ints).
constexpr int64_t kMaxCount = int64_t{1} << 30;

// What one rank issued: the descriptor everyone sees, and the tensors (copies sharing
// the caller's buffers, which keeps those alive until the collective is done).
struct CollectiveCall {
  int64_t seq = 0;
  CollectiveDescriptor descriptor;
  Tensor input;  // AllReduce and Broadcast: the in/out tensor
  Tensor output;
  CollectiveHandle handle = CollectiveHandle::Pending();
};

MPI_Datatype MpiType(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return MPI_FLOAT;
    case DType::kF64:
      return MPI_DOUBLE;
    case DType::kI32:
      return MPI_INT32_T;
    case DType::kI64:
      return MPI_INT64_T;
    default:
      return MPI_DATATYPE_NULL;
  }
}

MPI_Op MpiOp(ReduceOp op) {
  switch (op) {
    case ReduceOp::kMax:
      return MPI_MAX;
    case ReduceOp::kMin:
      return MPI_MIN;
    default:
      return MPI_SUM;  // kMean divides afterwards
  }
}

// Bytes of one dim-0 row of `type` (0 for an empty row).
size_t RowBytes(const TensorType& type) {
  int64_t n = 1;
  for (int i = 1; i < type.shape.rank(); ++i) n *= type.shape.dim(i);
  return static_cast<size_t>(n) * DTypeSize(type.dtype);
}

// A datatype of one row, committed; freed with the object.
class RowType {
 public:
  explicit RowType(size_t row_bytes) {
    MPI_Type_contiguous(static_cast<int>(row_bytes), MPI_BYTE, &type_);
    MPI_Type_commit(&type_);
  }
  ~RowType() { MPI_Type_free(&type_); }
  MPI_Datatype get() const { return type_; }

 private:
  MPI_Datatype type_;
};

// The counts one MPI call takes are ints; every rank checks the same descriptors, so a
// collective too large for them fails the same way everywhere.
absl::Status CheckCounts(int64_t seq, absl::Span<const CollectiveDescriptor> all) {
  const CollectiveDescriptor& first = all[0];
  const std::string where = Where(first, seq);
  auto too_large = [&](absl::string_view what, int64_t n) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": ", what, " ", n, " exceeds the ", INT_MAX, " that one MPI call takes"));
  };
  switch (first.kind) {
    case CollectiveKind::kReduceScatter: {
      const int64_t n = first.input.shape.num_elements();
      if (n > INT_MAX) return too_large("element count", n);
      break;
    }
    case CollectiveKind::kAllGather:
    case CollectiveKind::kAllToAll: {
      if (RowBytes(first.input) > static_cast<size_t>(INT_MAX)) {
        return too_large("row size in bytes", static_cast<int64_t>(RowBytes(first.input)));
      }
      int64_t rows = 0;
      for (const CollectiveDescriptor& d : all) rows += d.input.shape.dim(0);
      if (rows > INT_MAX) return too_large("row count", rows);
      break;
    }
    default:
      break;  // AllReduce and Broadcast go in pieces
  }
  return absl::OkStatus();
}

class MpiCommunicator;

// The state the communicator's threads share; held by shared_ptr so that a thread stuck
// in MPI (see the header) can be left behind safely.
class MpiCommunicatorCore : public std::enable_shared_from_this<MpiCommunicatorCore> {
 public:
  MpiCommunicatorCore(MPI_Comm comm, int rank, int world_size, CollectivesOptions options)
      : comm_(comm), rank_(rank), world_size_(world_size), options_(options) {
    ScopedMpiCall mpi;
    int* tag_ub = nullptr;
    int found = 0;
    MPI_Comm_get_attr(comm_, MPI_TAG_UB, &tag_ub, &found);
    tag_wrap_ = std::max(1, found && tag_ub != nullptr ? *tag_ub : 32767);
  }

  void Start() {
    auto self = shared_from_this();
    worker_ = std::thread([self] { self->WorkerLoop(); });
    watchdog_ = std::thread([self] { self->WatchdogLoop(); });
  }

  // Runs the queued collectives, stops the threads and frees the communicator. A call
  // the watchdog gave up on gets one more timeout to return; if MPI still holds it, the
  // worker is left behind.
  void Shutdown() {
    {
      absl::MutexLock lock(&mu_);
      stopping_ = true;
      auto worker_done = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return worker_exited_ || stuck_; };
      mu_.Await(absl::Condition(&worker_done));
      auto exited = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return worker_exited_; };
      if (!worker_exited_) mu_.AwaitWithTimeout(absl::Condition(&exited), options_.timeout);
    }
    watchdog_.join();
    bool stuck;
    {
      absl::MutexLock lock(&mu_);
      stuck = stuck_ && !worker_exited_;
    }
    if (stuck) {
      worker_.detach();  // it holds the core; the communicator stays allocated
      return;
    }
    worker_.join();
    ScopedMpiCall call;
    // Sends a timed-out collective left behind are small: they leave as soon as their
    // peer's MPI makes progress, which it normally does within this grace period. Any
    // that have not are handed to MPI with their buffers, which are then never freed:
    // MPI may still read them.
    const absl::Time grace = absl::Now() + absl::Milliseconds(500);
    for (ParkedSends& parked : parked_) {
      int done = 0;
      while (true) {
        MPI_Testall(static_cast<int>(parked.requests.size()), parked.requests.data(), &done, MPI_STATUSES_IGNORE);
        if (done || absl::Now() >= grace) break;
        absl::SleepFor(absl::Milliseconds(1));
      }
      if (done) continue;
      for (MPI_Request& r : parked.requests) {
        if (r != MPI_REQUEST_NULL) MPI_Request_free(&r);
      }
      parked.buffer.release();
    }
    parked_.clear();
    MPI_Comm_free(&comm_);
    mpi_internal::RemoveLiveCommunicator();
  }

  int rank() const { return rank_; }
  int world_size() const { return world_size_; }

  bool poisoned() const {
    absl::MutexLock lock(&mu_);
    return !poison_.empty();
  }

  CollectiveHandle Issue(CollectiveCall call) {
    CollectiveHandle handle = call.handle;
    absl::MutexLock lock(&mu_);
    call.seq = next_seq_++;
    if (!poison_.empty()) {
      handle.Complete(PoisonedError(call));
      return handle;
    }
    queue_.push_back(std::move(call));
    return handle;
  }

 private:
  absl::Status PoisonedError(const CollectiveCall& call) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return absl::FailedPreconditionError(
        absl::StrCat(Where(call.descriptor, call.seq), ": the communicator is unusable since ", poison_));
  }

  void WorkerLoop() {
    while (true) {
      CollectiveCall call;
      {
        absl::MutexLock lock(&mu_);
        auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_ || !queue_.empty(); };
        mu_.Await(absl::Condition(&ready));
        if (queue_.empty()) {
          worker_exited_ = true;
          return;
        }
        call = std::move(queue_.front());
        queue_.pop_front();
        if (!poison_.empty()) {
          call.handle.Complete(PoisonedError(call));
          continue;
        }
      }
      call.handle.Complete(Run(call));
    }
  }

  absl::Status Run(const CollectiveCall& call) {
    std::vector<CollectiveDescriptor> all;
    TSR_RETURN_IF_ERROR(ExchangeDescriptors(call, &all));
    TSR_RETURN_IF_ERROR(CheckDescriptors(call.seq, all));
    TSR_RETURN_IF_ERROR(CheckCounts(call.seq, all));
    if (call.descriptor.kind == CollectiveKind::kBarrier) return absl::OkStatus();  // the exchange was one
    {
      absl::MutexLock lock(&mu_);
      watched_ = &call;
      watched_deadline_ = absl::Now() + options_.timeout;
      ++watch_generation_;
    }
    absl::Status status = MoveData(call, all);
    absl::MutexLock lock(&mu_);
    watched_ = nullptr;
    ++watch_generation_;
    stuck_ = false;  // if the watchdog gave up on the call, the handle holds its error already
    return status;
  }

  int DescriptorTag(int64_t seq) const { return static_cast<int>(seq % tag_wrap_); }

  // Sends this rank's descriptor to every other rank and waits (up to the timeout) for
  // theirs; `all` receives every rank's, by rank.
  absl::Status ExchangeDescriptors(const CollectiveCall& call, std::vector<CollectiveDescriptor>* all) {
    const std::string where = Where(call.descriptor, call.seq);
    const int tag = DescriptorTag(call.seq);
    const absl::Time start = absl::Now();
    const absl::Time deadline = start + options_.timeout;
    // On a timeout the sends may still be pending; their buffer then outlives this call.
    auto mine = std::make_unique<char[]>(kDescriptorWireBytes);
    EncodeDescriptor(call.descriptor, call.seq, mine.get());
    std::vector<char> theirs(static_cast<size_t>(world_size_) * kDescriptorWireBytes);
    std::vector<MPI_Request> requests(2 * world_size_, MPI_REQUEST_NULL);  // receives, then sends
    {
      ScopedMpiCall mpi;
      for (int q = 0; q < world_size_; ++q) {
        if (q == rank_) continue;
        MPI_Irecv(theirs.data() + q * kDescriptorWireBytes, kDescriptorWireBytes, MPI_BYTE, q, tag, comm_,
                  &requests[q]);
        MPI_Isend(mine.get(), kDescriptorWireBytes, MPI_BYTE, q, tag, comm_, &requests[world_size_ + q]);
      }
    }
    std::vector<int> indices(requests.size());
    int pending = 2 * (world_size_ - 1);
    for (int polls = 0; pending > 0; ++polls) {
      int count = 0;
      {
        ScopedMpiCall mpi;
        MPI_Testsome(static_cast<int>(requests.size()), requests.data(), &count, indices.data(), MPI_STATUSES_IGNORE);
      }
      if (count != MPI_UNDEFINED) pending -= count;
      if (pending == 0) break;
      const absl::Time now = absl::Now();
      if (now >= deadline) return GiveUp(call, where, std::move(mine), requests);
      // Ranks usually arrive within microseconds of each other: poll hard at first,
      // then yield, then sleep in short steps.
      const absl::Duration waited = now - start;
      if (waited > absl::Milliseconds(2)) {
        absl::SleepFor(std::min(absl::Microseconds(200), deadline - now));
      } else if (waited > absl::Microseconds(50)) {
        std::this_thread::yield();
      }
    }
    all->resize(world_size_);
    std::vector<int> abandoned;
    for (int q = 0; q < world_size_; ++q) {
      if (q == rank_) {
        (*all)[q] = call.descriptor;
        continue;
      }
      int64_t seq = 0;
      absl::StatusOr<CollectiveDescriptor> d = DecodeDescriptor(theirs.data() + q * kDescriptorWireBytes, &seq);
      if (!d.ok())
        return Poison(absl::DataLossError(absl::StrCat(where, ": from rank ", q, ": ", d.status().message())));
      if (seq != call.seq) {
        return Poison(absl::InternalError(absl::StrCat(where, ": rank ", q, " sent the descriptor of seq ", seq,
                                                       " (the communicator's ranks are out of step)")));
      }
      (*all)[q] = *std::move(d);
      // A rank that gave up on this collective before this one arrived said so with a
      // second message under the same tag.
      int flagged = 0;
      {
        ScopedMpiCall mpi;
        MPI_Iprobe(q, tag, comm_, &flagged, MPI_STATUS_IGNORE);
        if (flagged) {
          std::vector<char> notice(kDescriptorWireBytes);
          MPI_Recv(notice.data(), kDescriptorWireBytes, MPI_BYTE, q, tag, comm_, MPI_STATUS_IGNORE);
          int64_t notice_seq = 0;
          absl::StatusOr<CollectiveDescriptor> n = DecodeDescriptor(notice.data(), &notice_seq);
          if (n.ok() && n->abandoned) abandoned.push_back(q);
        }
      }
    }
    if (!abandoned.empty()) {
      return Poison(absl::DeadlineExceededError(absl::StrCat(
          where, ": rank", abandoned.size() > 1 ? "s " : " ", absl::StrJoin(abandoned, ", "), " of ", world_size_,
          " gave up waiting (timeout ", absl::FormatDuration(options_.timeout), ") before rank ", rank_, " arrived")));
    }
    return absl::OkStatus();
  }

  // The descriptor exchange timed out: cancels the receives still waiting, tells every
  // other rank that this one gave up, and poisons the communicator. The sends still in
  // flight (to ranks that may never take them) keep their buffers in `parked_`.
  absl::Status GiveUp(const CollectiveCall& call, const std::string& where, std::unique_ptr<char[]> mine,
                      std::vector<MPI_Request>& requests) {
    std::vector<int> missing;
    CollectiveDescriptor notice = call.descriptor;
    notice.abandoned = true;
    ParkedSends notices{std::make_unique<char[]>(kDescriptorWireBytes), {}};
    EncodeDescriptor(notice, call.seq, notices.buffer.get());
    ParkedSends descriptors{std::move(mine), {}};
    {
      ScopedMpiCall mpi;
      for (int q = 0; q < world_size_; ++q) {
        if (q == rank_) continue;
        if (requests[q] != MPI_REQUEST_NULL) {
          missing.push_back(q);
          MPI_Cancel(&requests[q]);
          MPI_Wait(&requests[q], MPI_STATUS_IGNORE);
        }
        if (requests[world_size_ + q] != MPI_REQUEST_NULL) descriptors.requests.push_back(requests[world_size_ + q]);
        MPI_Request request;
        MPI_Isend(notices.buffer.get(), kDescriptorWireBytes, MPI_BYTE, q, DescriptorTag(call.seq), comm_, &request);
        notices.requests.push_back(request);
      }
    }
    parked_.push_back(std::move(notices));
    if (!descriptors.requests.empty()) parked_.push_back(std::move(descriptors));
    return Poison(MissingRanksError(where, rank_, options_.timeout, missing, world_size_));
  }

  absl::Status Poison(absl::Status status) {
    absl::MutexLock lock(&mu_);
    if (poison_.empty()) poison_ = std::string(status.message());
    return status;
  }

  // The data movement of a checked collective, on the tensors' own buffers.
  absl::Status MoveData(const CollectiveCall& call, const std::vector<CollectiveDescriptor>& all) {
    const CollectiveDescriptor& d = call.descriptor;
    const std::string where = Where(d, call.seq);
    ScopedMpiCall mpi;
    switch (d.kind) {
      case CollectiveKind::kAllReduce: {
        Tensor inout = call.input;
        const size_t esize = DTypeSize(inout.dtype());
        char* data = static_cast<char*>(inout.raw_data());
        for (int64_t begin = 0; begin < inout.num_elements(); begin += kMaxCount) {
          const int n = static_cast<int>(std::min(kMaxCount, inout.num_elements() - begin));
          TSR_RETURN_IF_ERROR(MpiStatus(
              MPI_Allreduce(MPI_IN_PLACE, data + begin * esize, n, MpiType(inout.dtype()), MpiOp(d.reduce_op), comm_),
              absl::StrCat(where, ": MPI_Allreduce")));
        }
        if (d.reduce_op == ReduceOp::kMean) {
          DivideForMean(inout.dtype(), data, inout.num_elements(), world_size_);
        }
        return absl::OkStatus();
      }
      case CollectiveKind::kReduceScatter: {
        const int64_t rows = call.input.shape().dim(0);
        if (call.input.num_elements() == 0) return absl::OkStatus();
        const int64_t row_elems = call.input.num_elements() / rows;
        std::vector<int> counts(world_size_);
        for (int q = 0; q < world_size_; ++q) counts[q] = static_cast<int>(SplitRows(rows, world_size_, q) * row_elems);
        Tensor output = call.output;
        TSR_RETURN_IF_ERROR(MpiStatus(MPI_Reduce_scatter(call.input.raw_data(), output.raw_data(), counts.data(),
                                                         MpiType(d.input.dtype), MpiOp(d.reduce_op), comm_),
                                      absl::StrCat(where, ": MPI_Reduce_scatter")));
        if (d.reduce_op == ReduceOp::kMean) {
          DivideForMean(output.dtype(), output.raw_data(), output.num_elements(), world_size_);
        }
        return absl::OkStatus();
      }
      case CollectiveKind::kAllGather: {
        const size_t row_bytes = RowBytes(d.input);
        std::vector<int> counts(world_size_), displs(world_size_);
        int64_t total = 0;
        for (int q = 0; q < world_size_; ++q) {
          counts[q] = static_cast<int>(all[q].input.shape.dim(0));
          displs[q] = static_cast<int>(total);
          total += counts[q];
        }
        if (row_bytes == 0 || total == 0) return absl::OkStatus();
        RowType row(row_bytes);
        Tensor output = call.output;
        return MpiStatus(MPI_Allgatherv(call.input.raw_data(), counts[rank_], row.get(), output.raw_data(),
                                        counts.data(), displs.data(), row.get(), comm_),
                         absl::StrCat(where, ": MPI_Allgatherv"));
      }
      case CollectiveKind::kAllToAll: {
        const size_t row_bytes = RowBytes(d.input);
        const int64_t my_rows = d.input.shape.dim(0);
        std::vector<int> send_counts(world_size_), send_displs(world_size_), recv_counts(world_size_),
            recv_displs(world_size_);
        int64_t received = 0;
        for (int q = 0; q < world_size_; ++q) {
          send_counts[q] = static_cast<int>(SplitRows(my_rows, world_size_, q));
          send_displs[q] = static_cast<int>(SplitBegin(my_rows, world_size_, q));
          recv_counts[q] = static_cast<int>(SplitRows(all[q].input.shape.dim(0), world_size_, rank_));
          recv_displs[q] = static_cast<int>(received);
          received += recv_counts[q];
        }
        if (row_bytes == 0) return absl::OkStatus();
        RowType row(row_bytes);
        Tensor output = call.output;
        return MpiStatus(MPI_Alltoallv(call.input.raw_data(), send_counts.data(), send_displs.data(), row.get(),
                                       output.raw_data(), recv_counts.data(), recv_displs.data(), row.get(), comm_),
                         absl::StrCat(where, ": MPI_Alltoallv"));
      }
      case CollectiveKind::kBroadcast: {
        Tensor inout = call.input;
        char* data = static_cast<char*>(inout.raw_data());
        const int64_t bytes = static_cast<int64_t>(inout.num_bytes());
        for (int64_t begin = 0; begin < bytes; begin += kMaxCount) {
          const int n = static_cast<int>(std::min(kMaxCount, bytes - begin));
          TSR_RETURN_IF_ERROR(
              MpiStatus(MPI_Bcast(data + begin, n, MPI_BYTE, d.root, comm_), absl::StrCat(where, ": MPI_Bcast")));
        }
        return absl::OkStatus();
      }
      default:
        return absl::OkStatus();
    }
  }

  // Fails the collective whose data movement outlives the timeout. MPI cannot cancel
  // it: the call stays blocked on the worker, which then counts as stuck.
  void WatchdogLoop() {
    absl::MutexLock lock(&mu_);
    while (!worker_exited_) {
      if (stuck_) {
        auto released = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !stuck_ || stopping_ || worker_exited_; };
        mu_.Await(absl::Condition(&released));
        if (stuck_ && !worker_exited_) return;  // shutting down: Shutdown leaves the worker behind
        continue;
      }
      const int64_t generation = watch_generation_;
      auto changed = [this, generation]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return worker_exited_ || watch_generation_ != generation;
      };
      const absl::Time deadline = watched_ != nullptr ? watched_deadline_ : absl::InfiniteFuture();
      if (mu_.AwaitWithDeadline(absl::Condition(&changed), deadline) || watched_ == nullptr) continue;
      // The same call is still moving data at its deadline.
      const CollectiveCall& call = *watched_;
      const std::string where = Where(call.descriptor, call.seq);
      absl::Status error = absl::DeadlineExceededError(absl::StrCat(
          where, ": rank ", rank_, " waited ", absl::FormatDuration(options_.timeout),
          " for the data movement after every rank had arrived (a rank may have died); MPI cannot cancel it"));
      call.handle.Complete(error);
      if (poison_.empty()) poison_ = std::string(error.message());
      stuck_ = true;
      // The worker is held by MPI: fail what it would have run.
      for (CollectiveCall& queued : queue_) queued.handle.Complete(PoisonedError(queued));
      queue_.clear();
    }
  }

  // Sends of descriptors and notices that were still in flight when a collective timed
  // out, with their buffer (worker only; Shutdown after the worker is gone).
  struct ParkedSends {
    std::unique_ptr<char[]> buffer;
    std::vector<MPI_Request> requests;
  };
  std::vector<ParkedSends> parked_;

  MPI_Comm comm_;
  const int rank_;
  const int world_size_;
  const CollectivesOptions options_;
  int tag_wrap_ = 1;

  mutable absl::Mutex mu_;
  std::deque<CollectiveCall> queue_ ABSL_GUARDED_BY(mu_);
  int64_t next_seq_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool worker_exited_ ABSL_GUARDED_BY(mu_) = false;
  // Why the communicator is unusable ("" while it is usable).
  std::string poison_ ABSL_GUARDED_BY(mu_);
  // The collective whose data is moving, and until when it may.
  const CollectiveCall* watched_ ABSL_GUARDED_BY(mu_) = nullptr;
  absl::Time watched_deadline_ ABSL_GUARDED_BY(mu_);
  int64_t watch_generation_ ABSL_GUARDED_BY(mu_) = 0;  // changes when watched_ does
  // The watchdog gave up on the watched call, which has not returned.
  bool stuck_ ABSL_GUARDED_BY(mu_) = false;
  std::thread worker_;
  std::thread watchdog_;
};

class MpiCommunicator final : public DescribedCollectives<MpiCollectives> {
 public:
  MpiCommunicator(std::shared_ptr<MpiCommunicatorCore> core, std::unique_ptr<MpiPointToPoint> p2p)
      : core_(std::move(core)), p2p_(std::move(p2p)) {}
  ~MpiCommunicator() override {
    core_->Shutdown();
    p2p_.reset();
  }

  int rank() const override { return core_->rank(); }
  int world_size() const override { return core_->world_size(); }
  bool poisoned() const override { return core_->poisoned(); }

  CollectiveHandle Send(const Tensor& input, int peer, absl::string_view name) override {
    return p2p_->Post(/*is_send=*/true, peer, name, input);
  }
  CollectiveHandle Recv(Tensor& output, int peer, absl::string_view name) override {
    return p2p_->Post(/*is_send=*/false, peer, name, output);
  }

 private:
  CollectiveHandle Issue(CollectiveDescriptor descriptor, const Tensor& input, const Tensor& output) override {
    CollectiveCall call;
    call.descriptor = std::move(descriptor);
    call.input = input;
    call.output = output;
    return core_->Issue(std::move(call));
  }

  std::shared_ptr<MpiCommunicatorCore> core_;
  std::unique_ptr<MpiPointToPoint> p2p_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<MpiCollectives>> MpiCollectives::Create(CollectivesOptions options, MPI_Comm comm) {
  TSR_RETURN_IF_ERROR(InitializeMpi().status());
  MPI_Comm collectives_comm = MPI_COMM_NULL;
  MPI_Comm p2p_comm = MPI_COMM_NULL;
  int rank = 0;
  int world_size = 0;
  {
    ScopedMpiCall mpi;
    TSR_RETURN_IF_ERROR(MpiStatus(MPI_Comm_dup(comm, &collectives_comm), "MpiCollectives: MPI_Comm_dup"));
    TSR_RETURN_IF_ERROR(MpiStatus(MPI_Comm_dup(comm, &p2p_comm), "MpiCollectives: MPI_Comm_dup"));
    // Errors come back as codes (and become statuses) instead of aborting the job.
    MPI_Comm_set_errhandler(collectives_comm, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(p2p_comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(collectives_comm, &rank);
    MPI_Comm_size(collectives_comm, &world_size);
  }
  mpi_internal::AddLiveCommunicator();
  auto core = std::make_shared<MpiCommunicatorCore>(collectives_comm, rank, world_size, options);
  core->Start();
  return std::unique_ptr<MpiCollectives>(new MpiCommunicator(
      std::move(core), std::make_unique<MpiPointToPoint>(p2p_comm, rank, world_size, options.timeout)));
}

}  // namespace tsr

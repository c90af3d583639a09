// MpiCollectives: the communicator — its collective thread (descriptor exchange, then MPI's blocking collective on the
// tensors' buffers) and the watchdog that fails a collective whose data movement outlives the timeout.
#include "runtime/collectives/mpi/mpi_collectives.h"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <deque>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "graph/status_macros.h"
#include "runtime/collectives/cross_process/collective_descriptor.h"
#include "runtime/collectives/cross_process/described_collectives.h"
#include "runtime/collectives/cross_process/elementwise_reduce.h"
#include "runtime/collectives/mpi/mpi_exchange.h"
#include "runtime/collectives/mpi/mpi_point_to_point.h"
#include "runtime/collectives/mpi/mpi_process.h"
#include "runtime/collectives/mpi/mpi_shared_memory_exchange.h"

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
  std::optional<CollectiveHandle> handle;  // set by Issue
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
  auto too_large = [&](absl::string_view what, int64_t n) {
    return absl::InvalidArgumentError(
        absl::StrCat(Where(first, seq), ": ", what, " ", n, " exceeds the ", INT_MAX, " that one MPI call takes"));
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

// The largest tag `comm` takes (at least 1).
int TagUpperBound(MPI_Comm comm) {
  ScopedMpiCall mpi;
  int* tag_ub = nullptr;
  int found = 0;
  MPI_Comm_get_attr(comm, MPI_TAG_UB, &tag_ub, &found);
  return std::max(1, found && tag_ub != nullptr ? *tag_ub : 32767);
}

// The state the communicator's threads share; held by shared_ptr so that a thread stuck
// in MPI (see the header) can be left behind safely.
class MpiCommunicatorCore : public std::enable_shared_from_this<MpiCommunicatorCore> {
 public:
  // Collectives take tags [0, tag_wrap); tag_wrap itself (MPI_TAG_UB) carries the
  // message exchange's notices.
  MpiCommunicatorCore(MPI_Comm comm, int rank, int world_size, int tag_wrap, CollectivesOptions options,
                      std::unique_ptr<mpi_internal::CollectiveExchange> exchange)
      : comm_(comm),
        rank_(rank),
        world_size_(world_size),
        options_(options),
        tag_wrap_(tag_wrap),
        exchange_(std::move(exchange)) {}

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
      worker_wake_.Signal();
      watchdog_wake_.Signal();
      while (!worker_exited_ && !stuck_) exit_wake_.Wait(&mu_);
      const absl::Time give_up = absl::Now() + options_.timeout;
      while (!worker_exited_ && !exit_wake_.WaitWithDeadline(&mu_, give_up)) {
      }
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
    exchange_->Close();
    // Sends a timed-out collective left behind are small: they leave as soon as their
    // peer's MPI makes progress, which it normally does within this grace period. Any
    // that have not are handed to MPI with their buffers, which are then never freed:
    // MPI may still read them.
    const absl::Time grace = absl::Now() + absl::Milliseconds(500);
    for (mpi_internal::ParkedRequests& parked : parked_) {
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
      for (std::unique_ptr<char[]>& buffer : parked.buffers) buffer.release();
      // MPI may still read an eager payload's tensor: a reference to it is never dropped.
      if (parked.tensor.valid()) new Tensor(std::move(parked.tensor));
    }
    parked_.clear();
    MPI_Comm_free(&comm_);
    mpi_internal::RemoveLiveCommunicator();
  }

  int rank() const { return rank_; }
  int world_size() const { return world_size_; }
  bool shared_memory() const { return exchange_->shared_memory(); }

  bool poisoned() const {
    absl::MutexLock lock(&mu_);
    return !poison_.empty();
  }

  // Has the worker finish the inline call, if one is running (as a poll of it does).
  void HandOverInline() {
    absl::MutexLock lock(&mu_);
    if (running_) {
      handover_ = true;
      worker_wake_.Signal();
    }
  }

  // Queues `call` for the communicator's thread -- or, when nothing is queued or
  // running, posts its exchange right here and leaves the rest to the thread that waits
  // for it (its handle's progress): an eager all-reduce's reduction, or MPI's collective
  // on that thread, as a plain MPI_Allreduce call would run. No hand-over between
  // threads then: waking the worker and then the waiter cost ~10 us on this machine,
  // 10-25% of a 64 KiB-1 MiB all-reduce. The worker still finishes an inline call
  // when a collective is queued behind it or when its handle is polled (Done) rather
  // than waited for, or when the rank posts a Send or Recv (HandOverInline), so
  // collectives issued in a row overlap the caller's computation.
  CollectiveHandle Issue(CollectiveCall call) {
    // drive_mu_ is held only while a call is inline (and then this one queues): Issue
    // never waits for it, it does not block.
    const bool may_drive = drive_mu_.TryLock();
    std::optional<CollectiveHandle> handle;
    bool go_inline = false;
    {
      absl::MutexLock lock(&mu_);
      call.seq = next_seq_++;
      if (poison_.empty() && may_drive && !running_ && queue_.empty()) {
        running_ = go_inline = true;
      } else {
        handle = call.handle = NewHandle(call.seq);
        if (!poison_.empty()) {
          handle->Complete(PoisonedError(call));
        } else {
          queue_.push_back(std::move(call));
          worker_wake_.Signal();
        }
      }
    }
    if (go_inline) {
      // The messages leave first (the other ranks wait for them), the handle is made
      // while they travel: nobody else moves the inline call while this thread holds
      // drive_mu_.
      inline_.emplace(std::move(call), *this);
      inline_->exchange.Post();
      handle = inline_->call.handle = NewHandle(inline_->call.seq);
    }
    if (may_drive) drive_mu_.Unlock();
    return *std::move(handle);
  }

 private:
  // A collective on its way: the call and its exchange, which is the communicator's one
  // (exchange_), owned by the call while running_. Not moved while it runs (the exchange
  // reads its input in place).
  struct RunningCall {
    RunningCall(CollectiveCall c, MpiCommunicatorCore& core) : call(std::move(c)), exchange(*core.exchange_) {
      exchange.Start(core.DescriptorTag(call.seq), call.seq, call.descriptor, call.input, core.options_.timeout);
    }
    RunningCall(const RunningCall&) = delete;
    RunningCall& operator=(const RunningCall&) = delete;
    CollectiveCall call;
    mpi_internal::CollectiveExchange& exchange;
  };

  // The handle of call `seq`: its waiter or poller moves the call forward when it is
  // inline (DriveInline).
  CollectiveHandle NewHandle(int64_t seq) {
    return CollectiveHandle::Pending(absl::InfiniteFuture(), nullptr, [weak = weak_from_this(), seq](bool wait) {
      if (std::shared_ptr<MpiCommunicatorCore> core = weak.lock()) {
        core->DriveInline(seq, wait);
      }
    });
  }

  absl::Status PoisonedError(const CollectiveCall& call) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return absl::FailedPreconditionError(
        absl::StrCat(Where(call.descriptor, call.seq), ": the communicator is unusable since ", poison_));
  }

  // Moves inline call `seq` forward (the thread that waits for it or polls it): with
  // `wait` to its end, otherwise one poll. Nothing when another call is inline. A poll
  // never blocks: it returns at once when another thread is moving the call, and a poll of
  // a call that moves its data with MPI's blocking collective hands the call to the worker
  // instead. Nor does anyone wait behind the worker once it has taken the call over (see
  // FinishInlineOnWorker): the handle completes when the worker or the watchdog completes
  // it, and MPI's call may never return.
  void DriveInline(int64_t seq, bool wait) {
    if (wait) {
      drive_mu_.Lock();
    } else if (!drive_mu_.TryLock()) {
      return;
    }
    if (!inline_.has_value() || inline_on_worker_ || inline_->call.seq != seq) {
      drive_mu_.Unlock();
      return;
    }
    if (!wait && !inline_->exchange.eager()) {
      drive_mu_.Unlock();
      absl::MutexLock lock(&mu_);
      handover_ = true;
      worker_wake_.Signal();
      return;
    }
    absl::StatusOr<bool> done = inline_->exchange.Progress(wait, &parked_);
    if (done.ok() && !*done) {
      drive_mu_.Unlock();
      return;
    }
    CompleteInline(done.ok() ? Finish(*inline_, /*on_worker=*/false) : Poison(done.status()));
    drive_mu_.Unlock();
  }

  // The worker finishes the inline call that nobody waits for yet (it holds up what was
  // queued behind it or the shutdown), or that a poll handed over. It moves the call
  // without drive_mu_: its waiters and pollers see inline_on_worker_ and leave it alone.
  void FinishInlineOnWorker() {
    {
      absl::MutexLock drive(&drive_mu_);
      if (!inline_.has_value() || inline_on_worker_) return;  // finished meanwhile
      inline_on_worker_ = true;
    }
    RunningCall& running = *inline_;
    absl::StatusOr<bool> done = running.exchange.Progress(/*wait=*/true, &parked_);
    absl::Status status = done.ok() ? Finish(running, /*on_worker=*/true) : Poison(done.status());
    absl::MutexLock drive(&drive_mu_);
    inline_on_worker_ = false;
    CompleteInline(std::move(status));
  }

  // Ends the inline call, which completed with `status`.
  void CompleteInline(absl::Status status) ABSL_EXCLUSIVE_LOCKS_REQUIRED(drive_mu_) {
    const CollectiveHandle handle = *inline_->call.handle;
    inline_->exchange.End();  // before the next call may start it
    inline_.reset();
    {
      // Free for the next call before the handle completes: its waiter may issue one at once.
      absl::MutexLock lock(&mu_);
      running_ = false;
    }
    handle.Complete(std::move(status));
  }

  void WorkerLoop() {
    while (true) {
      CollectiveCall call;
      {
        absl::MutexLock lock(&mu_);
        while (!stopping_ && queue_.empty() && !handover_) worker_wake_.Wait(&mu_);
        if (running_) {
          // An inline call nobody waits for yet holds up what was queued behind it (or the
          // shutdown), or was handed over by a poll: the worker finishes it.
          handover_ = false;
          mu_.Unlock();
          FinishInlineOnWorker();
          mu_.Lock();
          continue;
        }
        handover_ = false;  // the call handed over finished meanwhile
        if (queue_.empty()) {
          if (!stopping_) continue;
          worker_exited_ = true;
          watchdog_wake_.Signal();
          exit_wake_.Signal();
          return;
        }
        call = std::move(queue_.front());
        queue_.pop_front();
        if (!poison_.empty()) {
          call.handle->Complete(PoisonedError(call));
          continue;
        }
        running_ = true;
      }
      RunningCall running(std::move(call), *this);
      absl::Status status = Run(running);
      running.exchange.End();
      {
        absl::MutexLock lock(&mu_);
        running_ = false;
      }
      running.call.handle->Complete(std::move(status));
    }
  }

  // A queued call, on the worker: the exchange, then the rest (Finish).
  absl::Status Run(RunningCall& running) {
    running.exchange.Post();
    absl::StatusOr<bool> done = running.exchange.Progress(/*wait=*/true, &parked_);
    if (!done.ok()) return Poison(done.status());
    return Finish(running, /*on_worker=*/true);
  }

  // A call whose exchange completed: the eager reduction, or the checks and (unless a
  // barrier) MPI's collective on the tensors' buffers, watched by the watchdog.
  absl::Status Finish(RunningCall& running, bool on_worker) {
    const CollectiveCall& call = running.call;
    if (running.exchange.eager()) return FinishEager(running);
    const std::vector<CollectiveDescriptor>& all = running.exchange.descriptors();
    TSR_RETURN_IF_ERROR(CheckDescriptors(call.seq, all));
    TSR_RETURN_IF_ERROR(CheckCounts(call.seq, all));
    if (call.descriptor.kind == CollectiveKind::kBarrier) return absl::OkStatus();  // the exchange was one
    if (call.descriptor.kind == CollectiveKind::kAllReduce && running.exchange.moves_all_reduces()) {
      // The board moves the data itself, and fails by its own deadline (no watchdog: it is
      // never stuck inside MPI).
      Tensor inout = call.input;
      absl::Status status = running.exchange.MoveAllReduce(inout, call.descriptor.reduce_op);
      return status.ok() ? status : Poison(std::move(status));
    }
    {
      absl::MutexLock lock(&mu_);
      watched_ = &call;
      watched_on_worker_ = on_worker;
      watched_deadline_ = absl::Now() + options_.timeout;
      ++watch_generation_;
      if (watchdog_idle_) watchdog_wake_.Signal();
    }
    absl::Status status = MoveData(call, all);
    absl::MutexLock lock(&mu_);
    watched_ = nullptr;
    ++watch_generation_;
    if (stuck_) {
      stuck_ = false;  // the watchdog gave up on the call: the handle holds its error already
      watchdog_wake_.Signal();
    }
    return status;
  }

  // An eager all-reduce whose exchange completed: every rank's tensor is here, reduced in
  // rank order so that every rank computes the same bits.
  absl::Status FinishEager(RunningCall& running) {
    const CollectiveCall& call = running.call;
    TSR_RETURN_IF_ERROR(CheckDescriptors(call.seq, running.exchange.descriptors()));
    Tensor inout = call.input;
    ReduceInRankOrder(
        inout.dtype(), call.descriptor.reduce_op, world_size_, rank_,
        [&](int q) -> const void* { return running.exchange.payload(q); }, inout.raw_data(),
        rank_ > 1 ? running.exchange.scratch(inout.num_bytes()) : nullptr, static_cast<size_t>(inout.num_elements()));
    return absl::OkStatus();
  }

  int DescriptorTag(int64_t seq) const { return static_cast<int>(seq % tag_wrap_); }

  absl::Status Poison(absl::Status status) {
    absl::MutexLock lock(&mu_);
    if (poison_.empty()) poison_ = std::string(status.message());
    return status;
  }

  // The data movement of a checked collective, on the tensors' own buffers.
  absl::Status MoveData(const CollectiveCall& call, const std::vector<CollectiveDescriptor>& all) {
    const CollectiveDescriptor& d = call.descriptor;
    // The error of a failed MPI call (its message built only then).
    auto checked = [&](int code, absl::string_view function) {
      return code == MPI_SUCCESS ? absl::OkStatus() : MpiStatus(code, absl::StrCat(Where(d, call.seq), ": ", function));
    };
    ScopedMpiCall mpi;
    switch (d.kind) {
      case CollectiveKind::kAllReduce: {
        Tensor inout = call.input;
        const size_t esize = DTypeSize(inout.dtype());
        char* data = static_cast<char*>(inout.raw_data());
        for (int64_t begin = 0; begin < inout.num_elements(); begin += kMaxCount) {
          const int n = static_cast<int>(std::min(kMaxCount, inout.num_elements() - begin));
          TSR_RETURN_IF_ERROR(checked(
              MPI_Allreduce(MPI_IN_PLACE, data + begin * esize, n, MpiType(inout.dtype()), MpiOp(d.reduce_op), comm_),
              "MPI_Allreduce"));
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
        TSR_RETURN_IF_ERROR(checked(MPI_Reduce_scatter(call.input.raw_data(), output.raw_data(), counts.data(),
                                                       MpiType(d.input.dtype), MpiOp(d.reduce_op), comm_),
                                    "MPI_Reduce_scatter"));
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
        return checked(MPI_Allgatherv(call.input.raw_data(), counts[rank_], row.get(), output.raw_data(), counts.data(),
                                      displs.data(), row.get(), comm_),
                       "MPI_Allgatherv");
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
        return checked(MPI_Alltoallv(call.input.raw_data(), send_counts.data(), send_displs.data(), row.get(),
                                     output.raw_data(), recv_counts.data(), recv_displs.data(), row.get(), comm_),
                       "MPI_Alltoallv");
      }
      case CollectiveKind::kBroadcast: {
        Tensor inout = call.input;
        char* data = static_cast<char*>(inout.raw_data());
        const int64_t bytes = static_cast<int64_t>(inout.num_bytes());
        for (int64_t begin = 0; begin < bytes; begin += kMaxCount) {
          const int n = static_cast<int>(std::min(kMaxCount, bytes - begin));
          TSR_RETURN_IF_ERROR(checked(MPI_Bcast(data + begin, n, MPI_BYTE, d.root, comm_), "MPI_Bcast"));
        }
        return absl::OkStatus();
      }
      default:
        return absl::OkStatus();
    }
  }

  // Fails the collective whose data movement outlives the timeout. MPI cannot cancel
  // it: the call stays blocked on the worker, which then counts as stuck. The watchdog
  // sleeps until the deadline of the call it watches, not woken by the calls that start
  // and finish meanwhile (two wake-ups per collective cost more than a small all-reduce):
  // at that deadline it moves on to the call moving data then, if any, or waits for one.
  //
  // It and the worker wait on condition variables signalled where what they wait for
  // changes, not on conditions of mu_: every release of mu_ would evaluate those (about a
  // tenth of a small all-reduce's instructions, the issuing thread locking mu_ twice).
  void WatchdogLoop() {
    absl::MutexLock lock(&mu_);
    while (!worker_exited_) {
      if (stuck_) {
        while (stuck_ && !stopping_ && !worker_exited_) watchdog_wake_.Wait(&mu_);
        if (stuck_ && !worker_exited_) return;  // shutting down: Shutdown leaves the worker behind
        continue;
      }
      if (watched_ == nullptr) {
        watchdog_idle_ = true;
        while (!worker_exited_ && watched_ == nullptr) watchdog_wake_.Wait(&mu_);
        watchdog_idle_ = false;
        continue;
      }
      const int64_t generation = watch_generation_;
      const absl::Time deadline = watched_deadline_;
      while (!worker_exited_ && !watchdog_wake_.WaitWithDeadline(&mu_, deadline)) {
      }
      if (worker_exited_) continue;
      if (watched_ == nullptr || watch_generation_ != generation) continue;  // it finished; watch the current one
      // The same call is still moving data at its deadline.
      const CollectiveCall& call = *watched_;
      const std::string where = Where(call.descriptor, call.seq);
      absl::Status error = absl::DeadlineExceededError(absl::StrCat(
          where, ": rank ", rank_, " waited ", absl::FormatDuration(options_.timeout),
          " for the data movement after every rank had arrived (a rank may have died); MPI cannot cancel it"));
      if (!watched_on_worker_) {
        // The thread that waits for the call is inside MPI and will never see its handle
        // fail: as PyTorch's NCCL watchdog does, take the job down, saying why.
        std::fprintf(stderr, "tessera: %s; ending the job (MPI_Abort)\n", std::string(error.message()).c_str());
        std::fflush(stderr);
        MPI_Abort(comm_, 1);
      }
      call.handle->Complete(error);
      if (poison_.empty()) poison_ = std::string(error.message());
      stuck_ = true;
      exit_wake_.Signal();
      // The worker is held by MPI: fail what it would have run.
      for (CollectiveCall& queued : queue_) queued.handle->Complete(PoisonedError(queued));
      queue_.clear();
    }
  }

  // Requests of exchanges that gave up, still in flight (the thread running a call;
  // Shutdown after the worker is gone).
  std::vector<mpi_internal::ParkedRequests> parked_;

  MPI_Comm comm_;
  const int rank_;
  const int world_size_;
  const CollectivesOptions options_;
  const int tag_wrap_;
  // The exchange of the running call (one at a time: see running_), kept between calls.
  const std::unique_ptr<mpi_internal::CollectiveExchange> exchange_;

  mutable absl::Mutex mu_;
  std::deque<CollectiveCall> queue_ ABSL_GUARDED_BY(mu_);
  int64_t next_seq_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool worker_exited_ ABSL_GUARDED_BY(mu_) = false;
  // Why the communicator is unusable ("" while it is usable).
  std::string poison_ ABSL_GUARDED_BY(mu_);
  // The collective whose data is moving, and until when it may.
  const CollectiveCall* watched_ ABSL_GUARDED_BY(mu_) = nullptr;
  bool watched_on_worker_ ABSL_GUARDED_BY(mu_) = true;  // false: on the thread waiting for it
  absl::Time watched_deadline_ ABSL_GUARDED_BY(mu_);
  int64_t watch_generation_ ABSL_GUARDED_BY(mu_) = 0;  // changes when watched_ does
  // A call is running: on the worker, or inline (posted by Issue, finished by DriveInline).
  bool running_ ABSL_GUARDED_BY(mu_) = false;
  // A poll handed the inline call to the worker.
  bool handover_ ABSL_GUARDED_BY(mu_) = false;
  // Serializes the threads that move the inline call forward; taken before mu_.
  absl::Mutex drive_mu_;
  std::optional<RunningCall> inline_ ABSL_GUARDED_BY(drive_mu_);
  // The worker moves the inline call (FinishInlineOnWorker), without drive_mu_.
  bool inline_on_worker_ ABSL_GUARDED_BY(drive_mu_) = false;
  // The watchdog gave up on the watched call, which has not returned.
  bool stuck_ ABSL_GUARDED_BY(mu_) = false;
  // The watchdog waits for a call to move data (watched_ is null).
  bool watchdog_idle_ ABSL_GUARDED_BY(mu_) = false;
  // Wake the worker (queue_, handover_, stopping_), the watchdog (watched_ set while it
  // is idle, stuck_ cleared, stopping_, worker_exited_) and Shutdown (worker_exited_,
  // stuck_ set).
  absl::CondVar worker_wake_, watchdog_wake_, exit_wake_;
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
  bool shared_memory() const override { return core_->shared_memory(); }

  // A rank about to wait on a point-to-point transfer first hands its inline collective
  // (if any) to the worker: the peer may send only once that collective has finished.
  CollectiveHandle Send(const Tensor& input, int peer, absl::string_view name) override {
    core_->HandOverInline();
    return p2p_->Post(/*is_send=*/true, peer, name, input);
  }
  CollectiveHandle Recv(Tensor& output, int peer, absl::string_view name) override {
    core_->HandOverInline();
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
  const int tag_wrap = TagUpperBound(collectives_comm);
  absl::StatusOr<std::unique_ptr<mpi_internal::CollectiveExchange>> exchange =
      mpi_internal::MakeExchange(collectives_comm, rank, world_size, /*notice_tag=*/tag_wrap);
  if (!exchange.ok()) {
    ScopedMpiCall mpi;
    MPI_Comm_free(&collectives_comm);
    MPI_Comm_free(&p2p_comm);
    return exchange.status();
  }
  mpi_internal::AddLiveCommunicator();
  auto core = std::make_shared<MpiCommunicatorCore>(collectives_comm, rank, world_size, tag_wrap, options,
                                                    *std::move(exchange));
  core->Start();
  return std::unique_ptr<MpiCollectives>(new MpiCommunicator(
      std::move(core), std::make_unique<MpiPointToPoint>(p2p_comm, rank, world_size, options.timeout)));
}

absl::StatusOr<std::unique_ptr<MpiCollectives>> MpiCollectives::CreateSplit(CollectivesOptions options, int color,
                                                                            int key, MPI_Comm comm) {
  if (color < 0) return absl::InvalidArgumentError(absl::StrCat("MpiCollectives: split colour ", color, " < 0"));
  TSR_RETURN_IF_ERROR(InitializeMpi().status());
  MPI_Comm split = MPI_COMM_NULL;
  {
    ScopedMpiCall mpi;
    TSR_RETURN_IF_ERROR(MpiStatus(MPI_Comm_split(comm, color, key, &split), "MpiCollectives: MPI_Comm_split"));
  }
  absl::StatusOr<std::unique_ptr<MpiCollectives>> created = Create(options, split);
  ScopedMpiCall mpi;
  MPI_Comm_free(&split);  // Create duplicated it
  return created;
}

}  // namespace tsr

// The MPI collectives backend: one process per rank (started by `mpirun`, or any
// launcher MPI accepts), data moved by the MPI library — shared memory between the
// processes of one machine, the network between machines.
//
//   TSR_ASSIGN_OR_RETURN(MpiProcessInfo mpi, InitializeMpi());
//   TSR_ASSIGN_OR_RETURN(std::unique_ptr<MpiCollectives> comm, MpiCollectives::Create({}));
//   TSR_RETURN_IF_ERROR(comm->AllReduceSync(grad, ReduceOp::kSum, "grad/w1"));
//   comm.reset();
//   TSR_RETURN_IF_ERROR(FinalizeMpi());
//
// How the contract in collectives.h is kept:
//  - Each communicator runs its collectives one at a time in issue order. A collective
//    issued while the communicator is idle starts on the issuing thread and is finished
//    by the thread that waits for it, as a plain MPI call would be (no hand-over between
//    threads: waking a worker and then the waiter cost ~10 us, 10-25% of a 64 KiB-1 MiB
//    all-reduce); the communicator's own thread finishes it instead when another
//    collective is queued behind it or when its handle is polled (Done) rather than
//    waited for, and runs whatever was queued. A collective starts with a descriptor
//    exchange (mpi_exchange.h): every rank gives a small description of what it issued
//    (op, reduce op, name, dtype, shapes, root; see collective_descriptor.h) to every
//    other rank and polls for the others' until the timeout -- on a shared-memory board
//    when every rank runs on this machine (mpi_shared_memory_exchange.h; the environment
//    variable TESSERA_MPI_SHARED_MEMORY=0 turns it off), in nonblocking point-to-point
//    messages otherwise. So every rank learns exactly which ranks did not arrive
//    (DeadlineExceeded naming them), every rank checks the same descriptors (a mismatch is
//    the same InvalidArgument everywhere, and leaves the communicator usable), and uneven
//    all-gathers and all-to-alls know every rank's row count. A barrier is the exchange
//    alone.
//  - A small all-reduce (at most kEagerAllReduceBytes = 128 KiB sent per rank;
//    mpi_exchange.h) goes eagerly: its tensor travels with its descriptor -- in the rank's
//    slot of the board, or in messages small enough for Open MPI's shared-memory fast path
//    (beyond 28 KiB the rest in one message that Open MPI copies once between the
//    processes) -- and every rank reduces what it received, where it lies, in rank order
//    ((x0 op x1) op x2 ...), the same bits on every rank: one message latency.
//  - A larger all-reduce on the board moves through it, chunk by chunk: every rank reduces
//    its share of each chunk in rank order from every rank's copy, then takes the other
//    shares (the same bits on every rank), failing by its own deadline if a rank stops.
//  - Otherwise the data moves with MPI's blocking collective on the tensors' own buffers
//    (MPI_Allreduce in place, MPI_Reduce_scatter, MPI_Allgatherv and MPI_Alltoallv with
//    one row as the datatype, MPI_Bcast): the library's tuned algorithms, which its
//    nonblocking forms do not use. Means are sums divided afterwards.
//  - Send/Recv run on a second thread as nonblocking messages on a communicator of their
//    own: the sender's header (its descriptor), the receiver's acknowledgement (its own
//    descriptor, accepted or not) and, when the two agree, the data. Both sides report a
//    mismatch with the same InvalidArgument; the data never moves then. Either side may
//    post first; each waits up to the timeout for the other.
//
// Timeouts and what they leave behind (MPI cannot cancel a collective in progress):
//  - A rank whose descriptor exchange times out cancels its receives, tells every rank
//    that it gave up (on the board, or in a notice under a tag of its own, which every
//    rank has a receive posted for; a rank that arrives late then fails at once instead
//    of starting the data movement alone, and one whose collective completed before the
//    notice came fails its next) and fails with DeadlineExceeded naming the missing
//    ranks.
//  - If the data movement itself does not finish within the timeout (a rank died, or
//    arrived so late that it missed the notice above), the handle fails with
//    DeadlineExceeded; the MPI call stays blocked on the communicator's thread and
//    still owns the tensors' buffers (they are kept alive). When the blocked call is on
//    the thread that waits for it, that thread can never see the failure: the
//    communicator prints the error and ends the job with MPI_Abort, as PyTorch's NCCL
//    watchdog takes a stalled process down.
//  - Either way the communicator is poisoned: its later collectives fail at once with
//    FailedPrecondition naming the collective that timed out. A communicator whose MPI
//    call is stuck cannot be freed (destroying the object leaves its thread behind) and
//    MPI cannot be finalized cleanly: end the process (MPI_Abort). A Send or Recv that
//    times out fails alone and does not poison the communicator; if the peer posts its
//    side later, that side times out as well.
//
// Threading: InitializeMpi asks for MPI_THREAD_MULTIPLE (Open MPI provides it). A
// library that only offers MPI_THREAD_SERIALIZED still works: every MPI call of the
// process is then serialized through one process-wide lock, so a blocking collective
// holds up every other communicator's MPI calls until it returns.
#ifndef TESSERA_RUNTIME_COLLECTIVES_MPI_MPI_COLLECTIVES_H_
#define TESSERA_RUNTIME_COLLECTIVES_MPI_MPI_COLLECTIVES_H_

#include <mpi.h>

#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/collectives/collectives.h"

namespace tsr {

enum class MpiThreading {
  kMultiple,    // ask for MPI_THREAD_MULTIPLE; fall back to serializing if not provided
  kSerialized,  // ask for MPI_THREAD_SERIALIZED and serialize (for tests of the fallback)
};

struct MpiProcessInfo {
  int world_rank = 0;
  int world_size = 1;
  bool thread_multiple = false;  // false: MPI calls are serialized process-wide
};

// Initializes MPI once per process (MPI_Init_thread); later calls return the same
// information whatever they ask. When MPI was initialized by someone else, adopts it at
// the thread level it provides and leaves finalizing to them. FailedPrecondition when
// MPI was finalized already or provides less than MPI_THREAD_SERIALIZED.
absl::StatusOr<MpiProcessInfo> InitializeMpi(MpiThreading threading = MpiThreading::kMultiple);

// Finalizes MPI if InitializeMpi initialized it (otherwise does nothing). Every
// MpiCollectives must be destroyed first: FailedPrecondition otherwise (also when one
// of them was left with an MPI call stuck by a timeout). If the process exits without
// calling it, MPI is finalized at exit when no MpiCollectives is left.
absl::Status FinalizeMpi();

class MpiCollectives : public Collectives {
 public:
  // A communicator over the processes of `comm` (duplicated, so its traffic never mixes
  // with the caller's): a collective call over `comm`, to be made by each of its
  // processes at the same point. Initializes MPI if needed. Destroying the object waits
  // for the collectives it has issued; Sends and Recvs still waiting for their peer
  // complete with Cancelled.
  static absl::StatusOr<std::unique_ptr<MpiCollectives>> Create(CollectivesOptions options,
                                                                MPI_Comm comm = MPI_COMM_WORLD);
  // A communicator over the processes of `comm` that pass the same `color`, ranked by
  // `key` (MPI_Comm_split): one group of a device mesh whose devices are processes
  // (collective_groups.h's MeshGroup index and rank). A collective call over `comm`.
  static absl::StatusOr<std::unique_ptr<MpiCollectives>> CreateSplit(CollectivesOptions options, int color, int key,
                                                                     MPI_Comm comm = MPI_COMM_WORLD);

  // Whether a timeout has poisoned the communicator (its collectives fail at once).
  virtual bool poisoned() const = 0;

  // Whether the ranks exchange descriptors and small all-reduces' tensors on a
  // shared-memory board (every rank on this machine; see the header comment) rather than
  // in MPI messages.
  virtual bool shared_memory() const = 0;
};

}  // namespace tsr

#endif  // TESSERA_RUNTIME_COLLECTIVES_MPI_MPI_COLLECTIVES_H_

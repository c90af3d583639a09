// The Gloo collectives backend: one process per rank, data over Gloo's TCP transport on
// the loopback interface (every socket binds and connects to 127.0.0.1 only). The ranks
// find each other through a KeyValueStore (runtime/launch/key_value_store.h: the
// launcher's TCP store, or a FileKeyValueStore on a shared directory), where each
// publishes its listening addresses.
//
//   FileKeyValueStore store(directory);  // or the launcher's TcpKeyValueStore
//   TSR_ASSIGN_OR_RETURN(std::unique_ptr<GlooCollectives> comm,
//                        GlooCollectives::Create(rank, world_size, store, "main", {}));
//   TSR_RETURN_IF_ERROR(comm->AllReduceSync(grad, ReduceOp::kSum, "grad/w1"));
//
// How the contract in collectives.h is kept:
//  - Each communicator runs its collectives in issue order, on a thread of its own or on
//    the thread that waits for one when that thread comes first. A collective starts
//    with a descriptor exchange over the frame mesh (cross_process/frame_mesh.h: TCP
//    connections of our own beside Gloo's, which the exchanging thread reads itself,
//    spinning briefly before it sleeps): every rank sends a fixed-size description of
//    what it issued (op, reduce op, name, dtype, shapes, root; see
//    cross_process/collective_descriptor.h) to every other rank and waits for theirs
//    until the timeout. So every rank learns which ranks did not arrive (DeadlineExceeded
//    naming them), every rank checks the same descriptors (a mismatch is the same
//    InvalidArgument everywhere and leaves the communicator usable), and uneven
//    all-gathers and all-to-alls know every rank's row count. A barrier is the exchange
//    alone.
//  - A small collective (every input at most 256 KiB / (W-1) bytes; a broadcast's root's)
//    travels inside the exchange: each rank takes its result from the frames, reducing
//    every rank's copy in rank order for all-reduce and reduce-scatter. That saves
//    Gloo's rounds of messages, each of which costs its transport's wake-ups.
//  - A larger collective between two ranks streams over the frame mesh: each rank sends
//    the other what it needs (the whole tensor of an all-reduce, the other's rows of a
//    reduce-scatter or all-to-all, its input to an all-gather, a broadcast's root its
//    tensor) from the tensor's own buffer, received straight into the output where no
//    reduction needs it beside the rank's own input, into scratch where one does. Reduced
//    in rank order as the bytes arrive; an all-reduce in place, never past what the rank
//    has already sent (the bytes a ring would send, in one round instead of two). Its
//    deadline is the communicator's timeout, like the exchange's.
//  - Otherwise (three or more ranks) the data moves on the tensors' own buffers, with
//    Gloo's per-operation timeout: all-reduce is Gloo's pipelined ring
//    (gloo::allreduce, Algorithm::RING) in place; reduce-scatter a ring of W-1 steps
//    over unbound buffers that sends each rank's partial sums of one block to the next
//    (its rows by SplitBegin's rule land in the output, nothing else is gathered);
//    all-gather gloo::allgatherv, all-to-all gloo::alltoallv and broadcast
//    gloo::broadcast with byte counts taken from the descriptors. Means are sums
//    divided afterwards.
//  - Send/Recv run over point-to-point streams of their own
//    (cross_process/stream_point_to_point.h: loopback TCP connections beside Gloo's, one
//    I/O thread): the sender's header (its descriptor), the receiver's acknowledgement
//    (its own descriptor, accepted or not), then, when the two agree, the data. Both
//    sides report a mismatch with the same InvalidArgument; the data never moves then.
//
// Timeouts: when a wait times out, the rank closes every connection of the communicator
// (Gloo's TCP pairs, the frame mesh and the point-to-point streams cannot be
// resynchronized). So any timeout — of a collective or of a
// Send/Recv — poisons the communicator: the rank that timed out fails with
// DeadlineExceeded (for a collective, naming the ranks that did not arrive), its later
// operations fail at once with FailedPrecondition, and the other ranks see their
// connections closed: their pending and later operations fail at once with Unavailable
// (a rank that arrives late at the collective that timed out fails this way too).
#ifndef TESSERA_RUNTIME_COLLECTIVES_GLOO_GLOO_COLLECTIVES_H_
#define TESSERA_RUNTIME_COLLECTIVES_GLOO_GLOO_COLLECTIVES_H_

#include <memory>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/collectives/collectives.h"
#include "runtime/launch/key_value_store.h"

namespace tsr {

class GlooCollectives : public Collectives {
 public:
  // Joins the communicator `name` as rank `rank` of `world_size`: publishes this rank's
  // addresses in `store` under keys that start with `name` + "/", and connects to every
  // other rank, waiting up to `options.timeout` for them (DeadlineExceeded naming a rank
  // that did not come). Every rank of the communicator makes the same call; `name` must
  // be new in `store` (one store serves many communicators). `store` is used only here.
  // Sets SIGPIPE to be ignored, process-wide, unless the program handles it already: a
  // write to a peer that closed its connection must fail with an error, not kill the
  // process (Gloo writes without MSG_NOSIGNAL).
  static absl::StatusOr<std::unique_ptr<GlooCollectives>> Create(int rank, int world_size, KeyValueStore& store,
                                                                 absl::string_view name, CollectivesOptions options);

  // Whether a timeout or a lost connection has poisoned the communicator.
  virtual bool poisoned() const = 0;
};

}  // namespace tsr

#endif  // TESSERA_RUNTIME_COLLECTIVES_GLOO_GLOO_COLLECTIVES_H_

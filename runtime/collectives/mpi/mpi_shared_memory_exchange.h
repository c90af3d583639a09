// The descriptor exchange on a shared-memory board, for a communicator whose ranks all run
// on this machine: each rank writes its descriptor (and an eager all-reduce's tensor) into
// a slot of its own in one segment every rank maps, then publishes the collective's
// sequence number; the others read it there. No message, no copy through MPI's queues: a
// small all-reduce is one copy into the slot and a reduction that reads the other ranks'
// slots where they lie. Larger all-reduces move through the board too, chunk by chunk
// (MoveAllReduce: a reduce-scatter and a gather through each rank's two chunk buffers).
//
// The board, one region per rank, written only by its rank:
//  - `published`: how many collectives the rank has published (seq + 1 of the last one);
//  - `gave_up`: seq + 1 of the collective the rank gave up on (0: none), which every rank
//    reads while it waits -- the board's form of the message exchange's notices;
//  - two slots, collective seq in slot seq % 2: the encoded descriptor, then the payload.
//    A rank writes slot seq % 2 for collective seq only after finishing collective
//    seq - 1, which it could only finish once every rank had published seq - 1, i.e. had
//    finished collective seq - 2, the last reader of that slot: the slots need no further
//    handshake;
//  - two chunk buffers and three counters of the chunks the rank has put in, reduced its
//    piece of, and taken whole; a rank refills a buffer once every rank has taken the
//    chunk before from it.
//
// What it leaves alone: point-to-point transfers (mpi_point_to_point.h) and the data
// movement of the other collectives (reduce-scatter, all-gather, all-to-all, broadcast:
// MPI's own calls) still go through MPI.
#ifndef TESSERA_RUNTIME_COLLECTIVES_MPI_MPI_SHARED_MEMORY_EXCHANGE_H_
#define TESSERA_RUNTIME_COLLECTIVES_MPI_MPI_SHARED_MEMORY_EXCHANGE_H_

#include <mpi.h>

#include <memory>

#include "absl/status/statusor.h"
#include "runtime/collectives/mpi/mpi_exchange.h"

namespace tsr {
namespace mpi_internal {

// The exchange for a new communicator over `comm` (a collective call over it): the
// shared-memory board when every rank of `comm` runs on this machine, the environment
// does not say otherwise (TESSERA_MPI_SHARED_MEMORY=0) and every rank mapped the board;
// MPI messages (MessageExchange, whose notices go under `notice_tag`) otherwise. Every
// rank takes the same one. InvalidArgument for a TESSERA_MPI_SHARED_MEMORY that is not 0
// or 1 (after the ranks agreed on messages, so that none is left waiting).
absl::StatusOr<std::unique_ptr<CollectiveExchange>> MakeExchange(MPI_Comm comm, int rank, int world_size,
                                                                 int notice_tag);

}  // namespace mpi_internal
}  // namespace tsr

#endif  // TESSERA_RUNTIME_COLLECTIVES_MPI_MPI_SHARED_MEMORY_EXCHANGE_H_

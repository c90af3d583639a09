// The in-process collectives backend: the ranks are threads of one process, each
// standing for a virtual CPU device cpu:0..N-1, and data moves through shared memory —
// each rank reads the other ranks' buffers directly, no staging copy.
//
//   auto comm = InProcessCommunicator::Create(4, CollectivesOptions{});
//   // on thread r:
//   std::unique_ptr<Collectives> c = comm->ForRank(r);
//   TSR_RETURN_IF_ERROR(c->AllReduceSync(grad, ReduceOp::kSum, "grad/w1"));
//
// Each rank's Collectives object runs its collectives in issue order on a thread of its
// own, so issuing never blocks and several collectives can be in flight. A collective
// first waits (up to the timeout) for every rank to arrive with its description, then
// every rank checks the descriptions the same way (so all report the same mismatch),
// then each rank does its share of the work: in an all-reduce rank r reduces its part of
// every rank's buffer and writes the result into every rank's buffer (a reduce-scatter
// and an all-gather in one pass), so the reduction is spread over the ranks. Send/Recv are
// matched on the calling threads: whichever side comes second copies the data.
#ifndef TESSERA_RUNTIME_COLLECTIVES_IN_PROCESS_COLLECTIVES_H_
#define TESSERA_RUNTIME_COLLECTIVES_IN_PROCESS_COLLECTIVES_H_

#include <memory>

#include "absl/status/statusor.h"
#include "runtime/collectives/collectives.h"

namespace tsr {

class InProcessCommunicator : public std::enable_shared_from_this<InProcessCommunicator> {
 public:
  // `world_size` >= 1; InvalidArgument otherwise.
  static absl::StatusOr<std::shared_ptr<InProcessCommunicator>> Create(int world_size, CollectivesOptions options);
  virtual ~InProcessCommunicator() = default;

  virtual int world_size() const = 0;
  // Rank `rank`'s Collectives, or nullptr when `rank` is not in [0, world_size()). It
  // holds the communicator alive. Ask once per rank: two objects for one rank would both
  // count as that rank. Destroying it waits for the collectives it has issued.
  virtual std::unique_ptr<Collectives> ForRank(int rank) = 0;
};

}  // namespace tsr

#endif  // TESSERA_RUNTIME_COLLECTIVES_IN_PROCESS_COLLECTIVES_H_

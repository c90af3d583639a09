// The communicator of a multi-process job (`tessera train --strategy multi-worker`): every
// rank of the job, as the launch environment (runtime/launch/world_info.h) describes it,
// joined through Gloo (the launcher's rendezvous store on loopback) or MPI (under mpirun).
#ifndef TESSERA_TOOLS_WORLD_COLLECTIVES_H_
#define TESSERA_TOOLS_WORLD_COLLECTIVES_H_

#include <memory>

#include "absl/status/statusor.h"
#include "runtime/collectives/collectives.h"
#include "runtime/launch/world_info.h"

namespace tsr::cli {

// Errors say what is missing: a backend this build lacks, no coordinator for Gloo
// (not started by `tessera launch`), a rank that did not join in time.
absl::StatusOr<std::shared_ptr<Collectives>> JoinWorld(const WorldInfo& world, const CollectivesOptions& options);

}  // namespace tsr::cli

#endif  // TESSERA_TOOLS_WORLD_COLLECTIVES_H_

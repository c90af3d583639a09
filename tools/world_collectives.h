// The communicators of a multi-process job (`tessera train --strategy multi-worker`, ...):
// the world -- every rank of the job, as the launch environment (runtime/launch/
// world_info.h) describes it, joined through Gloo (the launcher's rendezvous store on
// loopback) or MPI (under mpirun) -- and the groups of a device mesh whose devices are
// the job's processes (device = rank).
#ifndef TESSERA_TOOLS_WORLD_COLLECTIVES_H_
#define TESSERA_TOOLS_WORLD_COLLECTIVES_H_

#include <functional>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/collectives/collective_groups.h"
#include "runtime/collectives/collectives.h"
#include "runtime/launch/world_info.h"

namespace tsr::cli {

// Errors say what is missing: a backend this build lacks, no coordinator for Gloo
// (not started by `tessera launch`), a rank that did not join in time.
absl::StatusOr<std::shared_ptr<Collectives>> JoinWorld(const WorldInfo& world, const CollectivesOptions& options);

// The communicators of mesh device `world.rank`, one per group it belongs to
// (MeshGroupsOfDevice): `world_communicator` (from JoinWorld) where the group is the
// whole job, a one-rank in-process communicator where it is this process alone, and
// otherwise a new communicator of the job's backend over the group's processes (MPI:
// split from MPI_COMM_WORLD; Gloo: a rendezvous of its own in the launcher's store).
// Every process of the job makes the same calls in the same order. InvalidArgument
// when the mesh's device count is not the job's process count.
absl::StatusOr<std::shared_ptr<CollectiveGroupTable>> JoinMeshGroups(const WorldInfo& world,
                                                                     std::shared_ptr<Collectives> world_communicator,
                                                                     const std::vector<MeshAxisSize>& mesh,
                                                                     const CollectivesOptions& options);

// This process's communicators for each mesh a strategy plans (what
// PartitionedStepOptions::process_groups takes): JoinMeshGroups at a mesh's first call,
// the same table at its later ones. Safe to call from several threads.
std::function<absl::StatusOr<std::shared_ptr<CollectiveGroups>>(const std::vector<MeshAxisSize>& mesh)>
JoinedMeshGroups(WorldInfo world, std::shared_ptr<Collectives> world_communicator, CollectivesOptions options);

}  // namespace tsr::cli

#endif  // TESSERA_TOOLS_WORLD_COLLECTIVES_H_

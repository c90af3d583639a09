// JoinWorld and JoinMeshGroups (see world_collectives.h).
#include "tools/world_collectives.h"

#include <atomic>
#include <map>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "graph/status_macros.h"
#include "runtime/collectives/in_process_collectives.h"
#ifdef TESSERA_HAS_GLOO
#include "runtime/collectives/gloo/gloo_collectives.h"
#include "runtime/launch/tcp_key_value_store.h"
#endif
#ifdef TESSERA_HAS_MPI
#include "runtime/collectives/mpi/mpi_collectives.h"
#endif

namespace tsr::cli {

absl::StatusOr<std::shared_ptr<Collectives>> JoinWorld(const WorldInfo& world, const CollectivesOptions& options) {
  if (world.backend == "mpi") {
#ifdef TESSERA_HAS_MPI
    TSR_ASSIGN_OR_RETURN(std::unique_ptr<MpiCollectives> mpi, MpiCollectives::Create(options));
    if (mpi->rank() != world.rank || mpi->world_size() != world.world_size) {
      return absl::FailedPreconditionError(absl::StrCat("MPI says rank ", mpi->rank(), " of ", mpi->world_size(),
                                                        " but the environment says rank ", world.rank, " of ",
                                                        world.world_size));
    }
    return std::shared_ptr<Collectives>(std::move(mpi));
#else
    return absl::UnimplementedError("this build has no MPI backend (OpenMPI was not found)");
#endif
  }
  if (world.backend == "gloo") {
#ifdef TESSERA_HAS_GLOO
    if (!world.has_coordinator()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "the gloo backend needs the job's rendezvous store: start the workers with `tessera launch --nproc N -- ...` "
          "(or set ",
          kCoordinatorVariable, " and ", kJobTokenVariable, ")"));
    }
    TSR_ASSIGN_OR_RETURN(std::unique_ptr<TcpKeyValueStore> store,
                         TcpKeyValueStore::Connect(world.coordinator_host, world.coordinator_port, world.token));
    TSR_ASSIGN_OR_RETURN(std::unique_ptr<GlooCollectives> gloo,
                         GlooCollectives::Create(world.rank, world.world_size, *store, "tessera/world", options));
    return std::shared_ptr<Collectives>(std::move(gloo));
#else
    return absl::UnimplementedError("this build has no Gloo backend (libgloo-dev was not found)");
#endif
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown collectives backend '", world.backend, "'"));
}

absl::StatusOr<std::shared_ptr<CollectiveGroupTable>> JoinMeshGroups(const WorldInfo& world,
                                                                     std::shared_ptr<Collectives> world_communicator,
                                                                     const std::vector<MeshAxisSize>& mesh,
                                                                     const CollectivesOptions& options) {
  int64_t devices = 1;
  std::vector<std::string> described;
  for (const MeshAxisSize& axis : mesh) {
    devices *= axis.size;
    described.push_back(absl::StrCat(axis.name, "=", axis.size));
  }
  const std::string mesh_text = absl::StrJoin(described, ",");
  if (devices != world.world_size) {
    return absl::InvalidArgumentError(absl::StrCat("the mesh ", mesh_text, " has ", devices,
                                                   " devices but the job has ", world.world_size,
                                                   " processes (one device per process)"));
  }
  TSR_ASSIGN_OR_RETURN(std::vector<MeshGroup> groups, MeshGroupsOfDevice(mesh, world.rank));
  // Every process joins its meshes in the same order: the count names this join's Gloo
  // rendezvous (a name is used once per store) alike on every rank.
  static std::atomic<int> joins{0};
  const int join = joins++;
  auto table = std::make_shared<CollectiveGroupTable>();
#ifdef TESSERA_HAS_GLOO
  std::unique_ptr<TcpKeyValueStore> store;
#endif
  for (MeshGroup& group : groups) {
    std::shared_ptr<Collectives> communicator;
    if (group.size == world.world_size) {
      communicator = world_communicator;
    } else if (group.size == 1) {
      TSR_ASSIGN_OR_RETURN(std::shared_ptr<InProcessCommunicator> alone, InProcessCommunicator::Create(1, options));
      communicator = alone->ForRank(0);
    } else if (world.backend == "mpi") {
#ifdef TESSERA_HAS_MPI
      TSR_ASSIGN_OR_RETURN(communicator, MpiCollectives::CreateSplit(options, group.index, group.rank));
#else
      return absl::UnimplementedError("this build has no MPI backend (OpenMPI was not found)");
#endif
    } else {
#ifdef TESSERA_HAS_GLOO
      if (store == nullptr) {
        TSR_ASSIGN_OR_RETURN(store,
                             TcpKeyValueStore::Connect(world.coordinator_host, world.coordinator_port, world.token));
      }
      const std::string name =
          absl::StrCat("tessera/mesh", join, "/", mesh_text, "/", absl::StrJoin(group.axes, "+"), "/", group.index);
      TSR_ASSIGN_OR_RETURN(communicator, GlooCollectives::Create(group.rank, group.size, *store, name, options));
#else
      return absl::UnimplementedError("this build has no Gloo backend (libgloo-dev was not found)");
#endif
    }
    table->Add(std::move(group.axes), std::move(communicator));
  }
  return table;
}

std::function<absl::StatusOr<std::shared_ptr<CollectiveGroups>>(const std::vector<MeshAxisSize>& mesh)>
JoinedMeshGroups(WorldInfo world, std::shared_ptr<Collectives> world_communicator, CollectivesOptions options) {
  struct Joined {
    absl::Mutex mu;
    std::map<std::vector<std::pair<std::string, int>>, std::shared_ptr<CollectiveGroupTable>> tables
        ABSL_GUARDED_BY(mu);
  };
  auto joined = std::make_shared<Joined>();
  return [world = std::move(world), world_communicator = std::move(world_communicator), options,
          joined](const std::vector<MeshAxisSize>& mesh) -> absl::StatusOr<std::shared_ptr<CollectiveGroups>> {
    std::vector<std::pair<std::string, int>> key;
    for (const MeshAxisSize& axis : mesh) key.emplace_back(axis.name, axis.size);
    absl::MutexLock lock(&joined->mu);
    std::shared_ptr<CollectiveGroupTable>& table = joined->tables[key];
    if (table == nullptr) {
      absl::StatusOr<std::shared_ptr<CollectiveGroupTable>> made =
          JoinMeshGroups(world, world_communicator, mesh, options);
      if (!made.ok()) {
        joined->tables.erase(key);
        return made.status();
      }
      table = *std::move(made);
    }
    return std::shared_ptr<CollectiveGroups>(table);
  };
}

}  // namespace tsr::cli

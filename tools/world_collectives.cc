// JoinWorld (see world_collectives.h).
#include "tools/world_collectives.h"

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
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

}  // namespace tsr::cli

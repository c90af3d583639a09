// `WorldInfo`: which rank of which job this process is, read from the environment
// contract that every launcher satisfies — `tessera launch`, `mpirun`, or a scheduler
// that sets the variables itself (as torchrun's RANK/WORLD_SIZE/MASTER_ADDR contract).
//
// The contract (all values decimal integers unless said otherwise):
//
//   TESSERA_RANK              this process's rank, in [0, TESSERA_WORLD_SIZE)
//   TESSERA_WORLD_SIZE        the number of ranks in the job, >= 1
//   TESSERA_LOCAL_RANK        the rank among the processes on this host (default: RANK)
//   TESSERA_LOCAL_WORLD_SIZE  the number of processes on this host (default: WORLD_SIZE)
//   TESSERA_COORDINATOR       HOST:PORT of the job's rendezvous store (the launcher's
//                             TcpKeyValueStoreServer). Optional; HOST must be the loopback
//                             address 127.0.0.1 (or "localhost"): jobs run on one host and
//                             nothing listens on or connects to another address.
//   TESSERA_JOB_TOKEN         the job's secret, presented to the store on every connection;
//                             required when TESSERA_COORDINATOR is set
//   TESSERA_BACKEND           the collectives backend: "gloo" or "mpi" (default: "mpi"
//                             under mpirun, "gloo" otherwise)
//
// Which variables are read:
//  - TESSERA_RANK or TESSERA_WORLD_SIZE set: the Tessera contract; both must be set.
//  - otherwise OMPI_COMM_WORLD_RANK or OMPI_COMM_WORLD_SIZE set (the process was started
//    by OpenMPI's mpirun): rank and size from OMPI_COMM_WORLD_{RANK,SIZE}, local rank and
//    size from OMPI_COMM_WORLD_LOCAL_{RANK,SIZE}; `under_mpirun` is true. The TESSERA_
//    coordinator, token and backend variables are still read when present.
//  - neither: a single process, rank 0 of 1.
// A malformed value — not a number, out of range, rank >= world size, a port outside
// [1, 65535], a coordinator host that is not loopback — is InvalidArgument naming the
// variable and its value; nothing is guessed.
#ifndef TESSERA_RUNTIME_LAUNCH_WORLD_INFO_H_
#define TESSERA_RUNTIME_LAUNCH_WORLD_INFO_H_

#include <cstddef>
#include <functional>
#include <optional>
#include <string>

#include "absl/status/statusor.h"

namespace tsr {

inline constexpr char kRankVariable[] = "TESSERA_RANK";
inline constexpr char kWorldSizeVariable[] = "TESSERA_WORLD_SIZE";
inline constexpr char kLocalRankVariable[] = "TESSERA_LOCAL_RANK";
inline constexpr char kLocalWorldSizeVariable[] = "TESSERA_LOCAL_WORLD_SIZE";
inline constexpr char kCoordinatorVariable[] = "TESSERA_COORDINATOR";
inline constexpr char kJobTokenVariable[] = "TESSERA_JOB_TOKEN";
inline constexpr char kBackendVariable[] = "TESSERA_BACKEND";

// The only host a coordinator may have.
inline constexpr char kLoopbackHost[] = "127.0.0.1";
// The longest TESSERA_JOB_TOKEN (the store's handshake is bounded).
inline constexpr size_t kMaxJobTokenBytes = 256;

struct WorldInfo {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  int local_world_size = 1;
  // Empty and 0 when TESSERA_COORDINATOR is unset; otherwise kLoopbackHost.
  std::string coordinator_host;
  int coordinator_port = 0;
  std::string token;  // empty when TESSERA_JOB_TOKEN is unset
  std::string backend = "gloo";
  bool under_mpirun = false;

  bool has_coordinator() const { return coordinator_port != 0; }
};

// Looks up one environment variable: its value, or nullopt when it is unset.
using EnvironmentLookup = std::function<std::optional<std::string>(const std::string& name)>;

// The contract above, read through `lookup` (tests pass a map).
absl::StatusOr<WorldInfo> WorldInfoFromEnvironment(const EnvironmentLookup& lookup);
// The contract above, read from this process's environment.
absl::StatusOr<WorldInfo> WorldInfoFromEnvironment();

}  // namespace tsr

#endif  // TESSERA_RUNTIME_LAUNCH_WORLD_INFO_H_

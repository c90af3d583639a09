// `MeshSession`: runs the per-device programs of a partitioned graph
// (partitioner/spmd_partitioner.h) on the virtual CPU devices of this process — one
// Session per device (cpu:0..N-1), each with its own threads and its communicators over
// the device mesh (in-process collectives: shared memory) — as one: a run feeds every
// device its share and runs all devices at once.
//
//   TSR_ASSIGN_OR_RETURN(auto mesh, MeshSession::Create(std::move(program.devices),
//                                                       {{"data", 2}}, {.threads_per_device = 1}));
//   TSR_ASSIGN_OR_RETURN(auto fetched, mesh->Run(per_device_feeds, {"loss"}, {.targets = updates}));
//
// Each device initializes its Variables from the same seed, so replicated Variables
// start equal, as one device's would.
#ifndef TESSERA_RUNTIME_MESH_SESSION_H_
#define TESSERA_RUNTIME_MESH_SESSION_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "graph/tensor.h"
#include "runtime/collectives/collective_groups.h"
#include "runtime/device_threads.h"
#include "runtime/session.h"

namespace tsr {

struct MeshSessionOptions {
  int threads_per_device = 1;
  std::string device = "cpu";
  uint64_t seed = 0;
  CollectivesOptions collectives;  // the timeout a device waits for the others
};

class MeshSession {
 public:
  // `programs[d]` is device d's program; the mesh's devices are numbered row-major over
  // `mesh` (whose sizes must multiply to programs.size()).
  static absl::StatusOr<std::unique_ptr<MeshSession>> Create(std::vector<Graph> programs,
                                                             const std::vector<MeshAxisSize>& mesh,
                                                             MeshSessionOptions options = {});
  ~MeshSession();

  int num_devices() const { return static_cast<int>(sessions_.size()); }
  Session& device(int d) { return *sessions_[d]; }

  // Runs every device at once, device d on `feeds[d]`; returns each device's fetches.
  // A failure on any device fails the run, naming the device (the others then fail
  // their collectives with the device that did not arrive, after the timeout at worst).
  absl::StatusOr<std::vector<std::vector<Tensor>>> Run(
      const std::vector<std::vector<std::pair<std::string, Tensor>>>& feeds, const std::vector<std::string>& fetches,
      const RunOptions& options = {});

 private:
  MeshSession() = default;
  std::vector<std::unique_ptr<Session>> sessions_;
  std::unique_ptr<DeviceThreads> device_threads_;
};

}  // namespace tsr

#endif  // TESSERA_RUNTIME_MESH_SESSION_H_

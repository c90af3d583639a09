// MeshSession (see mesh_session.h).
#include "runtime/mesh_session.h"

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"

namespace tsr {

absl::StatusOr<std::unique_ptr<MeshSession>> MeshSession::Create(std::vector<Graph> programs,
                                                                 const std::vector<MeshAxisSize>& mesh,
                                                                 MeshSessionOptions options) {
  TSR_ASSIGN_OR_RETURN(std::vector<std::shared_ptr<CollectiveGroupTable>> groups,
                       MakeInProcessMeshGroups(mesh, options.collectives));
  if (groups.size() != programs.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the mesh has ", groups.size(), " devices but ", programs.size(), " programs were given"));
  }
  auto session = std::unique_ptr<MeshSession>(new MeshSession());
  for (size_t d = 0; d < programs.size(); ++d) {
    absl::StatusOr<std::unique_ptr<Session>> s =
        Session::Create(std::move(programs[d]), SessionOptions{.num_threads = options.threads_per_device,
                                                               .device = options.device,
                                                               .seed = options.seed,
                                                               .collective_groups = groups[d]});
    if (!s.ok()) return absl::Status(s.status().code(), absl::StrCat("device ", d, ": ", s.status().message()));
    session->sessions_.push_back(*std::move(s));
  }
  session->device_threads_ = std::make_unique<DeviceThreads>(static_cast<int>(programs.size()));
  return session;
}

MeshSession::~MeshSession() = default;

absl::StatusOr<std::vector<std::vector<Tensor>>> MeshSession::Run(
    const std::vector<std::vector<std::pair<std::string, Tensor>>>& feeds, const std::vector<std::string>& fetches,
    const RunOptions& options) {
  const int n = num_devices();
  if (static_cast<int>(feeds.size()) != n) {
    return absl::InvalidArgumentError(absl::StrCat("feeds for ", feeds.size(), " devices given to a mesh of ", n));
  }
  std::vector<std::vector<Tensor>> out(n);
  TSR_RETURN_IF_ERROR(device_threads_->Run([&](int d) -> absl::Status {
    TSR_ASSIGN_OR_RETURN(out[d], sessions_[d]->Run(feeds[d], fetches, options));
    return absl::OkStatus();
  }));
  return out;
}

}  // namespace tsr

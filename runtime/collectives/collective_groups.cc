// CollectiveGroupTable and MakeInProcessMeshGroups (see collective_groups.h).
#include "runtime/collectives/collective_groups.h"

#include <cstdint>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/status_macros.h"
#include "runtime/collectives/in_process_collectives.h"

namespace tsr {

void CollectiveGroupTable::Add(std::vector<std::string> axes, std::shared_ptr<Collectives> communicator) {
  groups_[std::move(axes)] = std::move(communicator);
}

absl::StatusOr<Collectives*> CollectiveGroupTable::ForAxes(absl::Span<const std::string> axes) {
  auto it = groups_.find(std::vector<std::string>(axes.begin(), axes.end()));
  if (it != groups_.end()) return it->second.get();
  std::vector<std::string> known;
  for (const auto& [names, communicator] : groups_) known.push_back(absl::StrCat("{", absl::StrJoin(names, ","), "}"));
  return absl::NotFoundError(absl::StrCat("this device has no communicator over the mesh axes {",
                                          absl::StrJoin(axes, ","), "}; it has ",
                                          known.empty() ? "none" : absl::StrJoin(known, ", ")));
}

absl::StatusOr<std::vector<std::shared_ptr<CollectiveGroupTable>>> MakeInProcessMeshGroups(
    const std::vector<MeshAxisSize>& axes, const CollectivesOptions& options) {
  if (axes.empty()) return absl::InvalidArgumentError("a device mesh needs at least one axis");
  if (axes.size() > 16) return absl::InvalidArgumentError("a device mesh has at most 16 axes");
  absl::flat_hash_set<std::string> names;
  int64_t devices = 1;
  for (const MeshAxisSize& axis : axes) {
    if (axis.size < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("mesh axis '", axis.name, "' has size ", axis.size, " but at least 1 is required"));
    }
    if (!names.insert(axis.name).second) {
      return absl::InvalidArgumentError(absl::StrCat("mesh axis '", axis.name, "' appears twice"));
    }
    devices *= axis.size;
    if (devices > 4096) return absl::InvalidArgumentError("an in-process mesh has at most 4096 devices");
  }
  const int rank = static_cast<int>(axes.size());
  std::vector<std::shared_ptr<CollectiveGroupTable>> tables(devices);
  for (auto& table : tables) table = std::make_shared<CollectiveGroupTable>();

  // The coordinates of device d, row-major (the last axis fastest).
  auto coordinates = [&](int64_t d) {
    std::vector<int> c(rank);
    for (int a = rank - 1; a >= 0; --a) {
      c[a] = static_cast<int>(d % axes[a].size);
      d /= axes[a].size;
    }
    return c;
  };
  for (uint32_t subset = 1; subset < (1u << rank); ++subset) {
    std::vector<std::string> subset_names;
    int group_size = 1;
    for (int a = 0; a < rank; ++a) {
      if (subset & (1u << a)) {
        subset_names.push_back(axes[a].name);
        group_size *= axes[a].size;
      }
    }
    // Groups keyed by the coordinates outside the subset; a device's rank in its group is
    // its row-major position over the subset's coordinates — devices are visited in that
    // order within each group.
    std::map<std::vector<int>, std::vector<int64_t>> groups;
    for (int64_t d = 0; d < devices; ++d) {
      std::vector<int> c = coordinates(d);
      std::vector<int> key;
      for (int a = 0; a < rank; ++a) {
        if (!(subset & (1u << a))) key.push_back(c[a]);
      }
      groups[key].push_back(d);
    }
    for (const auto& [key, members] : groups) {
      TSR_ASSIGN_OR_RETURN(std::shared_ptr<InProcessCommunicator> communicator,
                           InProcessCommunicator::Create(group_size, options));
      for (int r = 0; r < group_size; ++r) {
        tables[members[r]]->Add(subset_names, std::shared_ptr<Collectives>(communicator->ForRank(r)));
      }
    }
  }
  return tables;
}

}  // namespace tsr

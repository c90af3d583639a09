// CollectiveGroupTable and MakeInProcessMeshGroups (see collective_groups.h).
#include "runtime/collectives/collective_groups.h"

#include <cstdint>
#include <map>
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

namespace {

// The mesh's device count; errors as MeshGroupsOfDevice's.
absl::StatusOr<int> CheckMesh(const std::vector<MeshAxisSize>& axes) {
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
    if (devices > 4096) return absl::InvalidArgumentError("a device mesh has at most 4096 devices");
  }
  return static_cast<int>(devices);
}

}  // namespace

absl::StatusOr<std::vector<MeshGroup>> MeshGroupsOfDevice(const std::vector<MeshAxisSize>& axes, int device) {
  TSR_ASSIGN_OR_RETURN(const int devices, CheckMesh(axes));
  if (device < 0 || device >= devices) {
    return absl::InvalidArgumentError(absl::StrCat("device ", device, " is not in a mesh of ", devices, " devices"));
  }
  const int rank = static_cast<int>(axes.size());
  // The device's coordinates, row-major (the last axis fastest).
  std::vector<int> c(rank);
  for (int a = rank - 1, d = device; a >= 0; --a) {
    c[a] = d % axes[a].size;
    d /= axes[a].size;
  }
  std::vector<MeshGroup> groups;
  for (uint32_t subset = 1; subset < (1u << rank); ++subset) {
    MeshGroup group;
    for (int a = 0; a < rank; ++a) {
      if (subset & (1u << a)) {
        group.axes.push_back(axes[a].name);
        group.rank = group.rank * axes[a].size + c[a];
        group.size *= axes[a].size;
      } else {
        group.index = group.index * axes[a].size + c[a];
      }
    }
    groups.push_back(std::move(group));
  }
  return groups;
}

absl::StatusOr<std::vector<std::shared_ptr<CollectiveGroupTable>>> MakeInProcessMeshGroups(
    const std::vector<MeshAxisSize>& axes, const CollectivesOptions& options) {
  TSR_ASSIGN_OR_RETURN(const int devices, CheckMesh(axes));
  std::vector<std::shared_ptr<CollectiveGroupTable>> tables(devices);
  for (auto& table : tables) table = std::make_shared<CollectiveGroupTable>();
  // One communicator per group, made when its first device comes.
  std::map<std::pair<std::vector<std::string>, int>, std::shared_ptr<InProcessCommunicator>> communicators;
  for (int d = 0; d < devices; ++d) {
    TSR_ASSIGN_OR_RETURN(std::vector<MeshGroup> groups, MeshGroupsOfDevice(axes, d));
    for (MeshGroup& group : groups) {
      std::shared_ptr<InProcessCommunicator>& communicator = communicators[{group.axes, group.index}];
      if (communicator == nullptr) {
        TSR_ASSIGN_OR_RETURN(communicator, InProcessCommunicator::Create(group.size, options));
      }
      tables[d]->Add(std::move(group.axes), std::shared_ptr<Collectives>(communicator->ForRank(group.rank)));
    }
  }
  return tables;
}

}  // namespace tsr

// `CollectiveGroups`: the communicators one device of a device mesh takes part in, one
// per set of mesh axes. The communicator over {"data"} joins the devices that differ from
// this one only in their `data` coordinate, ranked by that coordinate; the one over
// {"data", "model"} joins those that differ in either, ranked row-major. A partitioned
// graph's collective ops name the mesh axes they reduce or gather over (their
// `mesh_axes` attribute); their kernels ask the device's groups for the communicator
// (kernels/collective_kernels.cc).
//
// `CollectiveGroupTable` holds them as a table; `MakeInProcessMeshGroups` builds the
// tables of every device of a mesh whose devices are threads of this process.
#ifndef TESSERA_RUNTIME_COLLECTIVES_COLLECTIVE_GROUPS_H_
#define TESSERA_RUNTIME_COLLECTIVES_COLLECTIVE_GROUPS_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "runtime/collectives/collectives.h"

namespace tsr {

class CollectiveGroups {
 public:
  virtual ~CollectiveGroups() = default;

  // The communicator over `axes` (in the mesh's axis order); NotFound naming the axes
  // and the ones this device has when there is none.
  virtual absl::StatusOr<Collectives*> ForAxes(absl::Span<const std::string> axes) = 0;
};

class CollectiveGroupTable : public CollectiveGroups {
 public:
  // Replaces any communicator already given for `axes`.
  void Add(std::vector<std::string> axes, std::shared_ptr<Collectives> communicator);
  absl::StatusOr<Collectives*> ForAxes(absl::Span<const std::string> axes) override;

 private:
  std::map<std::vector<std::string>, std::shared_ptr<Collectives>> groups_;
};

// A mesh axis: its name and how many devices it spans.
struct MeshAxisSize {
  std::string name;
  int size = 1;
};

// For a mesh of prod(sizes) devices, numbered row-major over `axes` (the last axis
// fastest), the groups of each device, in device order: for every non-empty subset of
// the axes, one in-process communicator per group of devices that share their
// coordinates on the other axes. InvalidArgument for an empty mesh, a size < 1 or a
// repeated axis name.
absl::StatusOr<std::vector<std::shared_ptr<CollectiveGroupTable>>> MakeInProcessMeshGroups(
    const std::vector<MeshAxisSize>& axes, const CollectivesOptions& options = {});

}  // namespace tsr

#endif  // TESSERA_RUNTIME_COLLECTIVES_COLLECTIVE_GROUPS_H_

// `CollectiveGroups`: the communicators one device of a device mesh takes part in, one
// per set of mesh axes. The communicator over {"data"} joins the devices that differ from
// this one only in their `data` coordinate, ranked by that coordinate; the one over
// {"data", "model"} joins those that differ in either, ranked row-major. A partitioned
// graph's collective ops name the mesh axes they reduce or gather over (their
// `mesh_axes` attribute); their kernels ask the device's groups for the communicator
// (kernels/collective_kernels.cc).
//
// `CollectiveGroupTable` holds them as a table; `MeshGroupsOfDevice` says which groups a
// device belongs to (what a backend needs to make them: MPI's split colours and keys,
// Gloo's rendezvous names); `MakeInProcessMeshGroups` builds the tables of every device
// of a mesh whose devices are threads of this process.
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

// One group of mesh devices: those that share their coordinates on the axes outside
// `axes`.
struct MeshGroup {
  std::vector<std::string> axes;  // a non-empty subset of the mesh's axes, in mesh order
  int index = 0;                  // which group: row-major over the coordinates outside `axes`
  int rank = 0;                   // the device's place in it: row-major over its coordinates on `axes`
  int size = 1;                   // devices in the group: the product of the sizes of `axes`
};

// The groups device `device` of a mesh of prod(sizes) devices, numbered row-major over
// `axes` (the last axis fastest), belongs to: one per non-empty subset of the axes, in
// the same order for every device. InvalidArgument for an empty mesh, a size < 1, a
// repeated axis name, more than 16 axes or 4096 devices, or a device outside the mesh.
absl::StatusOr<std::vector<MeshGroup>> MeshGroupsOfDevice(const std::vector<MeshAxisSize>& axes, int device);

// For a mesh as above, the groups of each device, in device order: for every group
// (MeshGroupsOfDevice), one in-process communicator. Errors as MeshGroupsOfDevice's.
absl::StatusOr<std::vector<std::shared_ptr<CollectiveGroupTable>>> MakeInProcessMeshGroups(
    const std::vector<MeshAxisSize>& axes, const CollectivesOptions& options = {});

}  // namespace tsr

#endif  // TESSERA_RUNTIME_COLLECTIVES_COLLECTIVE_GROUPS_H_

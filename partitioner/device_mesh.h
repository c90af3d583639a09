// `DeviceMesh`: the devices a partitioned program runs on, arranged as an
// n-dimensional array with named axes ("data", "model", "pipe"). Devices are numbered
// row-major (the last axis varies fastest); device d of a {data=2, model=2} mesh has
// coordinates (d / 2, d % 2). The devices may be virtual CPU devices of one process
// (cpu:0..N-1) or the ranks of several processes; the mesh does not care which.
#ifndef TESSERA_PARTITIONER_DEVICE_MESH_H_
#define TESSERA_PARTITIONER_DEVICE_MESH_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tsr {

struct MeshAxis {
  std::string name;
  int size = 1;
};

class DeviceMesh {
 public:
  // InvalidArgument for no axes, an empty or repeated name, a size < 1, or more than
  // 4096 devices.
  static absl::StatusOr<DeviceMesh> Create(std::vector<MeshAxis> axes);
  // "data=2,model=2" (as `tessera train --mesh` takes it).
  static absl::StatusOr<DeviceMesh> Parse(absl::string_view text);

  const std::vector<MeshAxis>& axes() const { return axes_; }
  int num_axes() const { return static_cast<int>(axes_.size()); }
  int num_devices() const { return num_devices_; }
  // The axis index of `name`; -1 when the mesh has no such axis.
  int AxisIndex(absl::string_view name) const;
  int axis_size(int axis) const { return axes_[axis].size; }
  // How many devices the axes (indices) span together: the product of their sizes.
  int DeviceCount(const std::vector<int>& axes) const {
    int n = 1;
    for (int a : axes) n *= axes_[a].size;
    return n;
  }
  const std::string& axis_name(int axis) const { return axes_[axis].name; }
  // Device `device`'s coordinate on each axis.
  std::vector<int> Coordinates(int device) const;

  // "{data=2, model=2}".
  std::string ToString() const;

 private:
  std::vector<MeshAxis> axes_;
  int num_devices_ = 1;
};

}  // namespace tsr

#endif  // TESSERA_PARTITIONER_DEVICE_MESH_H_

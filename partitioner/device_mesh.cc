// DeviceMesh (see device_mesh.h).
#include "partitioner/device_mesh.h"

#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace tsr {

absl::StatusOr<DeviceMesh> DeviceMesh::Create(std::vector<MeshAxis> axes) {
  if (axes.empty()) return absl::InvalidArgumentError("a device mesh needs at least one axis");
  absl::flat_hash_set<std::string> names;
  int64_t devices = 1;
  for (const MeshAxis& axis : axes) {
    if (axis.name.empty()) return absl::InvalidArgumentError("a mesh axis has an empty name");
    if (!names.insert(axis.name).second) {
      return absl::InvalidArgumentError(absl::StrCat("mesh axis '", axis.name, "' appears twice"));
    }
    if (axis.size < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("mesh axis '", axis.name, "' has size ", axis.size, " but at least 1 is required"));
    }
    devices *= axis.size;
    if (devices > 4096) return absl::InvalidArgumentError("a device mesh has at most 4096 devices");
  }
  DeviceMesh mesh;
  mesh.axes_ = std::move(axes);
  mesh.num_devices_ = static_cast<int>(devices);
  return mesh;
}

absl::StatusOr<DeviceMesh> DeviceMesh::Parse(absl::string_view text) {
  std::vector<MeshAxis> axes;
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    part = absl::StripAsciiWhitespace(part);
    std::pair<absl::string_view, absl::string_view> kv = absl::StrSplit(part, absl::MaxSplits('=', 1));
    int size = 0;
    if (kv.first.empty() || !absl::SimpleAtoi(kv.second, &size)) {
      return absl::InvalidArgumentError(
          absl::StrCat("mesh '", text, "': '", part, "' is not AXIS=SIZE (e.g. data=2,model=2)"));
    }
    axes.push_back(MeshAxis{std::string(absl::StripAsciiWhitespace(kv.first)), size});
  }
  absl::StatusOr<DeviceMesh> mesh = Create(std::move(axes));
  if (!mesh.ok()) return absl::InvalidArgumentError(absl::StrCat("mesh '", text, "': ", mesh.status().message()));
  return mesh;
}

int DeviceMesh::AxisIndex(absl::string_view name) const {
  for (int a = 0; a < num_axes(); ++a) {
    if (axes_[a].name == name) return a;
  }
  return -1;
}

std::vector<int> DeviceMesh::Coordinates(int device) const {
  std::vector<int> c(axes_.size());
  for (int a = num_axes() - 1; a >= 0; --a) {
    c[a] = device % axes_[a].size;
    device /= axes_[a].size;
  }
  return c;
}

std::string DeviceMesh::ToString() const {
  return absl::StrCat(
      "{",
      absl::StrJoin(axes_, ", ",
                    [](std::string* out, const MeshAxis& a) { absl::StrAppend(out, a.name, "=", a.size); }),
      "}");
}

}  // namespace tsr

// Sharding (see sharding.h).
#include "partitioner/sharding.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace tsr {

bool Sharding::IsReplicated() const { return !IsSplit() && partial.empty(); }

bool Sharding::IsSplit() const {
  return std::any_of(dims.begin(), dims.end(), [](const std::vector<int>& axes) { return !axes.empty(); });
}

std::vector<int> Sharding::SplitAxes() const {
  std::vector<int> axes;
  for (const std::vector<int>& d : dims) axes.insert(axes.end(), d.begin(), d.end());
  std::sort(axes.begin(), axes.end());
  return axes;
}

std::string Sharding::ToString(const DeviceMesh& mesh) const {
  auto names = [&](const std::vector<int>& axes) {
    return absl::StrJoin(axes, ",", [&](std::string* out, int a) { absl::StrAppend(out, mesh.axis_name(a)); });
  };
  if (IsReplicated()) return "replicated";
  if (!IsSplit()) return absl::StrCat("partial{", names(partial), "}");
  std::string text =
      absl::StrCat("[",
                   absl::StrJoin(dims, ", ",
                                 [&](std::string* out, const std::vector<int>& axes) {
                                   absl::StrAppend(out, axes.empty() ? "-" : absl::StrCat("{", names(axes), "}"));
                                 }),
                   "]");
  if (!partial.empty()) absl::StrAppend(&text, " partial{", names(partial), "}");
  return text;
}

std::pair<int64_t, int64_t> LocalRange(int64_t size, const std::vector<int>& axes, const DeviceMesh& mesh, int device) {
  if (axes.empty()) return {0, size};
  const std::vector<int> coords = mesh.Coordinates(device);
  int64_t index = 0, count = 1;
  for (int a : axes) {
    index = index * mesh.axis_size(a) + coords[a];
    count *= mesh.axis_size(a);
  }
  return {size * index / count, size * (index + 1) / count};
}

Shape LocalShape(const Shape& global, const Sharding& sharding, const DeviceMesh& mesh, int device) {
  Shape local = global;
  for (int d = 0; d < global.rank() && d < static_cast<int>(sharding.dims.size()); ++d) {
    auto [begin, end] = LocalRange(global.dim(d), sharding.dims[d], mesh, device);
    local.set_dim(d, end - begin);
  }
  return local;
}

bool AxesOverlap(const std::vector<int>& a, const std::vector<int>& b) {
  for (int x : a) {
    if (std::find(b.begin(), b.end(), x) != b.end()) return true;
  }
  return false;
}

}  // namespace tsr

// `Sharding`: how one tensor of a partitioned program is laid out over a DeviceMesh.
// Each dimension is either whole on every device or split over one or more mesh axes;
// independently, the tensor may be a *partial sum* over some axes — each device holds a
// summand and the value is their sum (a weight gradient under data parallelism, before
// its all-reduce). A tensor neither split nor partial is replicated.
//
// Splits follow the collectives' rule (runtime/collectives/collectives.h, SplitBegin):
// n rows over k devices give device i the rows [n*i/k, n*(i+1)/k), so uneven sizes
// work and the first devices get the fewer rows.
#ifndef TESSERA_PARTITIONER_SHARDING_H_
#define TESSERA_PARTITIONER_SHARDING_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "graph/shape.h"
#include "partitioner/device_mesh.h"

namespace tsr {

struct Sharding {
  // Per tensor dimension: the mesh axes (indices, major first) that split it; empty when
  // the dimension is whole.
  std::vector<std::vector<int>> dims;
  // Mesh axes over which the tensor is a partial sum, ascending.
  std::vector<int> partial;

  static Sharding Replicated(int rank) { return Sharding{std::vector<std::vector<int>>(rank), {}}; }
  bool IsReplicated() const;
  bool IsSplit() const;
  // The axes splitting any dimension.
  std::vector<int> SplitAxes() const;

  friend bool operator==(const Sharding& a, const Sharding& b) { return a.dims == b.dims && a.partial == b.partial; }
  friend bool operator!=(const Sharding& a, const Sharding& b) { return !(a == b); }

  // "[{data}, -]" for rank 2 split on dim 0; "partial{data}"; "[{data}, -] partial{model}";
  // "replicated".
  std::string ToString(const DeviceMesh& mesh) const;
};

// Device `device`'s range [begin, end) of a dimension of `size` split over `axes`.
std::pair<int64_t, int64_t> LocalRange(int64_t size, const std::vector<int>& axes, const DeviceMesh& mesh, int device);
// The shape device `device` holds of a tensor of shape `global`.
Shape LocalShape(const Shape& global, const Sharding& sharding, const DeviceMesh& mesh, int device);
// Whether the axis sets intersect.
bool AxesOverlap(const std::vector<int>& a, const std::vector<int>& b);

}  // namespace tsr

#endif  // TESSERA_PARTITIONER_SHARDING_H_

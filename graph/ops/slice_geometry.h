// `ResolveSlice`: where ONNX Slice's (start, end, step) lands on one axis of a known
// size — the first index taken, the stride and the element count — with ONNX's
// rules for negative indices and clamping. The one implementation of this arithmetic:
// used by Slice's shape function (graph/ops/layout_ops.cc) and the Slice kernels.
#ifndef TESSERA_GRAPH_OPS_SLICE_GEOMETRY_H_
#define TESSERA_GRAPH_OPS_SLICE_GEOMETRY_H_

#include <cstdint>

namespace tsr {

// Elements first, first + step, ..., first + (size - 1) * step of the axis.
struct SliceAxis {
  int64_t first = 0;
  int64_t step = 1;
  int64_t size = 0;
};

// Slices an axis of static size `dim` (>= 0) with `step` != 0. Negative start/end
// count from the end; then, for step > 0, both are clamped to [0, dim], and for
// step < 0, start to [0, dim - 1] and end to [-1, dim - 1]. Exact for any int64
// inputs (no overflow).
SliceAxis ResolveSlice(int64_t dim, int64_t start, int64_t end, int64_t step);

}  // namespace tsr

#endif  // TESSERA_GRAPH_OPS_SLICE_GEOMETRY_H_

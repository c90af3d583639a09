// ResolveSlice: ONNX Slice arithmetic on one axis.
#include "graph/ops/slice_geometry.h"

#include <algorithm>
#include <cstdint>

namespace tsr {

namespace {

// ceil(a / b) for a > 0, b > 0, without overflow for any b (steps may be huge).
int64_t CeilDivPositive(uint64_t a, uint64_t b) { return static_cast<int64_t>(1 + (a - 1) / b); }

}  // namespace

SliceAxis ResolveSlice(int64_t dim, int64_t start, int64_t end, int64_t step) {
  SliceAxis s;
  s.step = step;
  if (dim <= 0) return s;
  // start < 0 and end < 0 only: adding dim cannot overflow.
  if (start < 0) start += dim;
  if (end < 0) end += dim;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    s.first = start;
    s.size = end > start ? CeilDivPositive(static_cast<uint64_t>(end - start), static_cast<uint64_t>(step)) : 0;
    return s;
  }
  start = std::clamp<int64_t>(start, 0, dim - 1);
  end = std::clamp<int64_t>(end, -1, dim - 1);
  s.first = start;
  // -step as unsigned: exact even for INT64_MIN.
  s.size =
      start > end ? CeilDivPositive(static_cast<uint64_t>(start - end), uint64_t{0} - static_cast<uint64_t>(step)) : 0;
  return s;
}

}  // namespace tsr

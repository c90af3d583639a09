// Numpy/ONNX broadcasting for the optimized elementwise kernels, without per-element
// index math: adjacent output dimensions along which every operand broadcasts the
// same way (all read, or all broadcast, per operand) are merged, so the common cases
// become one flat run (same shapes, a scalar operand), [M,N] rows against one row or
// one column, and so on. The output is then visited as runs of the last merged
// dimension, where each operand advances by 0 or 1 element: the row functions of
// elementwise_loops.h vectorize those runs.
#ifndef TESSERA_KERNELS_CPU_ELEMENTWISE_BROADCAST_H_
#define TESSERA_KERNELS_CPU_ELEMENTWISE_BROADCAST_H_

#include <algorithm>
#include <array>
#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "graph/shape.h"

namespace tsr {

inline constexpr int kMaxBroadcastOperands = 3;

struct BroadcastLayout {
  int num_operands = 0;
  int rank = 1;  // merged dimensions, >= 1 (a scalar output is one dimension of 1)
  int64_t num_elements = 0;
  std::array<int64_t, kMaxRank> dims{};
  // strides[k][d]: elements of operand k per step along merged dimension d (0 where
  // it broadcasts). strides[k][rank - 1] is 0 or 1.
  std::array<std::array<int64_t, kMaxRank>, kMaxBroadcastOperands> strides{};

  int64_t inner() const { return dims[rank - 1]; }
  int64_t inner_step(int k) const { return strides[k][rank - 1]; }
};

// Fails (naming the shapes) unless each operand broadcasts to `output`. At most
// kMaxBroadcastOperands operands.
absl::StatusOr<BroadcastLayout> MakeBroadcastLayout(const Shape& output, absl::Span<const Shape> operands);

// Calls fn(offsets, out_offset, count) for each maximal run of output elements in
// [begin, end) that lies in one row of the inner dimension: offsets[k] is operand k's
// element feeding output element out_offset; along the run operand k advances by
// layout.inner_step(k).
template <typename Fn>
void ForEachBroadcastRun(const BroadcastLayout& layout, int64_t begin, int64_t end, Fn&& fn) {
  if (begin >= end) return;
  const int outer_rank = layout.rank - 1;
  const int64_t inner = layout.inner();
  std::array<int64_t, kMaxRank> index{};
  std::array<int64_t, kMaxBroadcastOperands> offsets{};
  int64_t row = begin / inner;
  int64_t col = begin % inner;
  for (int d = outer_rank - 1; d >= 0; --d) {
    index[d] = row % layout.dims[d];
    row /= layout.dims[d];
  }
  for (int k = 0; k < layout.num_operands; ++k) {
    int64_t offset = col * layout.strides[k][outer_rank];
    for (int d = 0; d < outer_rank; ++d) offset += index[d] * layout.strides[k][d];
    offsets[k] = offset;
  }
  int64_t pos = begin;
  while (true) {
    const int64_t count = std::min(inner - col, end - pos);
    fn(offsets.data(), pos, count);
    pos += count;
    if (pos >= end) return;
    // Next row: undo the column advance, then step the outer index with carries.
    for (int k = 0; k < layout.num_operands; ++k) offsets[k] -= col * layout.strides[k][outer_rank];
    col = 0;
    for (int d = outer_rank - 1; d >= 0; --d) {
      for (int k = 0; k < layout.num_operands; ++k) offsets[k] += layout.strides[k][d];
      if (++index[d] < layout.dims[d]) break;
      for (int k = 0; k < layout.num_operands; ++k) offsets[k] -= layout.dims[d] * layout.strides[k][d];
      index[d] = 0;
    }
  }
}

}  // namespace tsr

#endif  // TESSERA_KERNELS_CPU_ELEMENTWISE_BROADCAST_H_

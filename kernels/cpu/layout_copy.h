// `CopyPlan`: the one engine behind the CPU layout kernels (Transpose, Slice, Pad,
// Tile, Expand). Every output axis says where its coordinates read from in the
// source, either as an affine map (base + i * stride: transposes, slices, broadcasts)
// or as a table (pads, tiles) where -1 means "write the fill element". The engine
// drops size-1 axes, merges adjacent affine axes that move together, and then copies
// rows of the innermost axis: contiguous runs with memcpy, strided runs and fills
// with loops specialized on the element size (1, 2, 4 or 8 bytes: it only moves
// bytes, so one plan serves every dtype). When the innermost output axis reads with
// a stride while another axis reads contiguously, the copy is a batched 2-D
// transpose and runs cache-blocked (kernels/cpu/transpose.h).
#ifndef TESSERA_KERNELS_CPU_LAYOUT_COPY_H_
#define TESSERA_KERNELS_CPU_LAYOUT_COPY_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/kernel.h"

namespace tsr {

// One output axis: the source element offset of coordinate i.
struct CopyAxis {
  int64_t size = 1;
  bool affine = true;
  int64_t base = 0;  // affine: offset(i) = base + i * stride
  int64_t stride = 0;
  std::vector<int64_t> table;  // !affine: offset(i) = table[i], -1 for the fill element

  static CopyAxis Affine(int64_t size, int64_t base, int64_t stride) { return CopyAxis{size, true, base, stride, {}}; }
  static CopyAxis Table(std::vector<int64_t> table) {
    const int64_t size = static_cast<int64_t>(table.size());
    return CopyAxis{size, false, 0, 0, std::move(table)};
  }
};

// out[i0, ..., ir] = src[sum_k offset_k(i_k)] (or *fill when any offset is -1), for a
// row-major output whose dims are the axes' sizes. `esize` is 1, 2, 4 or 8; `fill`
// may be null when no table holds -1. Splits the work over ctx.ParallelFor.
void RunCopyPlan(std::vector<CopyAxis> axes, size_t esize, const void* src, void* dst, const void* fill,
                 const KernelContext& ctx);

// Row-major element strides of `dims`.
std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& dims);

}  // namespace tsr

#endif  // TESSERA_KERNELS_CPU_LAYOUT_COPY_H_

// CPU kernels of the scatter-shaped gradient ops (graph/ops/gradient_ops.cc):
//
//   GatherGrad (f32): d data = zeros, then d data[o, indices[k], i] += dY[o, k, i] for
//     k in order. Repeated indices add into the same row, so the work is split over
//     (outer, inner-slice) lanes and never over indices: every element receives its
//     additions in index order, whatever the thread count (the reference's order).
//   SliceGrad (every float dtype; it only moves bytes): d data = zeros with dY written
//     at the positions Slice read. One pass of layout_copy.h's engine builds d data as
//     a gather from dY: each axis of d data is a table mapping a sliced coordinate to
//     its dY offset and every other coordinate to the zero fill, so the zero fill and
//     the strided copy are the same row loop (memcpy runs, strided runs, fills).
//
// Indices are checked against [-size, size) before anything is written; an
// out-of-range index, like any input these kernels do not accept, is handed to the
// reference kernel (RunReferenceKernel), which returns its exact error Status.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "graph/dtype.h"
#include "graph/ops/slice_geometry.h"
#include "graph/shape.h"
#include "graph/status_macros.h"
#include "graph/tensor.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/layout_copy.h"
#include "kernels/cpu/reference_fallback.h"
#include "kernels/kernel.h"

namespace tsr {

namespace {

// The indices wrapped into [0, size), or false when one is outside [-size, size) or
// the dtype is not an index dtype.
bool WrappedIndices(const Tensor& indices, int64_t size, std::vector<int64_t>& rows) {
  if (indices.dtype() != DType::kI32 && indices.dtype() != DType::kI64) return false;
  const int64_t n = indices.num_elements();
  rows.resize(static_cast<size_t>(n));
  bool bad = false;
  auto wrap = [&](const auto* v) {
    for (int64_t k = 0; k < n; ++k) {
      const int64_t x = static_cast<int64_t>(v[k]);
      bad |= (x < -size) | (x >= size);
      rows[k] = x < 0 ? x + size : x;
    }
  };
  if (indices.dtype() == DType::kI32) {
    wrap(indices.data<int32_t>());
  } else {
    wrap(indices.data<int64_t>());
  }
  return !bad;
}

// Zeroes `bytes` bytes in chunks spread over the threads (+0.0 in every float dtype).
void ZeroFill(void* p, int64_t bytes, const KernelContext& ctx) {
  constexpr int64_t kChunk = 256 * 1024;
  char* d = static_cast<char*>(p);
  ctx.ParallelFor((bytes + kChunk - 1) / kChunk, kChunk / 16, [&](int64_t begin, int64_t end) {
    const int64_t lo = begin * kChunk, hi = std::min(bytes, end * kChunk);
    std::memset(d + lo, 0, static_cast<size_t>(hi - lo));
  });
}

// Inner coordinates per work item: 512 bytes of a row, so an embedding row of 768
// floats still splits six ways, while each index still moves whole cache lines.
constexpr int64_t kLanes = 128;

// d data[o, rows[k], i] += dY[o, k, i] over the [outer, size, inner] view of data.
absl::Status GatherGradKernel(KernelContext& ctx) {
  const Tensor& dy = ctx.input(0);
  const Shape& data = ctx.input(2).shape();
  if (data.rank() == 0) return RunReferenceKernel(ctx);
  absl::StatusOr<int> axis = NormalizeAxis(ctx.GetInt("axis"), data.rank());
  if (!axis.ok()) return RunReferenceKernel(ctx);
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < *axis; ++i) outer *= data.dim(i);
  for (int i = *axis + 1; i < data.rank(); ++i) inner *= data.dim(i);
  const int64_t size = data.dim(*axis);
  const int64_t count = ctx.input(1).num_elements();
  std::vector<int64_t> rows;
  Tensor& out = ctx.output(0);
  if (!WrappedIndices(ctx.input(1), size, rows) || dy.num_elements() != outer * count * inner || out.shape() != data ||
      out.dtype() != DType::kF32) {
    return RunReferenceKernel(ctx);
  }
  float* dx = out.data<float>();
  ZeroFill(dx, static_cast<int64_t>(out.num_bytes()), ctx);
  if (outer * count * inner == 0) return absl::OkStatus();
  const float* src = dy.data<float>();
  const int64_t blocks = (inner + kLanes - 1) / kLanes;
  const int64_t lanes = std::min(inner, kLanes);
  ctx.ParallelFor(outer * blocks, count * (lanes / 4 + 4), [&](int64_t begin, int64_t end) {
    for (int64_t item = begin; item < end; ++item) {
      const int64_t o = item / blocks, i0 = (item % blocks) * kLanes, len = std::min(inner - i0, kLanes);
      float* base = dx + o * size * inner + i0;
      const float* from = src + o * count * inner + i0;
      for (int64_t k = 0; k < count; ++k) {
        // The target rows are scattered over the table (an embedding gradient writes
        // random rows): start loading the next one while this one is added.
        if (k + 1 < count) {
          const float* next = base + rows[k + 1] * inner;
          for (int64_t b = 0; b < len; b += 16) __builtin_prefetch(next + b, 1);
        }
        float* d = base + rows[k] * inner;
        const float* s = from + k * inner;
        for (int64_t i = 0; i < len; ++i) d[i] += s[i];
      }
    }
  });
  return absl::OkStatus();
}

// After a zero fill: each row of dY (its innermost axis) stored into d data with the
// innermost axis's step. For a step other than +-1 the copy engine would see one
// fill segment and one copy segment per element; this is a plain strided store.
template <typename U>
void StoreStridedRows(const std::vector<SliceAxis>& slice, const std::vector<int64_t>& data_strides, const U* src,
                      U* dst, const KernelContext& ctx) {
  const int rank = static_cast<int>(slice.size());
  const SliceAxis& last = slice[rank - 1];
  int64_t rows = 1;
  for (int a = 0; a < rank - 1; ++a) rows *= slice[a].size;
  ctx.ParallelFor(rows, last.size + 4 * rank, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      int64_t rest = r, offset = last.first;
      for (int a = rank - 2; a >= 0; --a) {
        offset += (slice[a].first + (rest % slice[a].size) * slice[a].step) * data_strides[a];
        rest /= slice[a].size;
      }
      const U* s = src + r * last.size;
      U* d = dst + offset;
      for (int64_t k = 0; k < last.size; ++k) d[k * last.step] = s[k];
    }
  });
}

// d data = zeros of data's shape with dY at the sliced positions.
absl::Status SliceGradKernel(KernelContext& ctx) {
  const Tensor& dy = ctx.input(0);
  const Shape& data = ctx.input(1).shape();
  const int rank = data.rank();
  const std::vector<int64_t> starts = ctx.input(2).ToInt64Vector();
  const std::vector<int64_t> ends = ctx.input(3).ToInt64Vector();
  const size_t k = starts.size();
  std::vector<int64_t> raw_axes;
  if (ctx.has_input(4)) {
    raw_axes = ctx.input(4).ToInt64Vector();
  } else {
    for (size_t i = 0; i < k; ++i) raw_axes.push_back(static_cast<int64_t>(i));
  }
  const std::vector<int64_t> steps = ctx.has_input(5) ? ctx.input(5).ToInt64Vector() : std::vector<int64_t>(k, 1);
  if (ends.size() != k || raw_axes.size() != k || steps.size() != k) return RunReferenceKernel(ctx);
  std::vector<SliceAxis> slice(rank);
  std::vector<bool> sliced(rank, false);
  for (int a = 0; a < rank; ++a) slice[a] = SliceAxis{0, 1, data.dim(a)};
  for (size_t i = 0; i < k; ++i) {
    const int64_t a = raw_axes[i] < 0 ? raw_axes[i] + rank : raw_axes[i];
    // Invalid or repeated axes and zero steps: the reference's verdict.
    if (a < 0 || a >= rank || sliced[a] || steps[i] == 0) return RunReferenceKernel(ctx);
    sliced[a] = true;
    slice[a] = ResolveSlice(data.dim(static_cast<int>(a)), starts[i], ends[i], steps[i]);
  }
  std::vector<int64_t> dy_dims(rank);
  for (int a = 0; a < rank; ++a) dy_dims[a] = slice[a].size;
  Tensor& out = ctx.output(0);
  if (dy.shape().dims() != dy_dims || out.shape() != data || out.dtype() != dy.dtype()) return RunReferenceKernel(ctx);
  if (rank > 0 && slice[rank - 1].size > 1 && (slice[rank - 1].step > 1 || slice[rank - 1].step < -1)) {
    ZeroFill(out.raw_data(), static_cast<int64_t>(out.num_bytes()), ctx);
    if (dy.num_elements() == 0) return absl::OkStatus();
    const std::vector<int64_t> data_strides = RowMajorStrides(data.dims());
    switch (DTypeSize(dy.dtype())) {
      case 2:
        StoreStridedRows(slice, data_strides, static_cast<const uint16_t*>(dy.raw_data()),
                         static_cast<uint16_t*>(out.raw_data()), ctx);
        break;
      case 4:
        StoreStridedRows(slice, data_strides, static_cast<const uint32_t*>(dy.raw_data()),
                         static_cast<uint32_t*>(out.raw_data()), ctx);
        break;
      default:
        StoreStridedRows(slice, data_strides, static_cast<const uint64_t*>(dy.raw_data()),
                         static_cast<uint64_t*>(out.raw_data()), ctx);
        break;
    }
    return absl::OkStatus();
  }
  const std::vector<int64_t> dy_strides = RowMajorStrides(dy_dims);
  std::vector<CopyAxis> plan;
  for (int a = 0; a < rank; ++a) {
    const SliceAxis& s = slice[a];
    if (s.first == 0 && s.step == 1 && s.size == data.dim(a)) {
      plan.push_back(CopyAxis::Affine(s.size, 0, dy_strides[a]));
      continue;
    }
    std::vector<int64_t> table(static_cast<size_t>(data.dim(a)), -1);
    for (int64_t j = 0; j < s.size; ++j) table[s.first + j * s.step] = j * dy_strides[a];
    plan.push_back(CopyAxis::Table(std::move(table)));
  }
  static constexpr uint64_t kZero = 0;  // +0.0 in every float dtype
  RunCopyPlan(std::move(plan), DTypeSize(dy.dtype()), dy.raw_data(), out.raw_data(), &kZero, ctx);
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterCpuIndexingGradKernels(KernelRegistry& registry) {
  TSR_RETURN_IF_ERROR(registry.Register("GatherGrad", kCpuDevice, DType::kF32, GatherGradKernel));
  TSR_RETURN_IF_ERROR(registry.Register("SliceGrad", kCpuDevice, kFloatDTypes, SliceGradKernel));
  return absl::OkStatus();
}

}  // namespace tsr

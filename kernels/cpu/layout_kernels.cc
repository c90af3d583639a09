// CPU kernels of the layout ops for every dtype: Transpose, Slice, Pad, Tile and
// Expand as copy plans (kernels/cpu/layout_copy.h: collapsed axes, memcpy rows,
// blocked transposes), Concat and Split as parallel memcpy over byte ranges.
//
// Each kernel checks its inputs as far as it needs to; anything it does not accept
// (invalid attributes or inputs, a mis-allocated output) is handed to the reference
// kernel through RunReferenceKernel, which reports the reference's own error.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "graph/dtype.h"
#include "graph/ops/pad_geometry.h"
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

bool OutputIs(KernelContext& ctx, int i, const Shape& shape) {
  return ctx.output(i).shape() == shape && ctx.output(i).dtype() == ctx.input(0).dtype();
}

// Normalized axes in the given order; false on an out-of-range or repeated axis.
bool NormalizeAxes(const std::vector<int64_t>& raw, int rank, std::vector<int>& axes) {
  for (int64_t a : raw) {
    absl::StatusOr<int> n = NormalizeAxis(a, rank);
    if (!n.ok() || std::find(axes.begin(), axes.end(), *n) != axes.end()) return false;
    axes.push_back(*n);
  }
  return true;
}

absl::Status TransposeKernel(KernelContext& ctx) {
  const Tensor& in = ctx.input(0);
  const int rank = in.shape().rank();
  std::vector<int64_t> perm;
  if (ctx.has_attr("perm")) {
    perm = ctx.GetInts("perm");
  } else {
    for (int i = rank - 1; i >= 0; --i) perm.push_back(i);
  }
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  bool valid = static_cast<int>(perm.size()) == rank;
  for (int i = 0; valid && i < rank; ++i) valid = sorted[i] == i;
  if (!valid) return RunReferenceKernel(ctx);
  const std::vector<int64_t> in_strides = RowMajorStrides(in.shape().dims());
  Shape expected;
  std::vector<CopyAxis> axes;
  for (int64_t p : perm) {
    expected.AddDim(in.shape().dim(static_cast<int>(p)));
    axes.push_back(CopyAxis::Affine(in.shape().dim(static_cast<int>(p)), 0, in_strides[p]));
  }
  if (!OutputIs(ctx, 0, expected)) return RunReferenceKernel(ctx);
  RunCopyPlan(std::move(axes), DTypeSize(in.dtype()), in.raw_data(), ctx.output(0).raw_data(), nullptr, ctx);
  return absl::OkStatus();
}

// Copies `total` bytes laid out as `outer` rows, each the concatenation of parts of
// part_bytes[i] bytes, between the joined buffer and the parts: Concat gathers the
// parts into `joined`, Split scatters `joined` into them. Split into byte ranges so
// the threads stay busy whatever the shapes.
void CopyJoinedRows(int64_t outer, const std::vector<int64_t>& part_bytes, const std::vector<char*>& parts,
                    char* joined, bool to_joined, const KernelContext& ctx) {
  std::vector<int64_t> prefix(part_bytes.size() + 1, 0);
  for (size_t i = 0; i < part_bytes.size(); ++i) prefix[i + 1] = prefix[i] + part_bytes[i];
  const int64_t row_bytes = prefix.back();
  const int64_t total = outer * row_bytes;
  if (total == 0) return;
  constexpr int64_t kChunk = 64 * 1024;
  ctx.ParallelFor((total + kChunk - 1) / kChunk, kChunk / 4, [&](int64_t begin, int64_t end) {
    int64_t pos = begin * kChunk;
    const int64_t hi = std::min(total, end * kChunk);
    while (pos < hi) {
      const int64_t o = pos / row_bytes, within = pos % row_bytes;
      // The part holding `within`: the last one starting at or before it (skips empty parts).
      const size_t i = static_cast<size_t>(std::upper_bound(prefix.begin(), prefix.end(), within) - prefix.begin()) - 1;
      const int64_t n = std::min(hi - pos, prefix[i + 1] - within);
      char* part = parts[i] + o * part_bytes[i] + (within - prefix[i]);
      if (to_joined) {
        std::memcpy(joined + pos, part, static_cast<size_t>(n));
      } else {
        std::memcpy(part, joined + pos, static_cast<size_t>(n));
      }
      pos += n;
    }
  });
}

// Product of dims before `axis`, and bytes of one element times the dims after it.
void BlocksAround(const Shape& shape, int axis, DType dtype, int64_t& outer, int64_t& inner_bytes) {
  outer = 1;
  inner_bytes = static_cast<int64_t>(DTypeSize(dtype));
  for (int i = 0; i < axis; ++i) outer *= shape.dim(i);
  for (int i = axis + 1; i < shape.rank(); ++i) inner_bytes *= shape.dim(i);
}

absl::Status ConcatKernel(KernelContext& ctx) {
  const Shape& first = ctx.input(0).shape();
  if (first.rank() == 0) return RunReferenceKernel(ctx);
  absl::StatusOr<int> axis = NormalizeAxis(ctx.GetInt("axis"), first.rank());
  if (!axis.ok()) return RunReferenceKernel(ctx);
  Shape expected = first;
  int64_t sum = 0;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    const Shape& s = ctx.input(i).shape();
    if (s.rank() != first.rank() || ctx.input(i).dtype() != ctx.input(0).dtype()) return RunReferenceKernel(ctx);
    for (int d = 0; d < first.rank(); ++d) {
      if (d != *axis && s.dim(d) != first.dim(d)) return RunReferenceKernel(ctx);
    }
    sum += s.dim(*axis);
  }
  expected.set_dim(*axis, sum);
  if (!OutputIs(ctx, 0, expected)) return RunReferenceKernel(ctx);
  int64_t outer, inner_bytes;
  BlocksAround(expected, *axis, ctx.input(0).dtype(), outer, inner_bytes);
  std::vector<int64_t> part_bytes;
  std::vector<char*> parts;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    part_bytes.push_back(ctx.input(i).shape().dim(*axis) * inner_bytes);
    // CopyJoinedRows only reads the parts when gathering into the joined output.
    parts.push_back(const_cast<char*>(static_cast<const char*>(ctx.input(i).raw_data())));
  }
  CopyJoinedRows(outer, part_bytes, parts, static_cast<char*>(ctx.output(0).raw_data()), true, ctx);
  return absl::OkStatus();
}

// The output sizes along the axis are the allocated ones (as in the reference).
absl::Status SplitKernel(KernelContext& ctx) {
  const Tensor& in = ctx.input(0);
  if (in.shape().rank() == 0) return RunReferenceKernel(ctx);
  absl::StatusOr<int> axis = NormalizeAxis(ctx.GetInt("axis"), in.shape().rank());
  if (!axis.ok()) return RunReferenceKernel(ctx);
  std::vector<int64_t> sizes;
  int64_t sum = 0;
  for (int i = 0; i < ctx.num_outputs(); ++i) {
    const Shape& s = ctx.output(i).shape();
    if (s.rank() != in.shape().rank()) return RunReferenceKernel(ctx);
    Shape expected = in.shape();
    expected.set_dim(*axis, s.dim(*axis));
    if (!OutputIs(ctx, i, expected)) return RunReferenceKernel(ctx);
    sizes.push_back(s.dim(*axis));
    sum += s.dim(*axis);
  }
  if (sum != in.shape().dim(*axis)) return RunReferenceKernel(ctx);
  if (ctx.has_input(1) && ctx.input(1).ToInt64Vector() != sizes) return RunReferenceKernel(ctx);
  int64_t outer, inner_bytes;
  BlocksAround(in.shape(), *axis, in.dtype(), outer, inner_bytes);
  std::vector<int64_t> part_bytes;
  std::vector<char*> parts;
  for (int i = 0; i < ctx.num_outputs(); ++i) {
    part_bytes.push_back(sizes[i] * inner_bytes);
    parts.push_back(static_cast<char*>(ctx.output(i).raw_data()));
  }
  // Split only reads the joined input.
  CopyJoinedRows(outer, part_bytes, parts, const_cast<char*>(static_cast<const char*>(in.raw_data())), false, ctx);
  return absl::OkStatus();
}

absl::Status SliceKernel(KernelContext& ctx) {
  const Tensor& in = ctx.input(0);
  const int rank = in.shape().rank();
  const std::vector<int64_t> starts = ctx.input(1).ToInt64Vector();
  const std::vector<int64_t> ends = ctx.input(2).ToInt64Vector();
  const size_t k = starts.size();
  std::vector<int64_t> raw_axes;
  if (ctx.has_input(3)) {
    raw_axes = ctx.input(3).ToInt64Vector();
  } else {
    for (size_t i = 0; i < k; ++i) raw_axes.push_back(static_cast<int64_t>(i));
  }
  const std::vector<int64_t> steps = ctx.has_input(4) ? ctx.input(4).ToInt64Vector() : std::vector<int64_t>(k, 1);
  std::vector<int> axes;
  if (ends.size() != k || raw_axes.size() != k || steps.size() != k || !NormalizeAxes(raw_axes, rank, axes)) {
    return RunReferenceKernel(ctx);
  }
  std::vector<SliceAxis> geometry(rank);
  for (int a = 0; a < rank; ++a) geometry[a] = SliceAxis{0, 1, in.shape().dim(a)};
  for (size_t i = 0; i < k; ++i) {
    if (steps[i] == 0) return RunReferenceKernel(ctx);
    geometry[axes[i]] = ResolveSlice(in.shape().dim(axes[i]), starts[i], ends[i], steps[i]);
  }
  const std::vector<int64_t> in_strides = RowMajorStrides(in.shape().dims());
  Shape expected;
  std::vector<CopyAxis> plan;
  for (int a = 0; a < rank; ++a) {
    const SliceAxis& g = geometry[a];
    expected.AddDim(g.size);
    plan.push_back(CopyAxis::Affine(g.size, g.first * in_strides[a], g.step * in_strides[a]));
  }
  if (!OutputIs(ctx, 0, expected)) return RunReferenceKernel(ctx);
  RunCopyPlan(std::move(plan), DTypeSize(in.dtype()), in.raw_data(), ctx.output(0).raw_data(), nullptr, ctx);
  return absl::OkStatus();
}

absl::Status PadKernel(KernelContext& ctx) {
  const Tensor& in = ctx.input(0);
  const int rank = in.shape().rank();
  const absl::StatusOr<PadMode> mode = ParsePadMode(ctx.GetString("mode"));
  if (!mode.ok()) return RunReferenceKernel(ctx);
  const std::vector<int64_t> pads = ctx.input(1).ToInt64Vector();
  std::vector<int64_t> raw_axes;
  if (ctx.has_input(3)) {
    raw_axes = ctx.input(3).ToInt64Vector();
  } else {
    for (int i = 0; i < rank; ++i) raw_axes.push_back(i);
  }
  std::vector<int> axes;
  if (!NormalizeAxes(raw_axes, rank, axes) || pads.size() != 2 * axes.size()) return RunReferenceKernel(ctx);
  const size_t n = axes.size();
  std::vector<int64_t> begin(rank, 0), end(rank, 0);
  Shape expected = in.shape();
  for (size_t j = 0; j < n; ++j) {
    const int a = axes[j];
    const int64_t d = in.shape().dim(a);
    begin[a] = pads[j];
    end[a] = pads[j + n];
    expected.set_dim(a, d + pads[j] + pads[j + n]);
    const int64_t max_pad = std::max(pads[j], pads[j + n]);
    if (expected.dim(a) < 0 || (*mode == PadMode::kReflect && max_pad > 0 && max_pad >= d) ||
        (*mode != PadMode::kConstant && max_pad > 0 && d == 0)) {
      return RunReferenceKernel(ctx);
    }
  }
  if (!OutputIs(ctx, 0, expected)) return RunReferenceKernel(ctx);
  const size_t esize = DTypeSize(in.dtype());
  std::vector<char> fill(esize, 0);
  if (ctx.has_input(2)) {
    const Tensor& value = ctx.input(2);
    if (value.num_elements() != 1 || value.dtype() != in.dtype()) return RunReferenceKernel(ctx);
    std::memcpy(fill.data(), value.raw_data(), esize);
  }
  const std::vector<int64_t> in_strides = RowMajorStrides(in.shape().dims());
  std::vector<CopyAxis> plan;
  for (int a = 0; a < rank; ++a) {
    const int64_t d = in.shape().dim(a);
    if (begin[a] == 0 && end[a] == 0) {
      plan.push_back(CopyAxis::Affine(d, 0, in_strides[a]));
      continue;
    }
    std::vector<int64_t> table(static_cast<size_t>(expected.dim(a)));
    for (int64_t i = 0; i < expected.dim(a); ++i) {
      const int64_t s = PadSource(i - begin[a], d, *mode);
      table[i] = s < 0 ? -1 : s * in_strides[a];
    }
    plan.push_back(CopyAxis::Table(std::move(table)));
  }
  RunCopyPlan(std::move(plan), esize, in.raw_data(), ctx.output(0).raw_data(), fill.data(), ctx);
  return absl::OkStatus();
}

// Output axis a of size d * r is the pair of axes [r (reading with stride 0), d]: a
// plan of affine axes only.
absl::Status TileKernel(KernelContext& ctx) {
  const Tensor& in = ctx.input(0);
  const int rank = in.shape().rank();
  const std::vector<int64_t> repeats = ctx.input(1).ToInt64Vector();
  if (static_cast<int>(repeats.size()) != rank) return RunReferenceKernel(ctx);
  const std::vector<int64_t> in_strides = RowMajorStrides(in.shape().dims());
  Shape expected = in.shape();
  std::vector<CopyAxis> plan;
  for (int a = 0; a < rank; ++a) {
    if (repeats[a] < 0) return RunReferenceKernel(ctx);
    expected.set_dim(a, in.shape().dim(a) * repeats[a]);
    plan.push_back(CopyAxis::Affine(repeats[a], 0, 0));
    plan.push_back(CopyAxis::Affine(in.shape().dim(a), 0, in_strides[a]));
  }
  if (!OutputIs(ctx, 0, expected)) return RunReferenceKernel(ctx);
  RunCopyPlan(std::move(plan), DTypeSize(in.dtype()), in.raw_data(), ctx.output(0).raw_data(), nullptr, ctx);
  return absl::OkStatus();
}

// Broadcast copy: stride 0 along the axes where the input has size 1 or is absent.
absl::Status ExpandKernel(KernelContext& ctx) {
  const Tensor& in = ctx.input(0);
  absl::StatusOr<Shape> expected = BroadcastShapes(in.shape(), Shape(ctx.input(1).ToInt64Vector()));
  if (!expected.ok() || !OutputIs(ctx, 0, *expected)) return RunReferenceKernel(ctx);
  const Shape& out = ctx.output(0).shape();
  const int lead = out.rank() - in.shape().rank();
  const std::vector<int64_t> in_strides = RowMajorStrides(in.shape().dims());
  std::vector<CopyAxis> plan;
  for (int a = 0; a < out.rank(); ++a) {
    const bool broadcast = a < lead || in.shape().dim(a - lead) == 1;
    plan.push_back(CopyAxis::Affine(out.dim(a), 0, broadcast ? 0 : in_strides[a - lead]));
  }
  RunCopyPlan(std::move(plan), DTypeSize(in.dtype()), in.raw_data(), ctx.output(0).raw_data(), nullptr, ctx);
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterCpuLayoutKernels(KernelRegistry& registry) {
  TSR_RETURN_IF_ERROR(registry.Register("Transpose", kCpuDevice, kAllDTypes, TransposeKernel));
  TSR_RETURN_IF_ERROR(registry.Register("Concat", kCpuDevice, kAllDTypes, ConcatKernel));
  TSR_RETURN_IF_ERROR(registry.Register("Split", kCpuDevice, kAllDTypes, SplitKernel));
  TSR_RETURN_IF_ERROR(registry.Register("Slice", kCpuDevice, kAllDTypes, SliceKernel));
  TSR_RETURN_IF_ERROR(registry.Register("Pad", kCpuDevice, kAllDTypes, PadKernel));
  TSR_RETURN_IF_ERROR(registry.Register("Tile", kCpuDevice, kAllDTypes, TileKernel));
  TSR_RETURN_IF_ERROR(registry.Register("Expand", kCpuDevice, kAllDTypes, ExpandKernel));
  return absl::OkStatus();
}

}  // namespace tsr

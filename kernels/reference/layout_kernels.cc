// Reference kernels of the layout ops: Transpose, Concat, Split, Slice, Pad, Tile,
// Trilu, DepthToSpace, SpaceToDepth, ReverseSequence (semantics of
// graph/ops/layout_ops.cc).
//
// Each output element is found by plain index arithmetic and copied as DTypeSize raw
// bytes, so one kernel serves every dtype. Output shapes were set by the caller from
// shape inference; each kernel recomputes the shape from its inputs and reports a
// mismatch instead of writing out of bounds.
#include "kernels/reference/layout_kernels.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/dtype.h"
#include "graph/ops/pad_geometry.h"
#include "graph/ops/slice_geometry.h"
#include "graph/shape.h"
#include "graph/status_macros.h"
#include "graph/tensor.h"
#include "kernels/kernel.h"

namespace tsr {

namespace {

std::string IntsString(const std::vector<int64_t>& v) { return absl::StrCat("[", absl::StrJoin(v, ","), "]"); }

absl::Status CheckOutputShape(KernelContext& ctx, int i, const Shape& expected) {
  const Tensor& out = ctx.output(i);
  if (out.shape() != expected || out.dtype() != ctx.input(0).dtype()) {
    return ctx.Error(absl::StrCat("output ", i, " was allocated as ", DTypeName(out.dtype()), out.shape().ToString(),
                                  " but the inputs give ", DTypeName(ctx.input(0).dtype()), expected.ToString()));
  }
  return absl::OkStatus();
}

// Row-major element strides of `shape`.
std::vector<int64_t> Strides(const Shape& shape) {
  std::vector<int64_t> strides(shape.rank(), 1);
  for (int i = shape.rank() - 2; i >= 0; --i) strides[i] = strides[i + 1] * shape.dim(i + 1);
  return strides;
}

// For every element of `out` in row-major order, `source(index)` gives the element
// offset in `in` to copy, or -1 to copy the element at `fill` instead.
template <typename SourceFn>
void CopyByIndex(const Tensor& in, Tensor& out, const void* fill, SourceFn source) {
  const size_t esize = DTypeSize(out.dtype());
  const char* src = static_cast<const char*>(in.raw_data());
  char* dst = static_cast<char*>(out.raw_data());
  const Shape& shape = out.shape();
  std::vector<int64_t> index(shape.rank(), 0);
  for (int64_t o = 0; o < out.num_elements(); ++o) {
    int64_t rest = o;
    for (int a = shape.rank() - 1; a >= 0; --a) {
      index[a] = rest % shape.dim(a);
      rest /= shape.dim(a);
    }
    const int64_t offset = source(index);
    std::memcpy(dst + o * esize, offset < 0 ? fill : src + offset * esize, esize);
  }
}

// Normalizes `axes` against `rank`, keeping their order; rejects repeats.
absl::StatusOr<std::vector<int>> AxesInOrder(const KernelContext& ctx, const std::vector<int64_t>& axes, int rank) {
  std::vector<int> out;
  for (int64_t a : axes) {
    absl::StatusOr<int> n = NormalizeAxis(a, rank);
    if (!n.ok()) return ctx.Error(absl::StrCat("axes ", IntsString(axes), ": ", n.status().message()));
    if (std::find(out.begin(), out.end(), *n) != out.end()) {
      return ctx.Error(absl::StrCat("axes ", IntsString(axes), " repeats axis ", a));
    }
    out.push_back(*n);
  }
  return out;
}

// out[i0, ..., ir] = in at index j with j[perm[k]] = i[k].
absl::Status TransposeKernel(KernelContext& ctx) {
  const Tensor& in = ctx.input(0);
  const int rank = in.shape().rank();
  std::vector<int64_t> perm;
  if (ctx.has_attr("perm")) {
    perm = ctx.GetInts("perm");
  } else {
    for (int i = rank - 1; i >= 0; --i) perm.push_back(i);
  }
  if (static_cast<int>(perm.size()) != rank) {
    return ctx.Error(
        absl::StrCat("perm ", IntsString(perm), " has ", perm.size(), " entries but the input has rank ", rank));
  }
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  for (int i = 0; i < rank; ++i) {
    if (sorted[i] != i) {
      return ctx.Error(
          absl::StrCat("perm ", IntsString(perm), " is not a permutation of the axes of ", in.shape().ToString()));
    }
  }
  Shape expected;
  for (int64_t p : perm) expected.AddDim(in.shape().dim(static_cast<int>(p)));
  TSR_RETURN_IF_ERROR(CheckOutputShape(ctx, 0, expected));
  const std::vector<int64_t> in_strides = Strides(in.shape());
  CopyByIndex(in, ctx.output(0), nullptr, [&](const std::vector<int64_t>& index) {
    int64_t offset = 0;
    for (int k = 0; k < rank; ++k) offset += index[k] * in_strides[perm[k]];
    return offset;
  });
  return absl::OkStatus();
}

// Bytes of one element times the dims after `axis`, and the product of the dims before it.
struct AxisBlocks {
  int64_t outer = 1;
  int64_t inner_bytes = 1;
};
AxisBlocks BlocksAround(const Shape& shape, int axis, DType dtype) {
  AxisBlocks b;
  for (int i = 0; i < axis; ++i) b.outer *= shape.dim(i);
  b.inner_bytes = static_cast<int64_t>(DTypeSize(dtype));
  for (int i = axis + 1; i < shape.rank(); ++i) b.inner_bytes *= shape.dim(i);
  return b;
}

// Row block `o` of `out` is the row blocks `o` of the inputs, one after the other.
absl::Status ConcatKernel(KernelContext& ctx) {
  const Shape& first = ctx.input(0).shape();
  if (first.rank() == 0) return ctx.Error("cannot concatenate scalars");
  absl::StatusOr<int> axis = NormalizeAxis(ctx.GetInt("axis"), first.rank());
  if (!axis.ok()) return ctx.Error(axis.status().message());
  Shape expected = first;
  int64_t total = 0;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    const Shape& s = ctx.input(i).shape();
    for (int d = 0; d < first.rank(); ++d) {
      if (s.rank() != first.rank() || (d != *axis && s.dim(d) != first.dim(d))) {
        return ctx.Error(absl::StrCat("input ", i, " has shape ", s.ToString(), " but input 0 has ", first.ToString(),
                                      "; all dims but axis ", *axis, " must match"));
      }
    }
    total += s.dim(*axis);
  }
  expected.set_dim(*axis, total);
  TSR_RETURN_IF_ERROR(CheckOutputShape(ctx, 0, expected));
  Tensor& out = ctx.output(0);
  const AxisBlocks b = BlocksAround(expected, *axis, out.dtype());
  char* dst = static_cast<char*>(out.raw_data());
  for (int64_t o = 0; o < b.outer; ++o) {
    for (int i = 0; i < ctx.num_inputs(); ++i) {
      const Tensor& in = ctx.input(i);
      const int64_t bytes = in.shape().dim(*axis) * b.inner_bytes;
      if (bytes == 0) continue;
      std::memcpy(dst, static_cast<const char*>(in.raw_data()) + o * bytes, bytes);
      dst += bytes;
    }
  }
  return absl::OkStatus();
}

// The inverse of Concat; the output sizes along the axis are the allocated ones.
absl::Status SplitKernel(KernelContext& ctx) {
  const Tensor& in = ctx.input(0);
  if (in.shape().rank() == 0) return ctx.Error("cannot split a scalar");
  absl::StatusOr<int> axis = NormalizeAxis(ctx.GetInt("axis"), in.shape().rank());
  if (!axis.ok()) return ctx.Error(axis.status().message());
  std::vector<int64_t> sizes;
  for (int i = 0; i < ctx.num_outputs(); ++i) {
    const Shape& s = ctx.output(i).shape();
    sizes.push_back(s.rank() == in.shape().rank() ? s.dim(*axis) : -1);
  }
  if (ctx.has_input(1) && ctx.input(1).ToInt64Vector() != sizes) {
    return ctx.Error(absl::StrCat("input 'split' ", IntsString(ctx.input(1).ToInt64Vector()),
                                  " does not match the allocated output sizes ", IntsString(sizes)));
  }
  int64_t sum = 0;
  for (int i = 0; i < ctx.num_outputs(); ++i) {
    Shape expected = in.shape();
    expected.set_dim(*axis, std::max<int64_t>(sizes[i], 0));
    TSR_RETURN_IF_ERROR(CheckOutputShape(ctx, i, expected));
    sum += sizes[i];
  }
  if (sum != in.shape().dim(*axis)) {
    return ctx.Error(absl::StrCat("the output sizes ", IntsString(sizes), " along axis ", *axis, " sum to ", sum,
                                  " but the input ", in.shape().ToString(), " has ", in.shape().dim(*axis)));
  }
  const AxisBlocks b = BlocksAround(in.shape(), *axis, in.dtype());
  const char* src = static_cast<const char*>(in.raw_data());
  for (int64_t o = 0; o < b.outer; ++o) {
    for (int i = 0; i < ctx.num_outputs(); ++i) {
      const int64_t bytes = sizes[i] * b.inner_bytes;
      if (bytes == 0) continue;
      std::memcpy(static_cast<char*>(ctx.output(i).raw_data()) + o * bytes, src, bytes);
      src += bytes;
    }
  }
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
  std::vector<int64_t> steps = ctx.has_input(4) ? ctx.input(4).ToInt64Vector() : std::vector<int64_t>(k, 1);
  if (ends.size() != k || raw_axes.size() != k || steps.size() != k) {
    return ctx.Error(absl::StrCat("starts, ends, axes and steps must have the same length but have ", k, ", ",
                                  ends.size(), ", ", raw_axes.size(), " and ", steps.size()));
  }
  TSR_ASSIGN_OR_RETURN(std::vector<int> axes, AxesInOrder(ctx, raw_axes, rank));
  // Untouched axes are taken whole.
  std::vector<SliceAxis> geometry(rank);
  for (int a = 0; a < rank; ++a) geometry[a] = SliceAxis{0, 1, in.shape().dim(a)};
  for (size_t i = 0; i < k; ++i) {
    if (steps[i] == 0) return ctx.Error(absl::StrCat("steps ", IntsString(steps), " holds 0"));
    geometry[axes[i]] = ResolveSlice(in.shape().dim(axes[i]), starts[i], ends[i], steps[i]);
  }
  Shape expected;
  for (const SliceAxis& g : geometry) expected.AddDim(g.size);
  TSR_RETURN_IF_ERROR(CheckOutputShape(ctx, 0, expected));
  const std::vector<int64_t> in_strides = Strides(in.shape());
  CopyByIndex(in, ctx.output(0), nullptr, [&](const std::vector<int64_t>& index) {
    int64_t offset = 0;
    for (int a = 0; a < rank; ++a) offset += (geometry[a].first + index[a] * geometry[a].step) * in_strides[a];
    return offset;
  });
  return absl::OkStatus();
}

absl::Status PadKernel(KernelContext& ctx) {
  const Tensor& in = ctx.input(0);
  const int rank = in.shape().rank();
  const absl::StatusOr<PadMode> mode = ParsePadMode(ctx.GetString("mode"));
  if (!mode.ok()) return ctx.Error(mode.status().message());
  const std::vector<int64_t> pads = ctx.input(1).ToInt64Vector();
  std::vector<int64_t> raw_axes;
  if (ctx.has_input(3)) {
    raw_axes = ctx.input(3).ToInt64Vector();
  } else {
    for (int i = 0; i < rank; ++i) raw_axes.push_back(i);
  }
  TSR_ASSIGN_OR_RETURN(std::vector<int> axes, AxesInOrder(ctx, raw_axes, rank));
  const size_t n = axes.size();
  if (pads.size() != 2 * n) {
    return ctx.Error(
        absl::StrCat("pads ", IntsString(pads), " has ", pads.size(), " entries but ", n, " padded axes need ", 2 * n));
  }
  std::vector<int64_t> begin(rank, 0);
  Shape expected = in.shape();
  for (size_t j = 0; j < n; ++j) {
    begin[axes[j]] = pads[j];
    expected.set_dim(axes[j], in.shape().dim(axes[j]) + pads[j] + pads[j + n]);
    if (expected.dim(axes[j]) < 0) {
      return ctx.Error(absl::StrCat("pads ", IntsString(pads), " give axis ", axes[j], " a negative size"));
    }
    const int64_t d = in.shape().dim(axes[j]);
    const int64_t max_pad = std::max(pads[j], pads[j + n]);
    if (*mode == PadMode::kReflect && max_pad > 0 && max_pad >= d) {
      return ctx.Error(absl::StrCat("reflect padding of ", max_pad, " on axis ", axes[j], " needs pads < ", d));
    }
    if (*mode != PadMode::kConstant && max_pad > 0 && d == 0) {
      return ctx.Error(
          absl::StrCat(ctx.GetString("mode"), " padding needs a non-empty axis but axis ", axes[j], " is empty"));
    }
  }
  TSR_RETURN_IF_ERROR(CheckOutputShape(ctx, 0, expected));
  // The fill element: constant_value's bytes, or zero bytes.
  std::vector<char> fill(DTypeSize(in.dtype()), 0);
  if (ctx.has_input(2)) {
    if (ctx.input(2).num_elements() != 1 || ctx.input(2).dtype() != in.dtype()) {
      return ctx.Error(absl::StrCat("input 'constant_value' must be one ", DTypeName(in.dtype()), " value but is ",
                                    DTypeName(ctx.input(2).dtype()), ctx.input(2).shape().ToString()));
    }
    std::memcpy(fill.data(), ctx.input(2).raw_data(), fill.size());
  }
  const std::vector<int64_t> in_strides = Strides(in.shape());
  CopyByIndex(in, ctx.output(0), fill.data(), [&](const std::vector<int64_t>& index) -> int64_t {
    int64_t offset = 0;
    for (int a = 0; a < rank; ++a) {
      const int64_t i = PadSource(index[a] - begin[a], in.shape().dim(a), *mode);
      if (i < 0) return -1;
      offset += i * in_strides[a];
    }
    return offset;
  });
  return absl::OkStatus();
}

// out[i] = in[i mod in.shape].
absl::Status TileKernel(KernelContext& ctx) {
  const Tensor& in = ctx.input(0);
  const int rank = in.shape().rank();
  const std::vector<int64_t> repeats = ctx.input(1).ToInt64Vector();
  if (static_cast<int>(repeats.size()) != rank) {
    return ctx.Error(absl::StrCat("repeats ", IntsString(repeats), " has ", repeats.size(),
                                  " entries but the input has rank ", rank));
  }
  Shape expected = in.shape();
  for (int a = 0; a < rank; ++a) {
    if (repeats[a] < 0) return ctx.Error(absl::StrCat("repeats ", IntsString(repeats), " holds a negative count"));
    expected.set_dim(a, in.shape().dim(a) * repeats[a]);
  }
  TSR_RETURN_IF_ERROR(CheckOutputShape(ctx, 0, expected));
  const std::vector<int64_t> in_strides = Strides(in.shape());
  // A non-empty output has non-empty input axes, so the modulo is defined.
  CopyByIndex(in, ctx.output(0), nullptr, [&](const std::vector<int64_t>& index) {
    int64_t offset = 0;
    for (int a = 0; a < rank; ++a) offset += (index[a] % in.shape().dim(a)) * in_strides[a];
    return offset;
  });
  return absl::OkStatus();
}

// Zero in every dtype is all-zero bytes (0.0, +0 half, false).
constexpr char kZeroBytes[8] = {};

// Elements outside the kept triangle of the last two axes become 0.
absl::Status TriluKernel(KernelContext& ctx) {
  const Tensor& in = ctx.input(0);
  const int rank = in.shape().rank();
  if (rank < 2) return ctx.Error(absl::StrCat("input has shape ", in.shape().ToString(), " but rank >= 2 is required"));
  int64_t k = 0;
  if (ctx.has_input(1)) {
    if (ctx.input(1).num_elements() != 1) {
      return ctx.Error(absl::StrCat("input 'k' must hold one value but has shape ", ctx.input(1).shape().ToString()));
    }
    k = ctx.input(1).GetAsInt64(0);
  }
  TSR_RETURN_IF_ERROR(CheckOutputShape(ctx, 0, in.shape()));
  const bool upper = ctx.GetInt("upper") != 0;
  CopyByIndex(in, ctx.output(0), kZeroBytes, [&](const std::vector<int64_t>& index) -> int64_t {
    // Compared in int64 with k clamped, so a huge k cannot overflow j - i.
    const int64_t diff = index[rank - 1] - index[rank - 2];
    const int64_t kk = std::clamp<int64_t>(k, -kMaxElements, kMaxElements);
    const bool keep = upper ? diff >= kk : diff <= kk;
    if (!keep) return -1;
    int64_t offset = 0;
    for (int a = 0; a < rank; ++a) offset = offset * in.shape().dim(a) + index[a];
    return offset;
  });
  return absl::OkStatus();
}

// DepthToSpace: out[n, c, h*b + i, w*b + j] = in[n, (i*b + j)*C' + c, h, w] (DCR) or
// in[n, c*b*b + i*b + j, h, w] (CRD), where C' = C / b^2.
absl::Status DepthToSpaceKernel(KernelContext& ctx) {
  const Tensor& in = ctx.input(0);
  const Shape& s = in.shape();
  const int64_t b = ctx.GetInt("blocksize");
  const std::string mode = ctx.GetString("mode");
  if (s.rank() != 4 || b < 1 || s.dim(1) % (b * b) != 0 || (mode != "DCR" && mode != "CRD")) {
    return ctx.Error(absl::StrCat("input ", s.ToString(), " with blocksize ", b, " and mode '", mode,
                                  "': need a 4-D input whose channels are a multiple of blocksize^2, mode DCR or CRD"));
  }
  const int64_t c_out = s.dim(1) / (b * b);
  TSR_RETURN_IF_ERROR(CheckOutputShape(ctx, 0, Shape{s.dim(0), c_out, s.dim(2) * b, s.dim(3) * b}));
  const bool dcr = mode == "DCR";
  CopyByIndex(in, ctx.output(0), nullptr, [&](const std::vector<int64_t>& o) -> int64_t {
    const int64_t i = o[2] % b, j = o[3] % b;
    const int64_t c = dcr ? (i * b + j) * c_out + o[1] : o[1] * b * b + i * b + j;
    return ((o[0] * s.dim(1) + c) * s.dim(2) + o[2] / b) * s.dim(3) + o[3] / b;
  });
  return absl::OkStatus();
}

// out[n, (i*b + j)*C + c, h, w] = in[n, c, h*b + i, w*b + j].
absl::Status SpaceToDepthKernel(KernelContext& ctx) {
  const Tensor& in = ctx.input(0);
  const Shape& s = in.shape();
  const int64_t b = ctx.GetInt("blocksize");
  if (s.rank() != 4 || b < 1 || s.dim(2) % b != 0 || s.dim(3) % b != 0) {
    return ctx.Error(absl::StrCat("input ", s.ToString(), " with blocksize ", b,
                                  ": need a 4-D input whose height and width are multiples of blocksize"));
  }
  const int64_t c_in = s.dim(1);
  TSR_RETURN_IF_ERROR(CheckOutputShape(ctx, 0, Shape{s.dim(0), c_in * b * b, s.dim(2) / b, s.dim(3) / b}));
  CopyByIndex(in, ctx.output(0), nullptr, [&](const std::vector<int64_t>& o) -> int64_t {
    const int64_t block = o[1] / c_in, c = o[1] % c_in;
    const int64_t i = block / b, j = block % b;
    return ((o[0] * c_in + c) * s.dim(2) + o[2] * b + i) * s.dim(3) + o[3] * b + j;
  });
  return absl::OkStatus();
}

// out[t, b] = in[len[b] - 1 - t, b] for t < len[b], else in[t, b] (with the axes
// swapped when time_axis is 1).
absl::Status ReverseSequenceKernel(KernelContext& ctx) {
  const Tensor& in = ctx.input(0);
  const Shape& s = in.shape();
  const int time_axis = static_cast<int>(ctx.GetInt("time_axis"));
  const int batch_axis = static_cast<int>(ctx.GetInt("batch_axis"));
  if (s.rank() < 2 || !((time_axis == 0 && batch_axis == 1) || (time_axis == 1 && batch_axis == 0))) {
    return ctx.Error(absl::StrCat("input ", s.ToString(), " with time_axis ", time_axis, " and batch_axis ", batch_axis,
                                  ": need rank >= 2 and the axes 0 and 1 in some order"));
  }
  const std::vector<int64_t> lens = ctx.input(1).ToInt64Vector();
  if (static_cast<int64_t>(lens.size()) != s.dim(batch_axis)) {
    return ctx.Error(absl::StrCat("input 'sequence_lens' has ", lens.size(), " values but the batch axis of ",
                                  s.ToString(), " has ", s.dim(batch_axis)));
  }
  for (size_t i = 0; i < lens.size(); ++i) {
    if (lens[i] < 0 || lens[i] > s.dim(time_axis)) {
      return ctx.Error(absl::StrCat("sequence_lens[", i, "] is ", lens[i], " but must be in [0, ", s.dim(time_axis),
                                    "] (the time axis of ", s.ToString(), ")"));
    }
  }
  TSR_RETURN_IF_ERROR(CheckOutputShape(ctx, 0, s));
  const std::vector<int64_t> strides = Strides(s);
  CopyByIndex(in, ctx.output(0), nullptr, [&](const std::vector<int64_t>& o) -> int64_t {
    const int64_t len = lens[o[batch_axis]];
    int64_t offset = 0;
    for (int a = 0; a < s.rank(); ++a) {
      const int64_t v = a == time_axis && o[a] < len ? len - 1 - o[a] : o[a];
      offset += v * strides[a];
    }
    return offset;
  });
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterReferenceLayoutKernels(KernelRegistry& registry) {
  TSR_RETURN_IF_ERROR(registry.Register("Transpose", kReferenceDevice, kAllDTypes, TransposeKernel));
  TSR_RETURN_IF_ERROR(registry.Register("Concat", kReferenceDevice, kAllDTypes, ConcatKernel));
  TSR_RETURN_IF_ERROR(registry.Register("Split", kReferenceDevice, kAllDTypes, SplitKernel));
  TSR_RETURN_IF_ERROR(registry.Register("Slice", kReferenceDevice, kAllDTypes, SliceKernel));
  TSR_RETURN_IF_ERROR(registry.Register("Pad", kReferenceDevice, kAllDTypes, PadKernel));
  TSR_RETURN_IF_ERROR(registry.Register("Tile", kReferenceDevice, kAllDTypes, TileKernel));
  TSR_RETURN_IF_ERROR(registry.Register("Trilu", kReferenceDevice, kAllDTypes, TriluKernel));
  TSR_RETURN_IF_ERROR(registry.Register("DepthToSpace", kReferenceDevice, kAllDTypes, DepthToSpaceKernel));
  TSR_RETURN_IF_ERROR(registry.Register("SpaceToDepth", kReferenceDevice, kAllDTypes, SpaceToDepthKernel));
  TSR_RETURN_IF_ERROR(registry.Register("ReverseSequence", kReferenceDevice, kAllDTypes, ReverseSequenceKernel));
  return absl::OkStatus();
}

}  // namespace tsr

// CPU f32 reductions: ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd (ONNX
// opset 18: constant `axes` input, keepdims, noop_with_empty_axes) and ArgMax.
//
// The input is viewed with size-1 dims dropped and adjacent dims of the same kind
// (reduced or kept) merged. When the last merged dim is reduced, each output reduces
// contiguous runs along memory ("horizontal", inner == 1); when it is kept, whole rows
// of `inner` values are accumulated into per-column accumulators ("vertical"). Other
// reduced dims, adjacent or not, become a list of run/row offsets, so no transpose is
// needed. Work is split over outputs (and column blocks); each output is computed by
// one thread in a fixed order, so results do not depend on the split.
//
// Empty inputs give the reference's identities (sum 0, product 1, max -inf, min +inf,
// mean NaN). ReduceProd multiplies in double like the reference (f32 products under-
// and overflow where the double ones do not), in portable code.
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/dtype.h"
#include "graph/status_macros.h"
#include "graph/tensor.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/reduction_simd.h"
#include "kernels/kernel.h"

namespace tsr {

namespace {

using reduction_internal::FloatReduceKind;
using reduction_internal::kColumnBlock;
using reduction_internal::ReductionIsaKernels;

enum class ReduceKind { kSum, kMean, kMax, kMin, kProd };

const ReductionIsaKernels& ActiveKernels() {
  return ActiveCpuIsa() >= CpuIsa::kAvx2 ? reduction_internal::Avx2ReductionKernels()
                                         : reduction_internal::ScalarReductionKernels();
}

// A dimension of the merged view: its size, row-major stride in the input, and
// whether it is reduced.
struct MergedDim {
  int64_t size;
  int64_t stride;
  bool reduced;
};

// Offsets (in elements) of every multi-index over `dims`, in row-major order.
std::vector<int64_t> Offsets(const std::vector<MergedDim>& dims) {
  std::vector<int64_t> offsets = {0};
  for (const MergedDim& d : dims) {
    std::vector<int64_t> next;
    next.reserve(offsets.size() * d.size);
    for (int64_t base : offsets) {
      for (int64_t i = 0; i < d.size; ++i) next.push_back(base + i * d.stride);
    }
    offsets = std::move(next);
  }
  return offsets;
}

// The input offset of outer index `o` over the kept dims `outer`.
int64_t OuterOffset(const std::vector<MergedDim>& outer, int64_t o) {
  int64_t offset = 0;
  for (int i = static_cast<int>(outer.size()) - 1; i >= 0; --i) {
    offset += (o % outer[i].size) * outer[i].stride;
    o /= outer[i].size;
  }
  return offset;
}

// Products in double over runs (len = run length) or rows (width columns).
float ProdRuns(const float* base, const std::vector<int64_t>& offsets, int64_t len) {
  double acc = 1.0;
  for (int64_t off : offsets) {
    for (int64_t i = 0; i < len; ++i) acc *= base[off + i];
  }
  return static_cast<float>(acc);
}

void ProdRows(const float* base, const std::vector<int64_t>& offsets, int64_t width, float* out) {
  double acc[kColumnBlock];
  for (int64_t j = 0; j < width; ++j) acc[j] = 1.0;
  for (int64_t off : offsets) {
    for (int64_t j = 0; j < width; ++j) acc[j] *= base[off + j];
  }
  for (int64_t j = 0; j < width; ++j) out[j] = static_cast<float>(acc[j]);
}

absl::Status ReduceKernel(KernelContext& ctx, ReduceKind kind) {
  const Tensor& in = ctx.input(0);
  Tensor& out = ctx.output(0);
  const Shape& shape = in.shape();
  const int rank = shape.rank();
  std::vector<int64_t> axes;
  if (ctx.has_input(1)) axes = ctx.input(1).ToInt64Vector();
  const float* pi = in.data<float>();
  float* po = out.data<float>();
  if (axes.empty() && ctx.GetInt("noop_with_empty_axes") == 1) {
    if (out.num_elements() != in.num_elements()) return ctx.Error("identity reduction changes the element count");
    if (po != pi && in.num_elements() > 0) std::memcpy(po, pi, in.num_bytes());
    return absl::OkStatus();
  }
  std::vector<bool> reduced(rank, axes.empty());
  for (int64_t a : axes) {
    if (a < -rank || a >= rank) return ctx.Error(absl::StrCat("axis ", a, " is out of range for rank ", rank));
    reduced[a < 0 ? a + rank : a] = true;
  }
  int64_t out_count = 1, count = 1;
  for (int d = 0; d < rank; ++d) (reduced[d] ? count : out_count) *= shape.dim(d);
  if (out_count != out.num_elements()) {
    return ctx.Error(absl::StrCat("output has ", out.num_elements(), " elements but the reduction gives ", out_count));
  }
  if (out_count == 0) return absl::OkStatus();
  if (count == 0) {
    constexpr float kInf = std::numeric_limits<float>::infinity();
    const float identity = kind == ReduceKind::kSum    ? 0.0f
                           : kind == ReduceKind::kProd ? 1.0f
                           : kind == ReduceKind::kMax  ? -kInf
                           : kind == ReduceKind::kMin  ? kInf
                                                       : std::numeric_limits<float>::quiet_NaN();  // 0 / 0
    for (int64_t i = 0; i < out_count; ++i) po[i] = identity;
    return absl::OkStatus();
  }

  // Merge the view: drop size-1 dims, fuse neighbours of the same kind.
  std::vector<MergedDim> dims;
  for (int d = 0; d < rank; ++d) {
    if (shape.dim(d) == 1) continue;
    if (!dims.empty() && dims.back().reduced == reduced[d]) {
      dims.back().size *= shape.dim(d);
    } else {
      dims.push_back({shape.dim(d), 0, reduced[d]});
    }
  }
  int64_t stride = 1;
  for (int i = static_cast<int>(dims.size()) - 1; i >= 0; --i) dims[i].stride = stride, stride *= dims[i].size;
  if (count == 1) {  // nothing is combined: every reduction is the identity map
    if (po != pi) std::memcpy(po, pi, in.num_bytes());
    return absl::OkStatus();
  }

  const bool horizontal = dims.back().reduced;
  const int64_t inner = horizontal ? 1 : dims.back().size;
  std::vector<MergedDim> outer_dims, reduced_dims;
  for (size_t i = 0; i + (horizontal ? 0 : 1) < dims.size(); ++i) {
    (dims[i].reduced ? reduced_dims : outer_dims).push_back(dims[i]);
  }
  const int64_t outer = out_count / inner;
  const FloatReduceKind fkind = kind == ReduceKind::kMax   ? FloatReduceKind::kMax
                                : kind == ReduceKind::kMin ? FloatReduceKind::kMin
                                                           : FloatReduceKind::kSum;
  const double divisor = kind == ReduceKind::kMean ? static_cast<double>(count) : 1.0;
  const ReductionIsaKernels& kernels = ActiveKernels();

  if (horizontal) {
    const int64_t len = reduced_dims.back().size;  // the innermost reduced dim, stride 1
    reduced_dims.pop_back();
    const std::vector<int64_t> runs = Offsets(reduced_dims);
    ctx.ParallelFor(outer, count, [&](int64_t begin, int64_t end) {
      for (int64_t o = begin; o < end; ++o) {
        const float* base = pi + OuterOffset(outer_dims, o);
        po[o] = kind == ReduceKind::kProd
                    ? ProdRuns(base, runs, len)
                    : kernels.reduce_runs(fkind, base, runs.data(), static_cast<int64_t>(runs.size()), len, divisor);
      }
    });
    return absl::OkStatus();
  }
  const std::vector<int64_t> rows = Offsets(reduced_dims);
  const int64_t blocks = (inner + kColumnBlock - 1) / kColumnBlock;
  const int64_t block_cost = count * (inner < kColumnBlock ? inner : kColumnBlock);
  ctx.ParallelFor(outer * blocks, block_cost, [&](int64_t begin, int64_t end) {
    for (int64_t item = begin; item < end; ++item) {
      const int64_t o = item / blocks, j0 = (item % blocks) * kColumnBlock;
      const int64_t width = inner - j0 < kColumnBlock ? inner - j0 : kColumnBlock;
      const float* base = pi + OuterOffset(outer_dims, o) + j0;
      float* dst = po + o * inner + j0;
      if (kind == ReduceKind::kProd) {
        ProdRows(base, rows, width, dst);
      } else {
        kernels.reduce_rows(fkind, base, rows.data(), static_cast<int64_t>(rows.size()), width, divisor, dst);
      }
    }
  });
  return absl::OkStatus();
}

absl::Status ArgMaxKernel(KernelContext& ctx) {
  const Tensor& in = ctx.input(0);
  Tensor& out = ctx.output(0);
  const int rank = in.shape().rank();
  const int64_t axis_attr = ctx.GetInt("axis");
  if (axis_attr < -rank || axis_attr >= rank) {
    return ctx.Error(absl::StrCat("axis ", axis_attr, " is out of range for rank ", rank));
  }
  const int axis = static_cast<int>(axis_attr < 0 ? axis_attr + rank : axis_attr);
  const bool last = ctx.GetInt("select_last_index") == 1;
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= in.shape().dim(d);
  for (int d = axis + 1; d < rank; ++d) inner *= in.shape().dim(d);
  const int64_t n = in.shape().dim(axis);
  if (n == 0) return ctx.Error("ArgMax over an empty axis");
  if (out.num_elements() != outer * inner) return ctx.Error("output element count does not match the input");
  const float* pi = in.data<float>();
  int64_t* po = out.data<int64_t>();
  const ReductionIsaKernels& kernels = ActiveKernels();
  if (inner == 1) {
    ctx.ParallelFor(outer, n, [&](int64_t begin, int64_t end) {
      for (int64_t o = begin; o < end; ++o) po[o] = kernels.argmax_contiguous(pi + o * n, n, last);
    });
    return absl::OkStatus();
  }
  if (n > std::numeric_limits<int32_t>::max()) {
    // argmax_columns keeps int32 indices; such an axis (8 GiB per column) is left to
    // the reference kernel.
    const KernelFn* reference = KernelRegistry::Global().Find("ArgMax", kReferenceDevice, DType::kF32);
    if (reference == nullptr) return ctx.Error("no reference ArgMax kernel for f32");
    return (*reference)(ctx);
  }
  const int64_t blocks = (inner + kColumnBlock - 1) / kColumnBlock;
  ctx.ParallelFor(outer * blocks, n * (inner < kColumnBlock ? inner : kColumnBlock), [&](int64_t begin, int64_t end) {
    for (int64_t item = begin; item < end; ++item) {
      const int64_t o = item / blocks, j0 = (item % blocks) * kColumnBlock;
      const int64_t width = inner - j0 < kColumnBlock ? inner - j0 : kColumnBlock;
      kernels.argmax_columns(pi + o * n * inner + j0, n, inner, width, last, po + o * inner + j0);
    }
  });
  return absl::OkStatus();
}

KernelFn Reduce(ReduceKind kind) {
  return [kind](KernelContext& ctx) { return ReduceKernel(ctx, kind); };
}

}  // namespace

absl::Status RegisterCpuReductionKernels(KernelRegistry& registry) {
  TSR_RETURN_IF_ERROR(registry.Register("ReduceSum", kCpuDevice, DType::kF32, Reduce(ReduceKind::kSum)));
  TSR_RETURN_IF_ERROR(registry.Register("ReduceMean", kCpuDevice, DType::kF32, Reduce(ReduceKind::kMean)));
  TSR_RETURN_IF_ERROR(registry.Register("ReduceMax", kCpuDevice, DType::kF32, Reduce(ReduceKind::kMax)));
  TSR_RETURN_IF_ERROR(registry.Register("ReduceMin", kCpuDevice, DType::kF32, Reduce(ReduceKind::kMin)));
  TSR_RETURN_IF_ERROR(registry.Register("ReduceProd", kCpuDevice, DType::kF32, Reduce(ReduceKind::kProd)));
  TSR_RETURN_IF_ERROR(registry.Register("ArgMax", kCpuDevice, DType::kF32, ArgMaxKernel));
  return absl::OkStatus();
}

}  // namespace tsr

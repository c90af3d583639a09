// Reference pooling kernels over X [N, C, D1, ..., Dn]: MaxPool (with Indices),
// AveragePool and GlobalAveragePool. Plain loops in double; the window geometry
// (output sizes, the pads auto_pad resolves to, ceil_mode) comes from
// graph/ops/conv_geometry.h, the same code shape inference uses.
//
// MaxPool's Indices follow ONNX: the flat index of the maximum in X, counting the N
// and C dimensions, with the spatial part row-major (storage_order=0) or
// column-major (storage_order=1). Ties keep the first maximum in window order.
#include <cstdint>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "graph/dtype.h"
#include "graph/ops/conv_geometry.h"
#include "graph/status_macros.h"
#include "graph/tensor.h"
#include "kernels/kernel.h"
#include "kernels/reference/convert.h"
#include "kernels/register_kernels.h"

namespace tsr {

namespace {

constexpr DType kMaxPoolDTypes[] = {DType::kF32, DType::kF64, DType::kF16, DType::kBF16, DType::kI8, DType::kU8};
constexpr DType kAveragePoolDTypes[] = {DType::kF32, DType::kF64, DType::kF16, DType::kBF16};

std::vector<double> ToDoubles(const Tensor& t) {
  std::vector<double> out(static_cast<size_t>(t.num_elements()));
  VisitDType(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* p = t.data<T>();
    for (size_t i = 0; i < out.size(); ++i) {
      out[i] = reference::WidenToDouble(p[i]);
    }
  });
  return out;
}

// Exact for MaxPool (every value came from the input); averages round to nearest.
void StoreDoubles(const std::vector<double>& values, Tensor& t) {
  VisitDType(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* p = t.data<T>();
    for (size_t i = 0; i < values.size(); ++i) {
      p[i] = reference::FromDouble<T>(values[i]);
    }
  });
}

int64_t Product(absl::Span<const int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

// Advances a row-major multi-index over `dims`; false after the last one.
bool NextIndex(std::vector<int64_t>& index, absl::Span<const int64_t> dims) {
  for (int i = static_cast<int>(dims.size()) - 1; i >= 0; --i) {
    if (++index[i] < dims[i]) return true;
    index[i] = 0;
  }
  return false;
}

// One window tap: its input coordinates and whether they lie inside X (not padding).
struct Tap {
  std::vector<int64_t> pos;
  bool inside = true;
};

// The input coordinates of tap `k` of the window at output position `o`.
Tap TapAt(const WindowGeometry& g, absl::Span<const int64_t> o, absl::Span<const int64_t> k,
          absl::Span<const int64_t> in_spatial) {
  Tap tap;
  tap.pos.resize(g.num_spatial());
  for (int d = 0; d < g.num_spatial(); ++d) {
    tap.pos[d] = o[d] * g.strides[d] - g.pads_begin[d] + k[d] * g.dilations[d];
    if (tap.pos[d] < 0 || tap.pos[d] >= in_spatial[d]) tap.inside = false;
  }
  return tap;
}

int64_t RowMajorOffset(absl::Span<const int64_t> pos, absl::Span<const int64_t> dims) {
  int64_t offset = 0;
  for (size_t d = 0; d < dims.size(); ++d) offset = offset * dims[d] + pos[d];
  return offset;
}

int64_t ColumnMajorOffset(absl::Span<const int64_t> pos, absl::Span<const int64_t> dims) {
  int64_t offset = 0;
  for (int d = static_cast<int>(dims.size()) - 1; d >= 0; --d) offset = offset * dims[d] + pos[d];
  return offset;
}

// Geometry of a windowed pool on X, with the node's attributes.
absl::StatusOr<WindowGeometry> PoolGeometry(const KernelContext& ctx, absl::Span<const int64_t> in_spatial) {
  absl::StatusOr<WindowSpec> spec = WindowSpecFromAttrs(ctx.attrs());
  if (!spec.ok()) return ctx.Error(spec.status().message());
  absl::StatusOr<WindowGeometry> g = ComputeWindowGeometry(in_spatial, *spec);
  if (!g.ok()) return ctx.Error(g.status().message());
  return g;
}

absl::Status MaxPoolKernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const absl::Span<const int64_t> in_spatial = absl::MakeConstSpan(x.shape().dims()).subspan(2);
  TSR_ASSIGN_OR_RETURN(WindowGeometry g, PoolGeometry(ctx, in_spatial));
  const bool column_major = ctx.GetInt("storage_order") == 1;
  const int64_t planes = x.shape().dim(0) * x.shape().dim(1);
  const int64_t in_size = Product(in_spatial);
  const int64_t out_size = Product(g.output);
  const int64_t taps = g.kernel_elements();

  const std::vector<double> xv = ToDoubles(x);
  std::vector<double> yv(static_cast<size_t>(planes * out_size));
  std::vector<int64_t> indices(yv.size());
  for (int64_t p = 0; p < planes; ++p) {
    std::vector<int64_t> o(g.num_spatial(), 0);
    for (int64_t oi = 0; oi < out_size; ++oi, NextIndex(o, g.output)) {
      double best = -std::numeric_limits<double>::infinity();
      int64_t best_index = -1;
      std::vector<int64_t> k(g.num_spatial(), 0);
      for (int64_t ki = 0; ki < taps; ++ki, NextIndex(k, g.kernel)) {
        const Tap tap = TapAt(g, o, k, in_spatial);
        if (!tap.inside) continue;
        const double v = xv[p * in_size + RowMajorOffset(tap.pos, in_spatial)];
        if (best_index < 0 || v > best) {
          best = v;
          best_index = p * in_size +
                       (column_major ? ColumnMajorOffset(tap.pos, in_spatial) : RowMajorOffset(tap.pos, in_spatial));
        }
      }
      if (best_index < 0) {
        return ctx.Error(absl::StrCat("output position ", oi, " has a window that reads only padding"));
      }
      yv[p * out_size + oi] = best;
      indices[p * out_size + oi] = best_index;
    }
  }
  StoreDoubles(yv, ctx.output(0));
  if (ctx.num_outputs() > 1) {
    int64_t* out = ctx.output(1).data<int64_t>();
    for (size_t i = 0; i < indices.size(); ++i) out[i] = indices[i];
  }
  return absl::OkStatus();
}

// The divisor counts the taps inside X (count_include_pad=0) or inside the padded
// input [-pad_begin, size + pad_end) (count_include_pad=1); taps beyond the end
// padding, which ceil_mode can add, never count.
absl::Status AveragePoolKernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const absl::Span<const int64_t> in_spatial = absl::MakeConstSpan(x.shape().dims()).subspan(2);
  TSR_ASSIGN_OR_RETURN(WindowGeometry g, PoolGeometry(ctx, in_spatial));
  const bool count_include_pad = ctx.GetInt("count_include_pad") == 1;
  const int64_t planes = x.shape().dim(0) * x.shape().dim(1);
  const int64_t in_size = Product(in_spatial);
  const int64_t out_size = Product(g.output);
  const int64_t taps = g.kernel_elements();

  const std::vector<double> xv = ToDoubles(x);
  std::vector<double> yv(static_cast<size_t>(planes * out_size));
  for (int64_t p = 0; p < planes; ++p) {
    std::vector<int64_t> o(g.num_spatial(), 0);
    for (int64_t oi = 0; oi < out_size; ++oi, NextIndex(o, g.output)) {
      double sum = 0.0;
      int64_t count = 0;
      std::vector<int64_t> k(g.num_spatial(), 0);
      for (int64_t ki = 0; ki < taps; ++ki, NextIndex(k, g.kernel)) {
        const Tap tap = TapAt(g, o, k, in_spatial);
        if (tap.inside) {
          sum += xv[p * in_size + RowMajorOffset(tap.pos, in_spatial)];
          ++count;
        } else if (count_include_pad) {
          bool in_padded = true;
          for (int d = 0; d < g.num_spatial(); ++d) {
            in_padded = in_padded && tap.pos[d] >= -g.pads_begin[d] && tap.pos[d] < in_spatial[d] + g.pads_end[d];
          }
          if (in_padded) ++count;
        }
      }
      if (count == 0) {
        return ctx.Error(absl::StrCat("output position ", oi, " has a window that reads only padding"));
      }
      yv[p * out_size + oi] = sum / static_cast<double>(count);
    }
  }
  StoreDoubles(yv, ctx.output(0));
  return absl::OkStatus();
}

absl::Status GlobalAveragePoolKernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const int64_t planes = x.shape().dim(0) * x.shape().dim(1);
  const int64_t in_size = Product(absl::MakeConstSpan(x.shape().dims()).subspan(2));
  const std::vector<double> xv = ToDoubles(x);
  std::vector<double> yv(static_cast<size_t>(planes));
  for (int64_t p = 0; p < planes; ++p) {
    double sum = 0.0;
    for (int64_t i = 0; i < in_size; ++i) sum += xv[p * in_size + i];
    // An empty spatial extent has no mean: 0/0 gives NaN, as numpy's mean does.
    yv[p] = sum / static_cast<double>(in_size);
  }
  StoreDoubles(yv, ctx.output(0));
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterReferencePoolKernels(KernelRegistry& registry) {
  TSR_RETURN_IF_ERROR(registry.Register("MaxPool", kReferenceDevice, kMaxPoolDTypes, MaxPoolKernel));
  TSR_RETURN_IF_ERROR(registry.Register("AveragePool", kReferenceDevice, kAveragePoolDTypes, AveragePoolKernel));
  TSR_RETURN_IF_ERROR(
      registry.Register("GlobalAveragePool", kReferenceDevice, kAveragePoolDTypes, GlobalAveragePoolKernel));
  return absl::OkStatus();
}

}  // namespace tsr

// Reference kernels of the backward ops autodiff emits (graph/ops/gradient_ops.cc):
// ConvGradFilter, MaxPoolGrad, AveragePoolGrad, BatchNormalizationGrad,
// LayerNormalizationGrad, GatherGrad, SliceGrad, PadGrad. Plain loops in double; the window
// geometry comes from graph/ops/conv_geometry.h and the slice arithmetic from
// graph/ops/slice_geometry.h (pad_geometry.h for PadGrad), the code the forward ops and their kernels use, so a
// gradient always walks exactly the windows and elements its forward op read.
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/types/span.h"
#include "graph/dtype.h"
#include "graph/ops/conv_geometry.h"
#include "graph/ops/pad_geometry.h"
#include "graph/ops/slice_geometry.h"
#include "graph/shape.h"
#include "graph/status_macros.h"
#include "graph/tensor.h"
#include "kernels/kernel.h"
#include "kernels/reference/convert.h"
#include "kernels/register_kernels.h"

namespace tsr {

namespace {

std::vector<double> ToDoubles(const Tensor& t) {
  std::vector<double> out(static_cast<size_t>(t.num_elements()));
  VisitDType(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* p = t.data<T>();
    for (size_t i = 0; i < out.size(); ++i) out[i] = reference::WidenToDouble(p[i]);
  });
  return out;
}

void StoreDoubles(const std::vector<double>& values, Tensor& t) {
  VisitDType(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* p = t.data<T>();
    for (size_t i = 0; i < values.size(); ++i) p[i] = reference::FromDouble<T>(values[i]);
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

// Row-major offset of `pos` in a block of size `dims`; -1 when outside (padding).
int64_t SpatialOffset(absl::Span<const int64_t> pos, absl::Span<const int64_t> dims) {
  int64_t offset = 0;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (pos[i] < 0 || pos[i] >= dims[i]) return -1;
    offset = offset * dims[i] + pos[i];
  }
  return offset;
}

// The input position of tap `k` of the window at output position `o`.
void TapPosition(const WindowGeometry& g, absl::Span<const int64_t> o, absl::Span<const int64_t> k,
                 std::vector<int64_t>& pos) {
  for (int d = 0; d < g.num_spatial(); ++d) pos[d] = o[d] * g.strides[d] - g.pads_begin[d] + k[d] * g.dilations[d];
}

absl::StatusOr<WindowGeometry> Geometry(const KernelContext& ctx, absl::Span<const int64_t> in_spatial) {
  absl::StatusOr<WindowSpec> spec = WindowSpecFromAttrs(ctx.attrs());
  if (!spec.ok()) return ctx.Error(spec.status().message());
  absl::StatusOr<WindowGeometry> g = ComputeWindowGeometry(in_spatial, *spec);
  if (!g.ok()) return ctx.Error(g.status().message());
  return g;
}

// dW[m, c', k] = sum over n and output positions o of dY[n, m, o] * X[n, c, o*s - p + k*d],
// with c = (m's group) * C/group + c'.
absl::Status ConvGradFilterKernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& dy = ctx.input(1);
  const absl::Span<const int64_t> in_spatial = absl::MakeConstSpan(x.shape().dims()).subspan(2);
  TSR_ASSIGN_OR_RETURN(WindowGeometry g, Geometry(ctx, in_spatial));
  const int64_t batch = x.shape().dim(0);
  const int64_t channels = x.shape().dim(1);
  const int64_t out_channels = dy.shape().dim(1);
  const int64_t group = ctx.GetInt("group");
  const int64_t c_per_group = channels / group;
  const int64_t m_per_group = out_channels / group;
  const int64_t in_size = Product(in_spatial);
  const int64_t out_size = Product(g.output);
  const int64_t taps = g.kernel_elements();
  const int n_spatial = g.num_spatial();

  const std::vector<double> xv = ToDoubles(x);
  const std::vector<double> dyv = ToDoubles(dy);
  std::vector<double> dw(static_cast<size_t>(out_channels * c_per_group * taps), 0.0);
  std::vector<int64_t> pos(n_spatial);
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t m = 0; m < out_channels; ++m) {
      const int64_t first_c = (m / m_per_group) * c_per_group;
      std::vector<int64_t> o(n_spatial, 0);
      for (int64_t oi = 0; oi < out_size; ++oi, NextIndex(o, g.output)) {
        const double grad = dyv[(n * out_channels + m) * out_size + oi];
        std::vector<int64_t> k(n_spatial, 0);
        for (int64_t ki = 0; ki < taps; ++ki, NextIndex(k, g.kernel)) {
          TapPosition(g, o, k, pos);
          const int64_t in_offset = SpatialOffset(pos, in_spatial);
          if (in_offset < 0) continue;
          for (int64_t c = 0; c < c_per_group; ++c) {
            dw[(m * c_per_group + c) * taps + ki] += grad * xv[(n * channels + first_c + c) * in_size + in_offset];
          }
        }
      }
    }
  }
  StoreDoubles(dw, ctx.output(0));
  return absl::OkStatus();
}

// Each dY goes to the first maximum of its window in window order: the element the
// reference MaxPool (and its Indices) picks.
absl::Status MaxPoolGradKernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const absl::Span<const int64_t> in_spatial = absl::MakeConstSpan(x.shape().dims()).subspan(2);
  TSR_ASSIGN_OR_RETURN(WindowGeometry g, Geometry(ctx, in_spatial));
  const int64_t planes = x.shape().dim(0) * x.shape().dim(1);
  const int64_t in_size = Product(in_spatial);
  const int64_t out_size = Product(g.output);
  const int64_t taps = g.kernel_elements();
  const std::vector<double> xv = ToDoubles(x);
  const std::vector<double> dyv = ToDoubles(ctx.input(1));
  std::vector<double> dx(xv.size(), 0.0);
  std::vector<int64_t> pos(g.num_spatial());
  for (int64_t p = 0; p < planes; ++p) {
    std::vector<int64_t> o(g.num_spatial(), 0);
    for (int64_t oi = 0; oi < out_size; ++oi, NextIndex(o, g.output)) {
      double best = -std::numeric_limits<double>::infinity();
      int64_t best_offset = -1;
      std::vector<int64_t> k(g.num_spatial(), 0);
      for (int64_t ki = 0; ki < taps; ++ki, NextIndex(k, g.kernel)) {
        TapPosition(g, o, k, pos);
        const int64_t offset = SpatialOffset(pos, in_spatial);
        if (offset < 0) continue;
        const double v = xv[p * in_size + offset];
        if (best_offset < 0 || v > best) {
          best = v;
          best_offset = offset;
        }
      }
      if (best_offset < 0) {
        return ctx.Error(absl::StrCat("output position ", oi, " has a window that reads only padding"));
      }
      dx[p * in_size + best_offset] += dyv[p * out_size + oi];
    }
  }
  StoreDoubles(dx, ctx.output(0));
  return absl::OkStatus();
}

// The divisor is AveragePool's: the taps inside X (count_include_pad=0) or inside the
// padded input [-pad_begin, size + pad_end) (count_include_pad=1); taps beyond the
// end padding, which ceil_mode can add, never count.
absl::Status AveragePoolGradKernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const absl::Span<const int64_t> in_spatial = absl::MakeConstSpan(x.shape().dims()).subspan(2);
  TSR_ASSIGN_OR_RETURN(WindowGeometry g, Geometry(ctx, in_spatial));
  const bool count_include_pad = ctx.GetInt("count_include_pad") == 1;
  const int64_t planes = x.shape().dim(0) * x.shape().dim(1);
  const int64_t in_size = Product(in_spatial);
  const int64_t out_size = Product(g.output);
  const int64_t taps = g.kernel_elements();
  const int n_spatial = g.num_spatial();
  const std::vector<double> dyv = ToDoubles(ctx.input(1));
  std::vector<double> dx(static_cast<size_t>(planes * in_size), 0.0);
  std::vector<int64_t> pos(n_spatial);
  // The divisor depends only on the output position.
  std::vector<double> count(static_cast<size_t>(out_size), 0.0);
  {
    std::vector<int64_t> o(n_spatial, 0);
    for (int64_t oi = 0; oi < out_size; ++oi, NextIndex(o, g.output)) {
      std::vector<int64_t> k(n_spatial, 0);
      for (int64_t ki = 0; ki < taps; ++ki, NextIndex(k, g.kernel)) {
        TapPosition(g, o, k, pos);
        bool counted = true;
        for (int d = 0; d < n_spatial; ++d) {
          counted = counted && (count_include_pad ? pos[d] >= -g.pads_begin[d] && pos[d] < in_spatial[d] + g.pads_end[d]
                                                  : pos[d] >= 0 && pos[d] < in_spatial[d]);
        }
        if (counted) count[oi] += 1;
      }
      if (count[oi] == 0) {
        return ctx.Error(absl::StrCat("output position ", oi, " has a window that reads only padding"));
      }
    }
  }
  for (int64_t p = 0; p < planes; ++p) {
    std::vector<int64_t> o(n_spatial, 0);
    for (int64_t oi = 0; oi < out_size; ++oi, NextIndex(o, g.output)) {
      const double share = dyv[p * out_size + oi] / count[oi];
      std::vector<int64_t> k(n_spatial, 0);
      for (int64_t ki = 0; ki < taps; ++ki, NextIndex(k, g.kernel)) {
        TapPosition(g, o, k, pos);
        const int64_t offset = SpatialOffset(pos, in_spatial);
        if (offset >= 0) dx[p * in_size + offset] += share;
      }
    }
  }
  StoreDoubles(dx, ctx.output(0));
  return absl::OkStatus();
}

// The normalization backward over `groups` independent sets of `count` elements;
// `at(gi, j)` is the flat offset of element j of group gi. With xhat the normalized
// X and G the incoming gradient times the scale:
//   dX = (G - mean(G) - xhat * mean(G * xhat)) / sqrt(var + epsilon).
template <typename At>
void NormalizationBackward(const std::vector<double>& xv, const std::vector<double>& gv, int64_t groups, int64_t count,
                           double epsilon, At at, std::vector<double>& dx, std::vector<double>& xhat) {
  if (count == 0) return;
  for (int64_t gi = 0; gi < groups; ++gi) {
    double sum = 0;
    for (int64_t j = 0; j < count; ++j) sum += xv[at(gi, j)];
    const double mean = sum / static_cast<double>(count);
    double squares = 0;
    for (int64_t j = 0; j < count; ++j) {
      const double d = xv[at(gi, j)] - mean;
      squares += d * d;
    }
    const double inv_std = 1.0 / std::sqrt(squares / static_cast<double>(count) + epsilon);
    double sum_g = 0, sum_gx = 0;
    for (int64_t j = 0; j < count; ++j) {
      const int64_t i = at(gi, j);
      xhat[i] = (xv[i] - mean) * inv_std;
      sum_g += gv[i];
      sum_gx += gv[i] * xhat[i];
    }
    const double mean_g = sum_g / static_cast<double>(count), mean_gx = sum_gx / static_cast<double>(count);
    for (int64_t j = 0; j < count; ++j) {
      const int64_t i = at(gi, j);
      dx[i] = inv_std * (gv[i] - mean_g - xhat[i] * mean_gx);
    }
  }
}

// Statistics per channel (dim 1; a 1-D X is [N] with one channel) over N and the
// spatial dims, as BatchNormalization's training form computes them.
absl::Status BatchNormalizationGradKernel(KernelContext& ctx) {
  const Shape& shape = ctx.input(0).shape();
  const int64_t batch = shape.dim(0);
  const int64_t channels = shape.rank() == 1 ? 1 : shape.dim(1);
  const int64_t inner = shape.rank() <= 2 ? 1 : Product(absl::MakeConstSpan(shape.dims()).subspan(2));
  const std::vector<double> xv = ToDoubles(ctx.input(0));
  const std::vector<double> gv = ToDoubles(ctx.input(1));
  std::vector<double> dx(xv.size(), 0.0), xhat(xv.size(), 0.0);
  NormalizationBackward(
      xv, gv, channels, batch * inner, ctx.GetFloat("epsilon"),
      [&](int64_t c, int64_t j) { return ((j / inner) * channels + c) * inner + j % inner; }, dx, xhat);
  StoreDoubles(dx, ctx.output(0));
  StoreDoubles(xhat, ctx.output(1));
  return absl::OkStatus();
}

// Statistics per row of the [prod(dims[:axis]), prod(dims[axis:])] view.
absl::Status LayerNormalizationGradKernel(KernelContext& ctx) {
  const Shape& shape = ctx.input(0).shape();
  absl::StatusOr<int> axis = NormalizeAxis(ctx.GetInt("axis"), shape.rank());
  if (!axis.ok()) return ctx.Error(axis.status().message());
  const int64_t outer = Product(absl::MakeConstSpan(shape.dims()).subspan(0, *axis));
  const int64_t inner = Product(absl::MakeConstSpan(shape.dims()).subspan(*axis));
  const std::vector<double> xv = ToDoubles(ctx.input(0));
  const std::vector<double> gv = ToDoubles(ctx.input(1));
  std::vector<double> dx(xv.size(), 0.0), xhat(xv.size(), 0.0);
  NormalizationBackward(
      xv, gv, outer, inner, ctx.GetFloat("epsilon"), [&](int64_t row, int64_t j) { return row * inner + j; }, dx, xhat);
  StoreDoubles(dx, ctx.output(0));
  StoreDoubles(xhat, ctx.output(1));
  return absl::OkStatus();
}

// d data[o, indices[k], i] += dY[o, k, i] over the [outer, axis, inner] view of data.
absl::Status GatherGradKernel(KernelContext& ctx) {
  const Tensor& indices = ctx.input(1);
  const Shape& data = ctx.input(2).shape();
  absl::StatusOr<int> axis = NormalizeAxis(ctx.GetInt("axis"), data.rank());
  if (!axis.ok()) return ctx.Error(axis.status().message());
  const int64_t outer = Product(absl::MakeConstSpan(data.dims()).subspan(0, *axis));
  const int64_t size = data.dim(*axis);
  const int64_t inner = Product(absl::MakeConstSpan(data.dims()).subspan(*axis + 1));
  const int64_t count = indices.num_elements();
  const std::vector<double> dyv = ToDoubles(ctx.input(0));
  std::vector<double> dx(static_cast<size_t>(data.num_elements()), 0.0);
  for (int64_t k = 0; k < count; ++k) {
    int64_t index = indices.GetAsInt64(k);
    if (index < -size || index >= size) {
      return ctx.Error(absl::StrCat("index ", index, " is out of range for axis ", *axis, " of size ", size));
    }
    if (index < 0) index += size;
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        dx[(o * size + index) * inner + i] += dyv[(o * count + k) * inner + i];
      }
    }
  }
  StoreDoubles(dx, ctx.output(0));
  return absl::OkStatus();
}

std::vector<int64_t> Ints(const Tensor& t) {
  std::vector<int64_t> values(static_cast<size_t>(t.num_elements()));
  for (size_t i = 0; i < values.size(); ++i) values[i] = t.GetAsInt64(static_cast<int64_t>(i));
  return values;
}

// Each dY element written to the data position Slice read it from; zeros elsewhere.
absl::Status SliceGradKernel(KernelContext& ctx) {
  const Shape& data = ctx.input(1).shape();
  const int rank = data.rank();
  const std::vector<int64_t> starts = Ints(ctx.input(2)), ends = Ints(ctx.input(3));
  std::vector<int64_t> axes;
  if (ctx.has_input(4)) {
    axes = Ints(ctx.input(4));
  } else {
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  }
  const std::vector<int64_t> steps = ctx.has_input(5) ? Ints(ctx.input(5)) : std::vector<int64_t>(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size()) {
    return ctx.Error("starts, ends, axes and steps must have the same length");
  }
  std::vector<SliceAxis> slice(rank);
  for (int a = 0; a < rank; ++a) slice[a] = {0, 1, data.dim(a)};
  for (size_t i = 0; i < starts.size(); ++i) {
    const int64_t a = axes[i] < 0 ? axes[i] + rank : axes[i];
    if (a < 0 || a >= rank || steps[i] == 0) return ctx.Error("invalid axes or steps");
    slice[a] = ResolveSlice(data.dim(static_cast<int>(a)), starts[i], ends[i], steps[i]);
  }
  std::vector<int64_t> out_dims(rank);
  for (int a = 0; a < rank; ++a) out_dims[a] = slice[a].size;
  const std::vector<double> dyv = ToDoubles(ctx.input(0));
  std::vector<double> dx(static_cast<size_t>(data.num_elements()), 0.0);
  if (!dyv.empty()) {
    std::vector<int64_t> index(rank, 0);
    for (size_t e = 0; e < dyv.size(); ++e, NextIndex(index, out_dims)) {
      int64_t offset = 0;
      for (int a = 0; a < rank; ++a) offset = offset * data.dim(a) + slice[a].first + index[a] * slice[a].step;
      dx[offset] += dyv[e];
    }
  }
  StoreDoubles(dx, ctx.output(0));
  return absl::OkStatus();
}

// Each dY element added to the data element PadSource says Pad copied it from.
absl::Status PadGradKernel(KernelContext& ctx) {
  const Shape& data = ctx.input(1).shape();
  const Shape& dy = ctx.input(0).shape();
  const int rank = data.rank();
  absl::StatusOr<PadMode> mode = ParsePadMode(ctx.GetString("mode"));
  if (!mode.ok()) return ctx.Error(mode.status().message());
  const std::vector<int64_t> pads = Ints(ctx.input(2));
  std::vector<int64_t> axes;
  if (ctx.has_input(3)) {
    axes = Ints(ctx.input(3));
  } else {
    for (int a = 0; a < rank; ++a) axes.push_back(a);
  }
  if (pads.size() != 2 * axes.size()) return ctx.Error("pads must hold a begin and an end per axis");
  std::vector<int64_t> begin(rank, 0);
  for (size_t j = 0; j < axes.size(); ++j) {
    const int64_t a = axes[j] < 0 ? axes[j] + rank : axes[j];
    if (a < 0 || a >= rank) return ctx.Error(absl::StrCat("axis ", axes[j], " is out of range for rank ", rank));
    begin[a] = pads[j];
    if (dy.dim(static_cast<int>(a)) != data.dim(static_cast<int>(a)) + pads[j] + pads[j + axes.size()]) {
      return ctx.Error(absl::StrCat("dY ", dy.ToString(), " is not data ", data.ToString(), " padded by ",
                                    absl::StrJoin(pads, ",")));
    }
  }
  const std::vector<double> dyv = ToDoubles(ctx.input(0));
  std::vector<double> dx(static_cast<size_t>(data.num_elements()), 0.0);
  if (!dyv.empty()) {
    std::vector<int64_t> index(rank, 0);
    for (size_t e = 0; e < dyv.size(); ++e, NextIndex(index, dy.dims())) {
      int64_t offset = 0;
      for (int a = 0; a < rank && offset >= 0; ++a) {
        const int64_t source = PadSource(index[a] - begin[a], data.dim(a), *mode);
        offset = source < 0 ? -1 : offset * data.dim(a) + source;
      }
      if (offset >= 0) dx[offset] += dyv[e];
    }
  }
  StoreDoubles(dx, ctx.output(0));
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterReferenceGradientKernels(KernelRegistry& registry) {
  TSR_RETURN_IF_ERROR(registry.Register("ConvGradFilter", kReferenceDevice, kFloatDTypes, ConvGradFilterKernel));
  TSR_RETURN_IF_ERROR(registry.Register("MaxPoolGrad", kReferenceDevice, kFloatDTypes, MaxPoolGradKernel));
  TSR_RETURN_IF_ERROR(registry.Register("AveragePoolGrad", kReferenceDevice, kFloatDTypes, AveragePoolGradKernel));
  TSR_RETURN_IF_ERROR(
      registry.Register("BatchNormalizationGrad", kReferenceDevice, kFloatDTypes, BatchNormalizationGradKernel));
  TSR_RETURN_IF_ERROR(
      registry.Register("LayerNormalizationGrad", kReferenceDevice, kFloatDTypes, LayerNormalizationGradKernel));
  TSR_RETURN_IF_ERROR(registry.Register("GatherGrad", kReferenceDevice, kFloatDTypes, GatherGradKernel));
  TSR_RETURN_IF_ERROR(registry.Register("SliceGrad", kReferenceDevice, kFloatDTypes, SliceGradKernel));
  TSR_RETURN_IF_ERROR(registry.Register("PadGrad", kReferenceDevice, kFloatDTypes, PadGradKernel));
  return absl::OkStatus();
}

}  // namespace tsr

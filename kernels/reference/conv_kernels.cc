// Reference Conv and ConvTranspose kernels over any number of spatial dimensions
// (channels-first, grouped, strided, dilated, padded, optional bias). Plain loops in
// double; the window geometry (output sizes, the pads auto_pad resolves to) comes from
// graph/ops/conv_geometry.h, the same code shape inference uses.
//
// Conv gathers: Y[n,m,o] = B[m] + sum_{c in group(m), k} X[n,c,o*s-p+k*d] * W[m,c',k].
// ConvTranspose scatters: Y[n,m,i*s-p+k*d] += X[n,c,i] * W[c,m',k] for c in group(m).
#include <cstdint>
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

constexpr DType kConvDTypes[] = {DType::kF32, DType::kF64, DType::kF16, DType::kBF16};

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

// Row-major offset of the window tap (`pos` per dimension) in a spatial block of
// size `dims`; -1 when any coordinate lies outside (padding).
int64_t SpatialOffset(absl::Span<const int64_t> pos, absl::Span<const int64_t> dims) {
  int64_t offset = 0;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (pos[i] < 0 || pos[i] >= dims[i]) return -1;
    offset = offset * dims[i] + pos[i];
  }
  return offset;
}

// The weight's kernel sizes (dims 2...) as a window spec's kernel; inference has
// already checked that kernel_shape, when given, agrees.
std::vector<int64_t> KernelOf(const Tensor& w) {
  return std::vector<int64_t>(w.shape().dims().begin() + 2, w.shape().dims().end());
}

absl::Status ConvKernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& w = ctx.input(1);
  absl::StatusOr<WindowSpec> spec = WindowSpecFromAttrs(ctx.attrs());
  if (!spec.ok()) return ctx.Error(spec.status().message());
  spec->kernel = KernelOf(w);
  const absl::Span<const int64_t> in_spatial = absl::MakeConstSpan(x.shape().dims()).subspan(2);
  absl::StatusOr<WindowGeometry> g = ComputeWindowGeometry(in_spatial, *spec);
  if (!g.ok()) return ctx.Error(g.status().message());

  const int64_t batch = x.shape().dim(0);
  const int64_t channels = x.shape().dim(1);
  const int64_t out_channels = w.shape().dim(0);
  const int64_t group = ctx.GetInt("group");
  const int64_t c_per_group = channels / group;
  const int64_t m_per_group = out_channels / group;
  const int64_t in_size = Product(in_spatial);
  const int64_t out_size = Product(g->output);
  const int64_t taps = g->kernel_elements();
  const int n_spatial = g->num_spatial();

  const std::vector<double> xv = ToDoubles(x);
  const std::vector<double> wv = ToDoubles(w);
  const std::vector<double> bias = ctx.has_input(2) ? ToDoubles(ctx.input(2)) : std::vector<double>();
  std::vector<double> yv(static_cast<size_t>(batch * out_channels * out_size), 0.0);
  std::vector<int64_t> pos(n_spatial);
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t m = 0; m < out_channels; ++m) {
      const int64_t first_c = (m / m_per_group) * c_per_group;
      std::vector<int64_t> o(n_spatial, 0);
      for (int64_t oi = 0; oi < out_size; ++oi, NextIndex(o, g->output)) {
        double sum = bias.empty() ? 0.0 : bias[m];
        std::vector<int64_t> k(n_spatial, 0);
        for (int64_t ki = 0; ki < taps; ++ki, NextIndex(k, g->kernel)) {
          for (int d = 0; d < n_spatial; ++d) pos[d] = o[d] * g->strides[d] - g->pads_begin[d] + k[d] * g->dilations[d];
          const int64_t in_offset = SpatialOffset(pos, in_spatial);
          if (in_offset < 0) continue;
          for (int64_t c = 0; c < c_per_group; ++c) {
            sum += xv[(n * channels + first_c + c) * in_size + in_offset] * wv[(m * c_per_group + c) * taps + ki];
          }
        }
        yv[(n * out_channels + m) * out_size + oi] = sum;
      }
    }
  }
  StoreDoubles(yv, ctx.output(0));
  return absl::OkStatus();
}

absl::Status ConvTransposeKernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& w = ctx.input(1);
  absl::StatusOr<TransposedWindowSpec> spec = TransposedWindowSpecFromAttrs(ctx.attrs());
  if (!spec.ok()) return ctx.Error(spec.status().message());
  spec->window.kernel = KernelOf(w);
  const absl::Span<const int64_t> in_spatial = absl::MakeConstSpan(x.shape().dims()).subspan(2);
  absl::StatusOr<WindowGeometry> g = ComputeTransposedWindowGeometry(in_spatial, *spec);
  if (!g.ok()) return ctx.Error(g.status().message());

  const int64_t batch = x.shape().dim(0);
  const int64_t channels = x.shape().dim(1);
  const int64_t group = ctx.GetInt("group");
  const int64_t c_per_group = channels / group;
  const int64_t m_per_group = w.shape().dim(1);
  const int64_t out_channels = m_per_group * group;
  const int64_t in_size = Product(in_spatial);
  const int64_t out_size = Product(g->output);
  const int64_t taps = g->kernel_elements();
  const int n_spatial = g->num_spatial();

  const std::vector<double> xv = ToDoubles(x);
  const std::vector<double> wv = ToDoubles(w);
  std::vector<double> yv(static_cast<size_t>(batch * out_channels * out_size), 0.0);
  if (ctx.has_input(2)) {
    const std::vector<double> bias = ToDoubles(ctx.input(2));
    for (int64_t nm = 0; nm < batch * out_channels; ++nm) {
      for (int64_t oi = 0; oi < out_size; ++oi) yv[nm * out_size + oi] = bias[nm % out_channels];
    }
  }
  std::vector<int64_t> pos(n_spatial);
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t c = 0; c < channels; ++c) {
      const int64_t first_m = (c / c_per_group) * m_per_group;
      std::vector<int64_t> i(n_spatial, 0);
      for (int64_t ii = 0; ii < in_size; ++ii, NextIndex(i, in_spatial)) {
        const double xval = xv[(n * channels + c) * in_size + ii];
        std::vector<int64_t> k(n_spatial, 0);
        for (int64_t ki = 0; ki < taps; ++ki, NextIndex(k, g->kernel)) {
          for (int d = 0; d < n_spatial; ++d) pos[d] = i[d] * g->strides[d] - g->pads_begin[d] + k[d] * g->dilations[d];
          const int64_t out_offset = SpatialOffset(pos, g->output);
          if (out_offset < 0) continue;
          for (int64_t mm = 0; mm < m_per_group; ++mm) {
            yv[(n * out_channels + first_m + mm) * out_size + out_offset] +=
                xval * wv[(c * m_per_group + mm) * taps + ki];
          }
        }
      }
    }
  }
  StoreDoubles(yv, ctx.output(0));
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterReferenceConvKernels(KernelRegistry& registry) {
  TSR_RETURN_IF_ERROR(registry.Register("Conv", kReferenceDevice, kConvDTypes, ConvKernel));
  TSR_RETURN_IF_ERROR(registry.Register("ConvTranspose", kReferenceDevice, kConvDTypes, ConvTransposeKernel));
  return absl::OkStatus();
}

}  // namespace tsr

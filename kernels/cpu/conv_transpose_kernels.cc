// CPU ConvTranspose kernel for f32 (channels-first, one to three spatial dimensions,
// grouped, strided, dilated, padded, output_padding / output_shape / auto_pad,
// optional bias); autodiff uses it for Conv's input gradient. Per image n and group g:
//   col [M/group * taps, pixels] = W_g^T [M/group * taps, C/group] x X_{n,g} [C/group, pixels]
// with W_g packed once per call (SgemmPackedA, shared by every image and thread), then
// col is scatter-added into Y_{n,g} (conv_transpose_col2im.h) on top of the bias.
// A 1x1, stride-1, unpadded window whose output is as large as its input needs no
// scatter: the GEMM writes Y directly, bias as its row_bias epilogue.
// Any other stride-1 window with few input channels (LeNet's input gradients) runs as
// the Conv it equals (EquivalentConv): X zero-padded by (kernel - 1) * dilation - pad,
// correlated with W's taps reversed and its two channel dimensions swapped, through
// the direct small-channel loops (conv_direct.h) -- no GEMM of depth C/group and no
// scatter --, or, with sixteen images or more on AVX-512, through the loops that hold
// sixteen images in every vector (conv_image_lanes.h), which skip most of the padding's
// zero taps.
//
// Threads split the (image, group) pairs, or, when there are few of them and the
// GEMM is large, the GEMM's own loops and the col2im's output channels. Sgemm's
// results do not depend on the split and the col2im adds into each output element in
// a fixed (tap) order, so neither does the result. More than three spatial dimensions
// run the reference kernel.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "absl/types/span.h"
#include "graph/dtype.h"
#include "graph/ops/conv_geometry.h"
#include "graph/tensor.h"
#include "kernels/cpu/conv_direct.h"
#include "kernels/cpu/conv_image_lanes.h"
#include "kernels/cpu/conv_transpose_col2im.h"
#include "kernels/cpu/conv_window.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/reference_fallback.h"
#include "kernels/kernel.h"

namespace tsr {

namespace {

// Below this many multiply-adds an (image, group) pair is not worth splitting a GEMM
// over threads; the pairs themselves are spread over the threads instead.
constexpr int64_t kSmallUnitMacs = int64_t{1} << 22;

// Everything one (image, group) pair needs. `w` is the forward window of the adjoint
// Conv: w.in the output's spatial sizes, w.out the input's.
struct TransposeProblem {
  Window3d w;
  int64_t channels, out_channels, group;
  int64_t c_per_group, m_per_group;
  const float* x;
  const float* bias;  // null without one
  float* y;

  int64_t rows() const { return m_per_group * w.taps(); }  // the GEMM's M
  bool pointwise() const {
    for (int d = 0; d < 3; ++d) {
      if (w.kernel[d] != 1 || w.stride[d] != 1 || w.pad_begin[d] != 0 || w.in[d] != w.out[d]) return false;
    }
    return true;
  }
};

// The Conv over X that computes a stride-1 ConvTranspose whose adjoint window is
// `adjoint`: Y[j] = sum over taps k of X[j + pad - k * dilation] W[k] is a correlation
// of X, padded by (kernel - 1) * dilation - pad before, with the taps reversed.
// Nullopt for a stride above 1 or a pad larger than that span (an output cropped
// inside X's halo, which padding cannot express).
std::optional<Window3d> EquivalentConv(const Window3d& adjoint) {
  Window3d e = adjoint;
  for (int d = 0; d < 3; ++d) {
    if (adjoint.stride[d] != 1) return std::nullopt;
    const int64_t span = (adjoint.kernel[d] - 1) * adjoint.dilation[d];
    e.in[d] = adjoint.out[d];
    e.out[d] = adjoint.in[d];
    e.pad_begin[d] = span - adjoint.pad_begin[d];
    e.pad_end[d] = e.out[d] - e.in[d] - e.pad_begin[d] + span;
    if (e.pad_begin[d] < 0 || e.pad_end[d] < 0) return std::nullopt;
  }
  return e;
}

// Runs the ConvTranspose as EquivalentConv through DirectConv when that applies and W
// is finite (the padding's zeros meet every weight: 0 x inf would be NaN where the
// ConvTranspose adds nothing). False otherwise, with nothing written.
bool RunAsDirectConv(const TransposeProblem& p, int64_t batch, const float* weights,
                     const ParallelForFn& parallel_for) {
  if (p.pointwise()) return false;
  const std::optional<Window3d> e = EquivalentConv(p.w);
  if (!e.has_value()) return false;
  const bool image_lanes = ImageLanesConvApplies(*e, batch, p.channels, p.group);
  if (!image_lanes && !DirectConvApplies(*e, p.c_per_group, kMaxDirectConvTransposeRows)) return false;
  const int64_t taps = p.w.taps();
  if (!AllFinite(weights, p.channels * p.m_per_group * taps)) return false;
  // W [C, M/group, taps] -> the Conv's [M, C/group, taps], taps reversed.
  std::vector<float> conv_weights(static_cast<size_t>(p.out_channels * p.c_per_group * taps));
  for (int64_t g = 0; g < p.group; ++g) {
    for (int64_t m = 0; m < p.m_per_group; ++m) {
      for (int64_t c = 0; c < p.c_per_group; ++c) {
        const float* src = weights + ((g * p.c_per_group + c) * p.m_per_group + m) * taps;
        float* dst = conv_weights.data() + ((g * p.m_per_group + m) * p.c_per_group + c) * taps;
        for (int64_t t = 0; t < taps; ++t) dst[t] = src[taps - 1 - t];
      }
    }
  }
  if (image_lanes) {
    ImageLanesConv(*e, batch, p.channels, p.out_channels, p.x, conv_weights.data(), p.bias, p.y, parallel_for);
  } else {
    DirectConv(*e, batch, p.channels, p.out_channels, p.group, p.x, conv_weights.data(), p.bias, p.y, parallel_for);
  }
  return true;
}

// Output channels [m_begin, m_end) of group g of image n: the bias (or 0), then the
// scatter of their col rows.
void ScatterChannels(const TransposeProblem& p, const float* col, int64_t n, int64_t g, int64_t m_begin,
                     int64_t m_end) {
  const int64_t out_size = p.w.in_size();
  float* y = p.y + (n * p.out_channels + g * p.m_per_group) * out_size;
  for (int64_t m = m_begin; m < m_end; ++m) {
    std::fill_n(y + m * out_size, out_size, p.bias != nullptr ? p.bias[g * p.m_per_group + m] : 0.0f);
  }
  Col2ImAdd(p.w, col, m_begin, m_end, y);
}

// Group g of image n. `col` holds rows() x pixels floats (unused when pointwise);
// options.parallel_for (if any) splits the GEMM and the scatter.
void RunUnit(const TransposeProblem& p, const SgemmPackedA& weights, int64_t n, int64_t g, float* col,
             const GemmOptions& options) {
  const int64_t pixels = p.w.out_size();
  const float* x = p.x + (n * p.channels + g * p.c_per_group) * pixels;
  if (p.pointwise()) {
    GemmOptions with_bias = options;
    if (p.bias != nullptr) with_bias.epilogue.row_bias = p.bias + g * p.m_per_group;
    Sgemm(weights, /*trans_b=*/false, pixels, 1.0f, x, pixels, 0.0f,
          p.y + (n * p.out_channels + g * p.m_per_group) * pixels, pixels, with_bias);
    return;
  }
  Sgemm(weights, /*trans_b=*/false, pixels, 1.0f, x, pixels, 0.0f, col, pixels, options);
  if (options.parallel_for) {
    options.parallel_for(p.m_per_group, p.w.taps() * pixels,
                         [&](int64_t begin, int64_t end) { ScatterChannels(p, col, n, g, begin, end); });
  } else {
    ScatterChannels(p, col, n, g, 0, p.m_per_group);
  }
}

absl::Status ConvTransposeKernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& wt = ctx.input(1);
  absl::StatusOr<TransposedWindowSpec> spec = TransposedWindowSpecFromAttrs(ctx.attrs());
  if (!spec.ok()) return ctx.Error(spec.status().message());
  spec->window.kernel.assign(wt.shape().dims().begin() + 2, wt.shape().dims().end());
  const absl::Span<const int64_t> in_spatial = absl::MakeConstSpan(x.shape().dims()).subspan(2);
  absl::StatusOr<WindowGeometry> geometry = ComputeTransposedWindowGeometry(in_spatial, *spec);
  if (!geometry.ok()) return ctx.Error(geometry.status().message());
  std::optional<Window3d> window = MakeWindow3d(in_spatial, *geometry);
  if (!window.has_value()) {
    // Declined: four or more spatial dimensions are rare enough for the reference loops.
    return RunReferenceKernel(ctx);
  }
  // MakeWindow3d reads the geometry as a forward window over X; the adjoint Conv's
  // window runs over Y (the transposed output) with one position per X pixel.
  std::swap(window->in, window->out);

  TransposeProblem p;
  p.w = *window;
  const int64_t batch = x.shape().dim(0);
  p.channels = x.shape().dim(1);
  p.group = ctx.GetInt("group");
  p.c_per_group = p.channels / p.group;
  p.m_per_group = wt.shape().dim(1);
  p.out_channels = p.m_per_group * p.group;
  p.x = x.data<float>();
  p.bias = ctx.has_input(2) ? ctx.input(2).data<float>() : nullptr;
  p.y = ctx.output(0).data<float>();
  const int64_t pixels = p.w.out_size();
  const int64_t out_size = p.w.in_size();
  if (batch == 0 || p.out_channels == 0 || out_size == 0) return absl::OkStatus();

  if (p.c_per_group == 0 || pixels == 0) {  // nothing to scatter: the output is the bias
    for (int64_t nm = 0; nm < batch * p.out_channels; ++nm) {
      std::fill_n(p.y + nm * out_size, out_size, p.bias != nullptr ? p.bias[nm % p.out_channels] : 0.0f);
    }
    return absl::OkStatus();
  }

  const float* weights = wt.data<float>();
  if (RunAsDirectConv(p, batch, weights, ctx.parallel_for())) return absl::OkStatus();

  // W is [C, M/group, taps]: group g's rows [g * C/group, (g + 1) * C/group) are W_g
  // ([C/group, rows()]), packed transposed as the GEMM's A for all images.
  GemmOptions threaded;
  threaded.parallel_for = ctx.parallel_for();
  std::vector<SgemmPackedA> packed(static_cast<size_t>(p.group));
  for (int64_t g = 0; g < p.group; ++g) {
    packed[g].Pack(/*trans_a=*/true, p.rows(), p.c_per_group, weights + g * p.c_per_group * p.rows(), p.rows(),
                   threaded);
  }

  const int64_t units = batch * p.group;
  const int64_t unit_macs = p.rows() * p.c_per_group * pixels;
  const size_t col_size = p.pointwise() ? 0 : static_cast<size_t>(p.rows() * pixels);
  if (units >= 4 || (units >= 2 && unit_macs < kSmallUnitMacs)) {
    ctx.ParallelFor(units, unit_macs + p.rows() * pixels, [&](int64_t begin, int64_t end) {
      std::vector<float> col(col_size);
      for (int64_t u = begin; u < end; ++u) {
        RunUnit(p, packed[u % p.group], u / p.group, u % p.group, col.data(), GemmOptions{});
      }
    });
  } else {
    std::vector<float> col(col_size);
    for (int64_t u = 0; u < units; ++u) RunUnit(p, packed[u % p.group], u / p.group, u % p.group, col.data(), threaded);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterCpuConvTransposeKernels(KernelRegistry& registry) {
  return registry.Register("ConvTranspose", kCpuDevice, DType::kF32, ConvTransposeKernel);
}

}  // namespace tsr

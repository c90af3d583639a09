// CPU Conv kernel for f32 (channels-first, one to three spatial dimensions, grouped,
// strided, dilated, padded, optional bias). The algorithm is picked per shape:
//   - depthwise (group == input channels, 1-D or 2-D): a direct kernel
//     (conv_depthwise.h), since a GEMM would have a single row per group;
//   - 1x1, stride 1, no padding: the input of each image and group already is the
//     [C/group, pixels] matrix, so one Sgemm on it directly, with no copy;
//   - otherwise im2col (conv_im2col.h) into a scratch buffer, tiled over output
//     pixels to bound its size, then Sgemm; the bias is Sgemm's row_bias epilogue.
// More than three spatial dimensions run the reference kernel.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "graph/dtype.h"
#include "graph/ops/conv_geometry.h"
#include "graph/status_macros.h"
#include "graph/tensor.h"
#include "kernels/cpu/conv_depthwise.h"
#include "kernels/cpu/conv_im2col.h"
#include "kernels/cpu/conv_window.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/gemm.h"
#include "kernels/kernel.h"

namespace tsr {

namespace {

// Columns of the im2col buffer: at most this many floats (4 MiB), but at least
// kMinTilePixels pixels wide so Sgemm's panels stay efficient. On ResNet-18's layers,
// budgets from 2^17 floats (an L2-sized tile) to 2^20 gave the same share of time in
// the GEMM micro-kernel; the larger one splits fewer layers into tiles, and each tile
// packs the weights again.
constexpr int64_t kColumnBufferFloats = int64_t{1} << 20;
constexpr int64_t kMinTilePixels = 64;
// Below this many multiply-adds an (image, group) pair is not worth splitting a GEMM
// over threads; the pairs themselves are spread over the threads instead.
constexpr int64_t kSmallUnitMacs = int64_t{1} << 22;

// Forwards Sgemm's splitting to the runtime's threads.
ParallelForFn ContextParallelFor(const KernelContext& ctx) {
  return [&ctx](int64_t n, int64_t cost, const std::function<void(int64_t, int64_t)>& fn) {
    ctx.ParallelFor(n, cost, fn);
  };
}

// Everything one (image, group) GEMM needs.
struct ConvProblem {
  Window3d w;
  int64_t channels, out_channels, group;
  int64_t c_per_group, m_per_group;
  const float* x;
  const float* weights;
  const float* bias;  // null without one
  float* y;

  int64_t rows() const { return c_per_group * w.taps(); }  // the GEMM's K
  bool pointwise() const {
    for (int d = 0; d < 3; ++d) {
      if (w.kernel[d] != 1 || w.stride[d] != 1 || w.pad_begin[d] != 0 || w.pad_end[d] != 0) return false;
    }
    return true;
  }
  int64_t tile_pixels() const {
    const int64_t pixels = w.out_size();
    return std::min(pixels, std::max(kMinTilePixels, kColumnBufferFloats / std::max<int64_t>(rows(), 1)));
  }
};

// Output channels of group g of image n for output pixels [p0, p1), from `col`
// (the im2col rows for those pixels, or the input itself for a pointwise conv).
void GroupGemm(const ConvProblem& p, int64_t n, int64_t g, int64_t p0, int64_t p1, const float* col, int64_t ldcol,
               const GemmOptions& base) {
  const int64_t out_size = p.w.out_size();
  GemmOptions options = base;
  if (p.bias != nullptr) options.epilogue.row_bias = p.bias + g * p.m_per_group;
  Sgemm(false, false, p.m_per_group, p1 - p0, p.rows(), 1.0f, p.weights + g * p.m_per_group * p.rows(), p.rows(), col,
        ldcol, 0.0f, p.y + (n * p.out_channels + g * p.m_per_group) * out_size + p0, out_size, options);
}

const float* GroupInput(const ConvProblem& p, int64_t n, int64_t g) {
  return p.x + (n * p.channels + g * p.c_per_group) * p.w.in_size();
}

// One (image, group) pair on the calling thread, tiles in order; `col` has room for
// rows() x tile_pixels() floats.
void RunUnit(const ConvProblem& p, int64_t n, int64_t g, float* col) {
  const int64_t pixels = p.w.out_size();
  if (p.pointwise()) {
    GroupGemm(p, n, g, 0, pixels, GroupInput(p, n, g), pixels, GemmOptions{});
    return;
  }
  const int64_t tile = p.tile_pixels();
  for (int64_t p0 = 0; p0 < pixels; p0 += tile) {
    const int64_t p1 = std::min(pixels, p0 + tile);
    Im2Col(p.w, GroupInput(p, n, g), 0, p.rows(), p0, p1, col);
    GroupGemm(p, n, g, p0, p1, col, p1 - p0, GemmOptions{});
  }
}

// One (image, group) pair with the threads inside: im2col split over rows, Sgemm
// split by its own rule.
void RunUnitThreaded(const KernelContext& ctx, const ConvProblem& p, int64_t n, int64_t g, std::vector<float>& col) {
  const int64_t pixels = p.w.out_size();
  GemmOptions options;
  options.parallel_for = ContextParallelFor(ctx);
  if (p.pointwise()) {
    GroupGemm(p, n, g, 0, pixels, GroupInput(p, n, g), pixels, options);
    return;
  }
  const int64_t tile = p.tile_pixels();
  col.resize(static_cast<size_t>(p.rows() * tile));
  for (int64_t p0 = 0; p0 < pixels; p0 += tile) {
    const int64_t p1 = std::min(pixels, p0 + tile);
    ctx.ParallelFor(p.rows(), 2 * (p1 - p0),
                    [&](int64_t r0, int64_t r1) { Im2Col(p.w, GroupInput(p, n, g), r0, r1, p0, p1, col.data()); });
    GroupGemm(p, n, g, p0, p1, col.data(), p1 - p0, options);
  }
}

absl::Status ConvKernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& wt = ctx.input(1);
  absl::StatusOr<WindowSpec> spec = WindowSpecFromAttrs(ctx.attrs());
  if (!spec.ok()) return ctx.Error(spec.status().message());
  spec->kernel.assign(wt.shape().dims().begin() + 2, wt.shape().dims().end());
  const absl::Span<const int64_t> in_spatial = absl::MakeConstSpan(x.shape().dims()).subspan(2);
  absl::StatusOr<WindowGeometry> geometry = ComputeWindowGeometry(in_spatial, *spec);
  if (!geometry.ok()) return ctx.Error(geometry.status().message());
  const std::optional<Window3d> window = MakeWindow3d(in_spatial, *geometry);
  if (!window.has_value()) {
    // Declined: four or more spatial dimensions are rare enough for the reference loops.
    const KernelFn* reference = KernelRegistry::Global().Find("Conv", kReferenceDevice, DType::kF32);
    if (reference == nullptr) return ctx.Error("no reference Conv kernel for f32");
    return (*reference)(ctx);
  }

  ConvProblem p;
  p.w = *window;
  const int64_t batch = x.shape().dim(0);
  p.channels = x.shape().dim(1);
  p.out_channels = wt.shape().dim(0);
  p.group = ctx.GetInt("group");
  p.c_per_group = p.channels / p.group;
  p.m_per_group = p.out_channels / p.group;
  p.x = x.data<float>();
  p.weights = wt.data<float>();
  p.bias = ctx.has_input(2) ? ctx.input(2).data<float>() : nullptr;
  p.y = ctx.output(0).data<float>();
  const int64_t pixels = p.w.out_size();
  if (batch == 0 || p.out_channels == 0 || pixels == 0) return absl::OkStatus();

  if (p.rows() == 0) {  // no input channels: the output is the bias
    for (int64_t nm = 0; nm < batch * p.out_channels; ++nm) {
      std::fill_n(p.y + nm * pixels, pixels, p.bias != nullptr ? p.bias[nm % p.out_channels] : 0.0f);
    }
    return absl::OkStatus();
  }

  if (p.group == p.channels && p.w.kernel[0] == 1 && p.w.in[0] == 1 && p.w.out[0] == 1) {
    const CpuIsa isa = ActiveCpuIsa();
    ctx.ParallelFor(batch * p.out_channels, 2 * pixels * p.w.taps(), [&](int64_t begin, int64_t end) {
      for (int64_t nm = begin; nm < end; ++nm) {
        const int64_t n = nm / p.out_channels, m = nm % p.out_channels;
        DepthwiseConvPlane(p.w, p.x + (n * p.channels + m / p.m_per_group) * p.w.in_size(), p.weights + m * p.w.taps(),
                           p.bias != nullptr ? p.bias[m] : 0.0f, p.y + nm * pixels, isa);
      }
    });
    return absl::OkStatus();
  }

  const int64_t units = batch * p.group;
  const int64_t unit_macs = p.m_per_group * p.rows() * pixels;
  if (units >= 4 || (units >= 2 && unit_macs < kSmallUnitMacs)) {
    ctx.ParallelFor(units, unit_macs, [&](int64_t begin, int64_t end) {
      std::vector<float> col(p.pointwise() ? 0 : static_cast<size_t>(p.rows() * p.tile_pixels()));
      for (int64_t u = begin; u < end; ++u) RunUnit(p, u / p.group, u % p.group, col.data());
    });
  } else {
    std::vector<float> col;
    for (int64_t u = 0; u < units; ++u) RunUnitThreaded(ctx, p, u / p.group, u % p.group, col);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterCpuConvKernels(KernelRegistry& registry) {
  return registry.Register("Conv", kCpuDevice, DType::kF32, ConvKernel);
}

}  // namespace tsr

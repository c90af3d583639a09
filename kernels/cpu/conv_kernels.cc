// CPU Conv kernel for f32 (channels-first, one to three spatial dimensions, grouped,
// strided, dilated, padded, optional bias). The algorithm is picked per shape:
//   - depthwise (group == input channels, 1-D or 2-D): a direct kernel
//     (conv_depthwise.h), since a GEMM would have a single row per group;
//   - 3x3, stride 1, undilated, ungrouped 2-D with enough channels, at AVX2 and
//     above: Winograd (conv_winograd.h), which needs 2.25x to 4x fewer multiplies;
//   - few input channels per output (C/group * taps <= 160), stride 1, 1-D or 2-D,
//     at AVX2 and above: direct loops over zero-padded planes (conv_direct.h), as
//     the GEMMs would be thin and dominated by their packing;
//   - 1x1, stride 1, no padding: the input of each image and group already is the
//     [C/group, pixels] matrix, so one Sgemm on it directly, with no copy;
//   - 1x1, strided, no padding: the input subsampled into that matrix, then Sgemm;
//   - otherwise an implicit GEMM: Sgemm's B panels are packed by im2col itself
//     (conv_im2col.h's Im2ColPacker), so no column matrix is written or read back.
// The weights of each group are packed for the GEMM once per call (SgemmPackedA) and
// shared by every image and thread; the bias is Sgemm's row_bias epilogue.
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
#include "kernels/cpu/conv_direct.h"
#include "kernels/cpu/conv_im2col.h"
#include "kernels/cpu/conv_im2col_row.h"
#include "kernels/cpu/conv_window.h"
#include "kernels/cpu/conv_winograd.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/reference_fallback.h"
#include "kernels/kernel.h"

namespace tsr {

namespace {

// Below this many multiply-adds an (image, group) pair is not worth splitting a GEMM
// over threads; the pairs themselves are spread over the threads instead.
constexpr int64_t kSmallUnitMacs = int64_t{1} << 22;

// From this many output channels a one-channel input goes through the GEMM path.
constexpr int64_t kGemmMinOutputsForOneChannel = 4;

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
  // 1x1 and unpadded but strided: every output pixel reads one input pixel.
  bool strided_pointwise() const {
    for (int d = 0; d < 3; ++d) {
      if (w.kernel[d] != 1 || w.pad_begin[d] != 0 || w.pad_end[d] != 0) return false;
    }
    return !pointwise();
  }
};

const float* GroupInput(const ConvProblem& p, int64_t n, int64_t g) {
  return p.x + (n * p.channels + g * p.c_per_group) * p.w.in_size();
}

// All output channels and pixels of group g of image n, from the group's packed
// weights; options.parallel_for (if any) splits the GEMM.
void RunUnit(const ConvProblem& p, const SgemmPackedA& weights, int64_t n, int64_t g, const GemmOptions& base) {
  const int64_t pixels = p.w.out_size();
  GemmOptions options = base;
  if (p.bias != nullptr) options.epilogue.row_bias = p.bias + g * p.m_per_group;
  float* y = p.y + (n * p.out_channels + g * p.m_per_group) * pixels;
  if (p.pointwise()) {
    Sgemm(weights, false, pixels, 1.0f, GroupInput(p, n, g), pixels, 0.0f, y, pixels, options);
  } else if (p.strided_pointwise()) {
    // The subsampled input is only channels x pixels floats (a quarter of the input
    // at stride 2): gathered once into a plain matrix, it is packed by Sgemm's block
    // copies instead of im2col's per-line calls, which dominate on short output lines.
    thread_local std::vector<float> subsampled;
    subsampled.resize(static_cast<size_t>(p.c_per_group * pixels));
    const float* x = GroupInput(p, n, g);
    const bool avx2 = ActiveCpuIsa() >= CpuIsa::kAvx2;
    float* dst = subsampled.data();
    for (int64_t c = 0; c < p.c_per_group; ++c) {
      const float* xc = x + c * p.w.in_size();
      for (int64_t od = 0; od < p.w.out[0]; ++od) {
        for (int64_t oh = 0; oh < p.w.out[1]; ++oh, dst += p.w.out[2]) {
          const float* src = xc + (od * p.w.stride[0] * p.w.in[1] + oh * p.w.stride[1]) * p.w.in[2];
          if (avx2) {
            StridedCopyAvx2(src, p.w.stride[2], p.w.out[2], dst);
          } else {
            for (int64_t ow = 0; ow < p.w.out[2]; ++ow) dst[ow] = src[ow * p.w.stride[2]];
          }
        }
      }
    }
    Sgemm(weights, false, pixels, 1.0f, subsampled.data(), pixels, 0.0f, y, pixels, options);
  } else {
    Sgemm(weights, Im2ColPacker(p.w, GroupInput(p, n, g)), pixels, 1.0f, 0.0f, y, pixels, options);
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
    return RunReferenceKernel(ctx);
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

  // One input channel (group 1) with several outputs is an ordinary conv: the GEMM
  // computes all outputs per pass over the taps, the direct kernel one at a time.
  const bool single_input_channel = p.channels == 1 && p.out_channels >= kGemmMinOutputsForOneChannel;
  if (p.group == p.channels && !single_input_channel && p.w.kernel[0] == 1 && p.w.in[0] == 1 && p.w.out[0] == 1) {
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

  if (const int tile = ChooseWinogradTile(p.w, p.channels, p.out_channels, p.group); tile != 0) {
    WinogradConv(p.w, tile, batch, p.channels, p.out_channels, p.x, p.weights, p.bias, p.y, ctx.parallel_for());
    return absl::OkStatus();
  }

  if (DirectConvApplies(p.w, p.c_per_group)) {
    DirectConv(p.w, batch, p.channels, p.out_channels, p.group, p.x, p.weights, p.bias, p.y, ctx.parallel_for());
    return absl::OkStatus();
  }

  // Each group's weights [m_per_group, rows()] packed once for all images.
  GemmOptions threaded;
  threaded.parallel_for = ctx.parallel_for();
  std::vector<SgemmPackedA> weights(static_cast<size_t>(p.group));
  for (int64_t g = 0; g < p.group; ++g) {
    weights[g].Pack(false, p.m_per_group, p.rows(), p.weights + g * p.m_per_group * p.rows(), p.rows(), threaded);
  }

  const int64_t units = batch * p.group;
  const int64_t unit_macs = p.m_per_group * p.rows() * pixels;
  if (units >= 4 || (units >= 2 && unit_macs < kSmallUnitMacs)) {
    ctx.ParallelFor(units, unit_macs, [&](int64_t begin, int64_t end) {
      for (int64_t u = begin; u < end; ++u) RunUnit(p, weights[u % p.group], u / p.group, u % p.group, GemmOptions{});
    });
  } else {
    for (int64_t u = 0; u < units; ++u) RunUnit(p, weights[u % p.group], u / p.group, u % p.group, threaded);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterCpuConvKernels(KernelRegistry& registry) {
  return registry.Register("Conv", kCpuDevice, DType::kF32, ConvKernel);
}

}  // namespace tsr

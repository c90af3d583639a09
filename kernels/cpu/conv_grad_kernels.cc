// CPU ConvGradFilter kernel for f32 (the weight gradient of Conv; graph/ops/
// gradient_ops.cc), one to three spatial dimensions, grouped, strided, dilated,
// padded. Per group g it forms the transposed gradient
//   dW_g^T [C/group * taps, M/group] = sum over images n of im2col(X_{n,g}) x dY_{n,g}^T
// where im2col (conv_im2col.h, the forward Conv's) lays out the window taps as
// [C/group * taps, pixels] rows in the order of W's trailing dims: the wide im2col
// matrix is the GEMM's A, which packs fast row by row, and only the narrow dY is read
// transposed. Images are summed in fixed chunks of kChunkImages, each chunk's partial
// sum in its own buffer, the chunks added in order: chunks run on different threads,
// yet the summation order, and the result, depend only on the shapes. With fewer than
// kMinChunks chunks the images run in order with Sgemm splitting its M/N loops over
// the threads instead. Few input channels per output at stride 1 (conv_direct.h's
// DirectConvApplies) run direct loops instead, with no GEMM, when the input is
// finite -- with sixteen images or more on AVX-512, the loops that hold sixteen images
// in every vector (conv_image_lanes.h). More than
// three spatial dimensions run the reference kernel, and so does a padded window whose dY
// is not finite (the padding's zeros times an infinity would be NaN where the reference
// skips the tap).
#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "absl/types/span.h"
#include "graph/ops/conv_geometry.h"
#include "graph/tensor.h"
#include "kernels/cpu/aligned_buffer.h"
#include "kernels/cpu/conv_direct.h"
#include "kernels/cpu/conv_im2col.h"
#include "kernels/cpu/conv_image_lanes.h"
#include "kernels/cpu/conv_window.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/reference_fallback.h"
#include "kernels/kernel.h"

namespace tsr {

namespace {

constexpr int64_t kChunkImages = 4;
constexpr int64_t kMinChunks = 4;

absl::Status ConvGradFilterKernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& dy = ctx.input(1);
  absl::StatusOr<WindowSpec> spec = WindowSpecFromAttrs(ctx.attrs());
  if (!spec.ok()) return ctx.Error(spec.status().message());
  const absl::Span<const int64_t> in_spatial = absl::MakeConstSpan(x.shape().dims()).subspan(2);
  absl::StatusOr<WindowGeometry> geometry = ComputeWindowGeometry(in_spatial, *spec);
  if (!geometry.ok()) return ctx.Error(geometry.status().message());
  const std::optional<Window3d> window = MakeWindow3d(in_spatial, *geometry);
  if (!window.has_value()) {
    // Declined: four or more spatial dimensions are rare enough for the reference loops.
    return RunReferenceKernel(ctx);
  }
  const Window3d& w = *window;
  const int64_t batch = x.shape().dim(0);
  const int64_t channels = x.shape().dim(1);
  const int64_t out_channels = dy.shape().dim(1);
  const int64_t group = ctx.GetInt("group");
  const int64_t c_per_group = channels / group, m_per_group = out_channels / group;
  const int64_t rows = c_per_group * w.taps();
  const int64_t pixels = w.out_size();
  float* dw = ctx.output(0).data<float>();
  std::fill_n(dw, out_channels * rows, 0.0f);
  if (batch == 0 || pixels == 0 || rows == 0 || m_per_group == 0) return absl::OkStatus();

  const float* xp = x.data<float>();
  const float* dyp = dy.data<float>();
  bool padded = false;
  for (int d = 0; d < 3; ++d) padded = padded || w.pad_begin[d] > 0 || w.pad_end[d] > 0;
  if (padded && !AllFinite(dyp, batch * out_channels * pixels)) {
    // The paths below multiply the padding's zeros by dY (0 x inf = NaN) where the
    // reference skips the padded taps: an infinite or NaN gradient takes the reference.
    return RunReferenceKernel(ctx);
  }
  if (ImageLanesConvApplies(w, batch, channels, group)) {
    ImageLanesConvGradFilter(w, batch, channels, out_channels, xp, dyp, dw, ctx.parallel_for());
    return absl::OkStatus();
  }
  if (DirectConvApplies(w, c_per_group) &&
      DirectConvGradFilter(w, batch, channels, out_channels, group, xp, dyp, dw, ctx.parallel_for())) {
    return absl::OkStatus();
  }
  const int64_t chunks = (batch + kChunkImages - 1) / kChunkImages;
  const bool by_chunk = chunks >= kMinChunks;
  const int64_t partials = by_chunk ? chunks : 1;
  const int64_t block = rows * m_per_group;  // one group's dW^T
  // partial[c][g] holds chunk c's sum for group g.
  std::vector<float> partial(static_cast<size_t>(partials * group * block), 0.0f);
  GemmOptions threaded;
  if (!by_chunk) threaded.parallel_for = ctx.parallel_for();
  auto run_images = [&](int64_t n0, int64_t n1, float* sums) {
    thread_local AlignedFloatBuffer col_buffer;
    float* col = col_buffer.Get(rows * pixels);
    for (int64_t g = 0; g < group; ++g) {
      for (int64_t n = n0; n < n1; ++n) {
        Im2Col(w, xp + (n * channels + g * c_per_group) * w.in_size(), 0, rows, 0, pixels, col);
        Sgemm(/*trans_a=*/false, /*trans_b=*/true, rows, m_per_group, pixels, 1.0f, col, pixels,
              dyp + (n * out_channels + g * m_per_group) * pixels, pixels, /*beta=*/1.0f, sums + g * block, m_per_group,
              threaded);
      }
    }
  };
  if (by_chunk) {
    ctx.ParallelFor(chunks, kChunkImages * 2 * block * pixels, [&](int64_t c0, int64_t c1) {
      for (int64_t c = c0; c < c1; ++c) {
        run_images(c * kChunkImages, std::min(batch, (c + 1) * kChunkImages), partial.data() + c * group * block);
      }
    });
  } else {
    run_images(0, batch, partial.data());
  }
  // dW[g * m_per_group + i][r] = sum over chunks, in order, of dW_g^T[r][i].
  for (int64_t g = 0; g < group; ++g) {
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t i = 0; i < m_per_group; ++i) {
        float sum = 0.0f;
        for (int64_t c = 0; c < partials; ++c) sum += partial[(c * group + g) * block + r * m_per_group + i];
        dw[(g * m_per_group + i) * rows + r] = sum;
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterCpuConvGradKernels(KernelRegistry& registry) {
  return registry.Register("ConvGradFilter", kCpuDevice, DType::kF32, ConvGradFilterKernel);
}

}  // namespace tsr

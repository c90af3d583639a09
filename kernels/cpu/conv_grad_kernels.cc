// CPU ConvGradFilter kernel for f32 (the weight gradient of Conv; graph/ops/
// gradient_ops.cc), one to three spatial dimensions, grouped, strided, dilated,
// padded. Per group g, summed over the images n in order:
//   dW_g [M/group, C/group * taps] += dY_{n,g} [M/group, pixels] x im2col(X_{n,g})^T
// where im2col (conv_im2col.h, the forward Conv's) lays out the window taps as
// [C/group * taps, pixels] rows in the order of W's trailing dims. Sgemm splits only
// its M/N loops over threads, so the summation order, and the result, do not depend
// on the thread count. More than three spatial dimensions run the reference kernel.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "absl/types/span.h"
#include "graph/ops/conv_geometry.h"
#include "graph/tensor.h"
#include "kernels/cpu/conv_im2col.h"
#include "kernels/cpu/conv_window.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/gemm.h"
#include "kernels/kernel.h"

namespace tsr {

namespace {

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
    const KernelFn* reference = KernelRegistry::Global().Find("ConvGradFilter", kReferenceDevice, DType::kF32);
    if (reference == nullptr) return ctx.Error("no reference ConvGradFilter kernel for f32");
    return (*reference)(ctx);
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

  GemmOptions threaded;
  threaded.parallel_for = ctx.parallel_for();
  const float* xp = x.data<float>();
  const float* dyp = dy.data<float>();
  std::vector<float> col(static_cast<size_t>(rows * pixels));
  for (int64_t g = 0; g < group; ++g) {
    for (int64_t n = 0; n < batch; ++n) {
      Im2Col(w, xp + (n * channels + g * c_per_group) * w.in_size(), 0, rows, 0, pixels, col.data());
      Sgemm(/*trans_a=*/false, /*trans_b=*/true, m_per_group, rows, pixels, 1.0f,
            dyp + (n * out_channels + g * m_per_group) * pixels, pixels, col.data(), pixels, /*beta=*/1.0f,
            dw + g * m_per_group * rows, rows, threaded);
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterCpuConvGradKernels(KernelRegistry& registry) {
  return registry.Register("ConvGradFilter", kCpuDevice, DType::kF32, ConvGradFilterKernel);
}

}  // namespace tsr

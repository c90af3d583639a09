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
// The choice and the weight preparation live in conv_prepared.h, which the compiler
// also calls once for constant weights; here they are redone on every call, into a
// per-thread object whose memory is reused.
#include <optional>

#include "absl/types/span.h"
#include "graph/dtype.h"
#include "graph/ops/conv_geometry.h"
#include "graph/tensor.h"
#include "kernels/cpu/conv_prepared.h"
#include "kernels/cpu/conv_window.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/reference_fallback.h"
#include "kernels/kernel.h"

namespace tsr {

namespace {

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
  ConvGeometry conv;
  conv.window = *window;
  conv.channels = x.shape().dim(1);
  conv.out_channels = wt.shape().dim(0);
  conv.group = ctx.GetInt("group");

  // Reused from call to call on this thread (the packed weights are megabytes:
  // fresh pages every call would cost as much as the packing). Per call: the weights
  // are borrowed, so the object must not be used past this call.
  thread_local PreparedConvWeights prepared;
  if (absl::Status status =
          PrepareConvWeightsInto(conv, wt.data<float>(), /*per_call=*/true, ctx.parallel_for(), &prepared);
      !status.ok()) {
    return ctx.Error(status.message());
  }
  ConvForward(prepared, x.shape().dim(0), x.data<float>(), ctx.has_input(2) ? ctx.input(2).data<float>() : nullptr,
              ctx.output(0).data<float>(), ctx.parallel_for());
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterCpuConvKernels(KernelRegistry& registry) {
  return registry.Register("Conv", kCpuDevice, DType::kF32, ConvKernel);
}

}  // namespace tsr

// CPU Conv kernel for f32 (channels-first, one to three spatial dimensions, grouped,
// strided, dilated, padded, optional bias). The algorithm is picked per shape:
//   - depthwise (group == input channels, 1-D or 2-D): a direct kernel
//     (conv_depthwise.h), since a GEMM would have a single row per group;
//   - 3x3, stride 1, undilated, ungrouped 2-D with enough channels, at AVX2 and
//     above: Winograd (conv_winograd.h), which needs 2.25x to 4x fewer multiplies;
//   - few input channels per output (C/group * taps <= 160), stride 1, 1-D or 2-D,
//     not 1x1, at AVX2 and above: direct loops over zero-padded planes
//     (conv_direct.h), as the GEMMs would be thin and dominated by their packing;
//   - 1x1, stride 1, no padding: the input of each image and group already is the
//     [C/group, pixels] matrix, so one Sgemm on it directly, with no copy;
//   - 1x1, strided, no padding: the input subsampled into that matrix, then Sgemm;
//   - otherwise an implicit GEMM: Sgemm's B panels are packed by im2col itself
//     (conv_im2col.h's Im2ColPacker), so no column matrix is written or read back.
// The weights of each group are packed for the GEMM once per call (SgemmPackedA) and
// shared by every image and thread; the bias is Sgemm's row_bias epilogue.
// More than three spatial dimensions run the reference kernel.
// The choice and the weight preparation live in conv_prepared.h, which the compiler
// also calls once for constant weights; here they are redone on every call, into the
// per-thread object PrepareConvWeightsForCall reuses (shared with FusedConv).
#include <optional>

#include "graph/dtype.h"
#include "graph/tensor.h"
#include "kernels/cpu/conv_prepared.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/reference_fallback.h"
#include "kernels/kernel.h"

namespace tsr {

namespace {

absl::Status ConvKernel(KernelContext& ctx) {
  absl::StatusOr<std::optional<ConvGeometry>> geometry = NodeConvGeometry(ctx);
  if (!geometry.ok()) return geometry.status();
  if (!geometry->has_value()) {
    // Declined: four or more spatial dimensions are rare enough for the reference loops.
    return RunReferenceKernel(ctx);
  }
  absl::StatusOr<const PreparedConvWeights*> prepared =
      PrepareConvWeightsForCall(**geometry, ctx.input(1).data<float>(), ctx.parallel_for());
  if (!prepared.ok()) return ctx.Error(prepared.status().message());
  ConvForward(**prepared, ctx.input(0).shape().dim(0), ctx.input(0).data<float>(),
              ctx.has_input(2) ? ctx.input(2).data<float>() : nullptr, ctx.output(0).data<float>(), ctx.parallel_for());
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterCpuConvKernels(KernelRegistry& registry) {
  return registry.Register("Conv", kCpuDevice, DType::kF32, ConvKernel);
}

}  // namespace tsr

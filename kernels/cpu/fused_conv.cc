// The FusedConv f32 cpu kernel and FusedConvForward (fused_conv.h). The convolution
// is ConvForward on weights prepared per call, exactly as the cpu Conv kernel
// (conv_kernels.cc) runs it; the epilogue then makes one vectorized pass over the
// output (fused_activation.h) instead of the two or three full passes, each with its
// own kernel dispatch, that Conv -> Add -> activation would take. More than three
// spatial dimensions run the reference kernel, as Conv does.
#include "kernels/cpu/fused_conv.h"

#include <optional>

#include "absl/strings/str_cat.h"
#include "graph/dtype.h"
#include "graph/tensor.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/reference_fallback.h"

namespace tsr {

namespace {

// Rough cycles per output element of the epilogue, for ParallelFor's splitting.
int64_t EpilogueCost(const FusedActivation& activation) {
  switch (activation.kind) {
    case FusedActivationKind::kSigmoid:
    case FusedActivationKind::kTanh:
    case FusedActivationKind::kGelu:
      return 12;
    default:
      return 1;
  }
}

absl::Status FusedConvKernel(KernelContext& ctx) {
  absl::StatusOr<FusedActivation> activation = ParseFusedActivation(ctx);
  if (!activation.ok()) return ctx.Error(activation.status().message());
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0);
  absl::StatusOr<std::optional<ConvGeometry>> geometry = NodeConvGeometry(ctx);
  if (!geometry.ok()) return geometry.status();
  if (!geometry->has_value()) {
    // Declined: four or more spatial dimensions are rare enough for the reference loops.
    return RunReferenceKernel(ctx);
  }
  if (ctx.has_input(3) && ctx.input(3).shape() != y.shape()) {
    return ctx.Error(absl::StrCat("input 3 ('Z') has shape ", ctx.input(3).shape().ToString(),
                                  " but must have the output's shape ", y.shape().ToString()));
  }
  // As in the Conv kernel: this thread's reused object, weights borrowed for this call only.
  absl::StatusOr<const PreparedConvWeights*> prepared =
      PrepareConvWeightsForCall(**geometry, ctx.input(1).data<float>(), ctx.parallel_for());
  if (!prepared.ok()) return ctx.Error(prepared.status().message());
  FusedConvForward(
      **prepared, x.shape().dim(0), x.data<float>(), ctx.has_input(2) ? ctx.input(2).data<float>() : nullptr,
      ctx.has_input(3) ? ctx.input(3).data<float>() : nullptr, *activation, y.data<float>(), ctx.parallel_for());
  return absl::OkStatus();
}

}  // namespace

void FusedConvForward(const PreparedConvWeights& prepared, int64_t batch, const float* x, const float* bias,
                      const float* residual, const FusedActivation& activation, float* y,
                      const ParallelForFn& parallel_for) {
  const bool has_epilogue = activation.kind != FusedActivationKind::kNone || residual != nullptr;
  const ConvGeometry& geo = prepared.geometry();
  const int64_t plane = geo.window.out_size();
  const CpuIsa isa = ActiveCpuIsa();
  // One pass per output plane [image, channel]; elementwise, so how the planes are
  // split over threads, or whether the convolution applies it as it goes, changes no value.
  const PlaneEpilogueFn epilogue = [&](int64_t begin, int64_t end, int64_t offset, int64_t length) {
    for (int64_t p = begin; p < end; ++p) {
      const int64_t at = p * plane + offset;
      ApplyFusedEpilogue(activation, residual == nullptr ? nullptr : residual + at, y + at, length, isa);
    }
  };
  if (ConvForward(prepared, batch, x, bias, y, parallel_for, has_epilogue ? &epilogue : nullptr) || !has_epilogue) {
    return;
  }
  RunParallelFor(parallel_for, batch * geo.out_channels, plane * EpilogueCost(activation),
                 [&](int64_t begin, int64_t end) { epilogue(begin, end, 0, plane); });
}

absl::Status RegisterCpuFusedConvKernels(KernelRegistry& registry) {
  return registry.Register("FusedConv", kCpuDevice, DType::kF32, FusedConvKernel);
}

}  // namespace tsr

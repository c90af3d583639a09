// CPU f32 kernels of the activation ops: Relu, LeakyRelu, Sigmoid, Tanh, Gelu (erf and
// tanh forms), Silu, Softplus, Erf. Relu and LeakyRelu are exact (elementwise_loops.h);
// the others use vector_math.h (a few ulp on AVX2, see vector_math_avx2.cc). The work
// is split over the flat tensor; the output may alias the input.
#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "graph/dtype.h"
#include "graph/status_macros.h"
#include "graph/tensor.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/elementwise_loops.h"
#include "kernels/cpu/vector_math.h"
#include "kernels/kernel.h"

namespace tsr {

namespace {

// Rough cycles per element, for ParallelFor's splitting.
constexpr int64_t kSimpleCost = 1;
constexpr int64_t kTranscendentalCost = 12;

// y = row(x) over the flat tensor.
template <typename Row>
absl::Status RunUnary(KernelContext& ctx, Row row, int64_t cost) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0);
  if (x.shape() != y.shape()) return ctx.Error("input and output shapes differ");
  const float* px = x.data<float>();
  float* py = y.data<float>();
  ctx.ParallelFor(x.num_elements(), cost,
                  [&](int64_t begin, int64_t end) { row(px + begin, py + begin, end - begin); });
  return absl::OkStatus();
}

absl::Status ReluKernel(KernelContext& ctx) {
  return RunUnary(ctx, ElementwiseLoopsFor(ActiveCpuIsa()).relu, kSimpleCost);
}

absl::Status LeakyReluKernel(KernelContext& ctx) {
  const double alpha = ctx.GetFloat("alpha");
  const UnaryParamRowFn leaky = ElementwiseLoopsFor(ActiveCpuIsa()).leaky_relu;
  return RunUnary(
      ctx, [leaky, alpha](const float* x, float* y, int64_t n) { leaky(x, y, n, alpha); }, kSimpleCost);
}

KernelFn MathKernel(VecUnaryFn VectorMath::*member) {
  return [member](KernelContext& ctx) {
    return RunUnary(ctx, VectorMathFor(ActiveCpuIsa()).*member, kTranscendentalCost);
  };
}

absl::Status GeluKernel(KernelContext& ctx) {
  const std::string approximate = ctx.GetString("approximate");
  const VectorMath& math = VectorMathFor(ActiveCpuIsa());
  if (approximate == "none") return RunUnary(ctx, math.gelu_erf, kTranscendentalCost);
  if (approximate == "tanh") return RunUnary(ctx, math.gelu_tanh, kTranscendentalCost);
  return ctx.Error(
      absl::StrCat("attribute 'approximate' is \"", approximate, "\" but \"none\" or \"tanh\" is required"));
}

}  // namespace

absl::Status RegisterCpuActivationKernels(KernelRegistry& registry) {
  auto reg = [&registry](absl::string_view op, KernelFn fn) {
    return registry.Register(op, kCpuDevice, DType::kF32, std::move(fn));
  };
  TSR_RETURN_IF_ERROR(reg("Relu", ReluKernel));
  TSR_RETURN_IF_ERROR(reg("LeakyRelu", LeakyReluKernel));
  TSR_RETURN_IF_ERROR(reg("Sigmoid", MathKernel(&VectorMath::sigmoid)));
  TSR_RETURN_IF_ERROR(reg("Tanh", MathKernel(&VectorMath::tanh)));
  TSR_RETURN_IF_ERROR(reg("Gelu", GeluKernel));
  TSR_RETURN_IF_ERROR(reg("Silu", MathKernel(&VectorMath::silu)));
  TSR_RETURN_IF_ERROR(reg("Softplus", MathKernel(&VectorMath::softplus)));
  TSR_RETURN_IF_ERROR(reg("Erf", MathKernel(&VectorMath::erf)));
  return absl::OkStatus();
}

}  // namespace tsr

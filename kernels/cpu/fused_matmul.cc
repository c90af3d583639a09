// The FusedMatMul f32 cpu kernel and FusedMatMulForward (fused_matmul.h). A's leading
// dimensions are rows of one product, so a [batch, M, K] input is one Sgemm with
// batch * M rows against the shared 2-D weight.
//
// Sgemm's epilogue applies act(alpha * AB + beta * C + bias) and adds its own
// residual after the activation, which is the wrong order here; so the residual is
// copied into Y and enters as beta * C with beta = 1, and the activation stays in
// the epilogue for Relu or runs as one vectorized pass per row block afterwards
// (the others, Gelu included: see EpilogueActivation).
#include "kernels/cpu/fused_matmul.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>

#include "absl/strings/str_cat.h"
#include "graph/dtype.h"
#include "graph/status_macros.h"
#include "graph/tensor.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/gemm.h"

namespace tsr {

namespace {

// Sgemm's epilogue activation for `activation`, when it is worth using: Relu. Sgemm's
// Gelu is a scalar std::erf per element, which measured slower (128x768x3072 + bias:
// ~18 vs ~12 CPU ms) than the vectorized gelu_erf pass afterwards that the Gelu kernel uses.
std::optional<GemmActivation> EpilogueActivation(const FusedActivation& activation) {
  switch (activation.kind) {
    case FusedActivationKind::kNone:
      return GemmActivation::kNone;
    case FusedActivationKind::kRelu:
      return GemmActivation::kRelu;
    default:
      return std::nullopt;
  }
}

absl::Status FusedMatMulKernel(KernelContext& ctx) {
  TSR_ASSIGN_OR_RETURN(const FusedMatMulShape shape, NodeFusedMatMulShape(ctx));
  FusedMatMulForward(shape.m, shape.n, shape.k, ctx.input(0).data<float>(), ctx.input(1).data<float>(),
                     shape.transpose_b, ctx.has_input(2) ? ctx.input(2).data<float>() : nullptr,
                     ctx.has_input(3) ? ctx.input(3).data<float>() : nullptr, shape.activation,
                     ctx.output(0).data<float>(), ctx.parallel_for());
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<FusedMatMulShape> NodeFusedMatMulShape(KernelContext& ctx) {
  FusedMatMulShape shape;
  absl::StatusOr<FusedActivation> activation = ParseFusedActivation(ctx);
  if (!activation.ok()) return ctx.Error(activation.status().message());
  shape.activation = *activation;
  const Shape& a = ctx.input(0).shape();
  const Shape& b = ctx.input(1).shape();
  const Shape& y = ctx.output(0).shape();
  shape.transpose_b = ctx.GetInt("transpose_b") == 1;
  if (a.rank() < 2 || b.rank() != 2) {
    return ctx.Error(absl::StrCat("A ", a.ToString(), " must have rank >= 2 and B ", b.ToString(), " rank 2"));
  }
  shape.k = a.dim(a.rank() - 1);
  shape.n = b.dim(shape.transpose_b ? 0 : 1);
  if (b.dim(shape.transpose_b ? 1 : 0) != shape.k || y.rank() != a.rank() || y.dim(y.rank() - 1) != shape.n) {
    return ctx.Error(absl::StrCat("A ", a.ToString(), ", B ", b.ToString(), " (transpose_b=", shape.transpose_b,
                                  ") and Y ", y.ToString(), " do not agree"));
  }
  if (ctx.has_input(2) && ctx.input(2).num_elements() != shape.n) {
    return ctx.Error(absl::StrCat("input 2 ('bias') has shape ", ctx.input(2).shape().ToString(), " but [", shape.n,
                                  "] is required"));
  }
  if (ctx.has_input(3) && ctx.input(3).shape() != y) {
    return ctx.Error(absl::StrCat("input 3 ('Z') has shape ", ctx.input(3).shape().ToString(),
                                  " but must have the output's shape ", y.ToString()));
  }
  shape.m = shape.n == 0 ? 0 : y.num_elements() / shape.n;
  return shape;
}

namespace {

// y = act(product + bias + residual) where `product(beta, options)` runs the Sgemm
// y = A op(B) + beta * y with options' epilogue.
void FusedMatMulWith(int64_t m, int64_t n, const float* bias, const float* residual, const FusedActivation& activation,
                     float* y, const ParallelForFn& parallel_for,
                     const std::function<void(float beta, const GemmOptions& options)>& product) {
  if (m == 0 || n == 0) return;
  const std::optional<GemmActivation> in_gemm = EpilogueActivation(activation);
  GemmOptions options;
  options.parallel_for = parallel_for;
  options.epilogue.bias = bias;
  options.epilogue.activation = in_gemm.value_or(GemmActivation::kNone);
  float beta = 0.0f;
  if (residual != nullptr) {
    if (residual != y) {
      RunParallelFor(parallel_for, m, n, [&](int64_t begin, int64_t end) {
        std::copy(residual + begin * n, residual + end * n, y + begin * n);
      });
    }
    beta = 1.0f;
  }
  product(beta, options);
  if (in_gemm.has_value()) return;
  const CpuIsa isa = ActiveCpuIsa();
  // Elementwise on rows: any split gives the same floats.
  RunParallelFor(parallel_for, m, 12 * n, [&](int64_t begin, int64_t end) {
    ApplyFusedEpilogue(activation, nullptr, y + begin * n, (end - begin) * n, isa);
  });
}

}  // namespace

void FusedMatMulForward(int64_t m, int64_t n, int64_t k, const float* a, const float* b, bool transpose_b,
                        const float* bias, const float* residual, const FusedActivation& activation, float* y,
                        const ParallelForFn& parallel_for) {
  FusedMatMulWith(m, n, bias, residual, activation, y, parallel_for, [&](float beta, const GemmOptions& options) {
    Sgemm(false, transpose_b, m, n, k, 1.0f, a, k, b, transpose_b ? k : n, beta, y, n, options);
  });
}

void FusedMatMulForward(int64_t m, const float* a, const SgemmPackedB& b, const float* bias, const float* residual,
                        const FusedActivation& activation, float* y, const ParallelForFn& parallel_for) {
  FusedMatMulWith(m, b.columns(), bias, residual, activation, y, parallel_for,
                  [&](float beta, const GemmOptions& options) {
                    Sgemm(false, m, 1.0f, a, b.depth(), b, beta, y, b.columns(), options);
                  });
}

absl::Status RegisterCpuFusedMatMulKernels(KernelRegistry& registry) {
  return registry.Register("FusedMatMul", kCpuDevice, DType::kF32, FusedMatMulKernel);
}

}  // namespace tsr

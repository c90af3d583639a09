// CPU kernels of the optimizer ops for f32 (graph/ops/optimizer_ops.cc has the update
// rules): SGDUpdate, MomentumUpdate (and Nesterov), AdamUpdate (and AdamW),
// RMSPropUpdate. Each element is updated in double with the reference kernel's
// expressions in the same order and rounded once, so results are bitwise equal to
// the reference; what makes them fast is reading the tensors through plain pointers
// (the compiler vectorizes the loops) and splitting the elements over threads.
#include <cmath>
#include <cstdint>

#include "absl/status/status.h"
#include "graph/status_macros.h"
#include "graph/tensor.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/kernel.h"

// -O2 vectorizes only trivially cheap loops; these memory-bound loops gain from it.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("tree-vectorize")
#endif

namespace tsr {

namespace {

// Rough cycles per element: a few loads, stores and double FMAs; Adam adds a sqrt
// and a divide.
constexpr int64_t kUpdateCost = 8;
constexpr int64_t kAdamCost = 30;

float Scalar(const Tensor& t) { return t.data<float>()[0]; }

absl::Status SgdKernel(KernelContext& ctx) {
  const float* p = ctx.input(0).data<float>();
  const float* g = ctx.input(1).data<float>();
  const double lr = Scalar(ctx.input(2)), wd = ctx.GetFloat("weight_decay");
  float* out = ctx.output(0).data<float>();
  ctx.ParallelFor(ctx.input(0).num_elements(), kUpdateCost, [&](int64_t begin, int64_t end) {
#pragma GCC ivdep
    for (int64_t i = begin; i < end; ++i) {
      const double pi = p[i];
      out[i] = static_cast<float>(pi - lr * (static_cast<double>(g[i]) + wd * pi));
    }
  });
  return absl::OkStatus();
}

absl::Status MomentumKernel(KernelContext& ctx) {
  const float* p = ctx.input(0).data<float>();
  const float* v = ctx.input(1).data<float>();
  const float* g = ctx.input(2).data<float>();
  const double lr = Scalar(ctx.input(3)), mu = ctx.GetFloat("momentum"), wd = ctx.GetFloat("weight_decay");
  const bool nesterov = ctx.GetInt("nesterov") == 1;
  float* new_p = ctx.output(0).data<float>();
  float* new_v = ctx.output(1).data<float>();
  // Two loops rather than a branch per element, each with no dependence between
  // iterations (outputs may alias inputs only at the same index), so they vectorize.
  ctx.ParallelFor(ctx.input(0).num_elements(), kUpdateCost, [&](int64_t begin, int64_t end) {
    if (nesterov) {
#pragma GCC ivdep
      for (int64_t i = begin; i < end; ++i) {
        const double pi = p[i];
        const double gi = static_cast<double>(g[i]) + wd * pi;
        const double vi = mu * static_cast<double>(v[i]) + gi;
        new_v[i] = static_cast<float>(vi);
        new_p[i] = static_cast<float>(pi - lr * (gi + mu * vi));
      }
    } else {
#pragma GCC ivdep
      for (int64_t i = begin; i < end; ++i) {
        const double pi = p[i];
        const double gi = static_cast<double>(g[i]) + wd * pi;
        const double vi = mu * static_cast<double>(v[i]) + gi;
        new_v[i] = static_cast<float>(vi);
        new_p[i] = static_cast<float>(pi - lr * vi);
      }
    }
  });
  return absl::OkStatus();
}

absl::Status AdamKernel(KernelContext& ctx) {
  const float* p = ctx.input(0).data<float>();
  const float* m = ctx.input(1).data<float>();
  const float* v = ctx.input(2).data<float>();
  const float* g = ctx.input(3).data<float>();
  const double lr = Scalar(ctx.input(4));
  const double t = static_cast<double>(ctx.input(5).GetAsInt64(0)) + 1;
  const double b1 = ctx.GetFloat("beta1"), b2 = ctx.GetFloat("beta2"), eps = ctx.GetFloat("epsilon");
  const double wd = ctx.GetFloat("weight_decay");
  const bool decoupled = ctx.GetInt("decoupled_weight_decay") == 1;
  const double correction1 = 1 - std::pow(b1, t), correction2 = 1 - std::pow(b2, t);
  float* new_p = ctx.output(0).data<float>();
  float* new_m = ctx.output(1).data<float>();
  float* new_v = ctx.output(2).data<float>();
  ctx.ParallelFor(ctx.input(0).num_elements(), kAdamCost, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      double pi = p[i];
      double gi = g[i];
      if (decoupled) {
        pi -= lr * wd * pi;
      } else {
        gi += wd * pi;
      }
      const double mi = b1 * static_cast<double>(m[i]) + (1 - b1) * gi;
      const double vi = b2 * static_cast<double>(v[i]) + (1 - b2) * gi * gi;
      new_m[i] = static_cast<float>(mi);
      new_v[i] = static_cast<float>(vi);
      new_p[i] = static_cast<float>(pi - lr * (mi / correction1) / (std::sqrt(vi / correction2) + eps));
    }
  });
  return absl::OkStatus();
}

absl::Status RmsPropKernel(KernelContext& ctx) {
  const float* p = ctx.input(0).data<float>();
  const float* s = ctx.input(1).data<float>();
  const float* g = ctx.input(2).data<float>();
  const double lr = Scalar(ctx.input(3)), rho = ctx.GetFloat("rho"), eps = ctx.GetFloat("epsilon");
  const double wd = ctx.GetFloat("weight_decay");
  float* new_p = ctx.output(0).data<float>();
  float* new_s = ctx.output(1).data<float>();
  ctx.ParallelFor(ctx.input(0).num_elements(), kAdamCost, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const double pi = p[i];
      const double gi = static_cast<double>(g[i]) + wd * pi;
      const double si = rho * static_cast<double>(s[i]) + (1 - rho) * gi * gi;
      new_s[i] = static_cast<float>(si);
      new_p[i] = static_cast<float>(pi - lr * gi / (std::sqrt(si) + eps));
    }
  });
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterCpuOptimizerKernels(KernelRegistry& registry) {
  TSR_RETURN_IF_ERROR(registry.Register("SGDUpdate", kCpuDevice, DType::kF32, SgdKernel));
  TSR_RETURN_IF_ERROR(registry.Register("MomentumUpdate", kCpuDevice, DType::kF32, MomentumKernel));
  TSR_RETURN_IF_ERROR(registry.Register("AdamUpdate", kCpuDevice, DType::kF32, AdamKernel));
  TSR_RETURN_IF_ERROR(registry.Register("RMSPropUpdate", kCpuDevice, DType::kF32, RmsPropKernel));
  return absl::OkStatus();
}

}  // namespace tsr

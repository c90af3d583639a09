// CPU kernels of the optimizer ops for f32 (graph/ops/optimizer_ops.cc has the update
// rules): SGDUpdate, MomentumUpdate (and Nesterov), AdamUpdate (and AdamW),
// RMSPropUpdate. SGD, Adam and RMSProp update each element in double with the reference
// kernel's expressions in the same order and round once, so their results are bitwise
// equal to the reference; momentum updates in f32 with fused multiply-adds, within an ulp
// or two of the reference and the same bits at every ISA (optimizer_rows.h). What makes
// them fast is the vector loops (optimizer_rows.h: AVX2 where the CPU has it, else the
// portable loops here, which the compiler vectorizes for the baseline ISA -- all but
// momentum's, whose std::fma is a library call without hardware FMA) and splitting the
// elements over threads.
#include <cmath>
#include <cstdint>

#include "absl/status/status.h"
#include "graph/status_macros.h"
#include "graph/tensor.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/optimizer_rows.h"
#include "kernels/kernel.h"

// -O2 vectorizes only trivially cheap loops; these memory-bound loops gain from it.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("tree-vectorize")
#endif

namespace tsr {
namespace optimizer_internal {

namespace {

// The portable loops: each element in double, as the reference; each loop has no
// dependence between iterations (outputs may alias inputs only at the same index), so
// the compiler vectorizes them for the baseline ISA.
void SgdRows(const SgdParams& h, const float* p, const float* g, int64_t n, float* new_p) {
#pragma GCC ivdep
  for (int64_t i = 0; i < n; ++i) {
    const double pi = p[i];
    new_p[i] = static_cast<float>(pi - h.lr * (static_cast<double>(g[i]) + h.weight_decay * pi));
  }
}

// One loop per flavour rather than a branch per element, so that each vectorizes. In f32
// with fused multiply-adds (optimizer_rows.h): std::fma gives the AVX2 loop's bits.
template <bool kNesterov>
void MomentumLoop(const MomentumParams& h, const float* p, const float* v, const float* g, int64_t n, float* new_p,
                  float* new_v) {
#pragma GCC ivdep
  for (int64_t i = 0; i < n; ++i) {
    const float pi = p[i];
    const float gi = std::fma(h.weight_decay, pi, g[i]);
    const float vi = std::fma(h.momentum, v[i], gi);
    new_v[i] = vi;
    new_p[i] = std::fma(-h.lr, kNesterov ? std::fma(h.momentum, vi, gi) : vi, pi);
  }
}

void MomentumRows(const MomentumParams& h, const float* p, const float* v, const float* g, int64_t n, float* new_p,
                  float* new_v) {
  if (h.nesterov) {
    MomentumLoop<true>(h, p, v, g, n, new_p, new_v);
  } else {
    MomentumLoop<false>(h, p, v, g, n, new_p, new_v);
  }
}

void AdamRows(const AdamParams& h, const float* p, const float* m, const float* v, const float* g, int64_t n,
              float* new_p, float* new_m, float* new_v) {
  for (int64_t i = 0; i < n; ++i) {
    double pi = p[i];
    double gi = g[i];
    if (h.decoupled) {
      pi -= h.lr * h.weight_decay * pi;
    } else {
      gi += h.weight_decay * pi;
    }
    const double mi = h.beta1 * static_cast<double>(m[i]) + (1 - h.beta1) * gi;
    const double vi = h.beta2 * static_cast<double>(v[i]) + (1 - h.beta2) * gi * gi;
    new_m[i] = static_cast<float>(mi);
    new_v[i] = static_cast<float>(vi);
    new_p[i] = static_cast<float>(pi - h.lr * (mi / h.correction1) / (std::sqrt(vi / h.correction2) + h.epsilon));
  }
}

void RmsPropRows(const RmsPropParams& h, const float* p, const float* s, const float* g, int64_t n, float* new_p,
                 float* new_s) {
  for (int64_t i = 0; i < n; ++i) {
    const double pi = p[i];
    const double gi = static_cast<double>(g[i]) + h.weight_decay * pi;
    const double si = h.rho * static_cast<double>(s[i]) + (1 - h.rho) * gi * gi;
    new_s[i] = static_cast<float>(si);
    new_p[i] = static_cast<float>(pi - h.lr * gi / (std::sqrt(si) + h.epsilon));
  }
}

}  // namespace

const OptimizerRowKernels& PortableOptimizerRows() {
  static constexpr OptimizerRowKernels kRows{&SgdRows, &MomentumRows, &AdamRows, &RmsPropRows};
  return kRows;
}

}  // namespace optimizer_internal

namespace {

using optimizer_internal::OptimizerRowKernels;

// Rough cycles per element: a few loads, stores and double multiplies and adds; Adam
// adds a square root and divides.
constexpr int64_t kUpdateCost = 8;
constexpr int64_t kAdamCost = 30;

float Scalar(const Tensor& t) { return t.data<float>()[0]; }

const OptimizerRowKernels& Rows() {
  return ActiveCpuIsa() >= CpuIsa::kAvx2 ? optimizer_internal::Avx2OptimizerRows()
                                         : optimizer_internal::PortableOptimizerRows();
}

absl::Status SgdKernel(KernelContext& ctx) {
  const optimizer_internal::SgdParams h{Scalar(ctx.input(2)), ctx.GetFloat("weight_decay")};
  const float* p = ctx.input(0).data<float>();
  const float* g = ctx.input(1).data<float>();
  float* out = ctx.output(0).data<float>();
  const auto sgd = Rows().sgd;
  ctx.ParallelFor(ctx.input(0).num_elements(), kUpdateCost,
                  [&](int64_t begin, int64_t end) { sgd(h, p + begin, g + begin, end - begin, out + begin); });
  return absl::OkStatus();
}

absl::Status MomentumKernel(KernelContext& ctx) {
  const optimizer_internal::MomentumParams h{Scalar(ctx.input(3)), static_cast<float>(ctx.GetFloat("momentum")),
                                             static_cast<float>(ctx.GetFloat("weight_decay")),
                                             ctx.GetInt("nesterov") == 1};
  const float* p = ctx.input(0).data<float>();
  const float* v = ctx.input(1).data<float>();
  const float* g = ctx.input(2).data<float>();
  float* new_p = ctx.output(0).data<float>();
  float* new_v = ctx.output(1).data<float>();
  const auto momentum = Rows().momentum;
  ctx.ParallelFor(ctx.input(0).num_elements(), kUpdateCost, [&](int64_t begin, int64_t end) {
    momentum(h, p + begin, v + begin, g + begin, end - begin, new_p + begin, new_v + begin);
  });
  return absl::OkStatus();
}

absl::Status AdamKernel(KernelContext& ctx) {
  optimizer_internal::AdamParams h;
  h.lr = Scalar(ctx.input(4));
  h.beta1 = ctx.GetFloat("beta1");
  h.beta2 = ctx.GetFloat("beta2");
  h.epsilon = ctx.GetFloat("epsilon");
  h.weight_decay = ctx.GetFloat("weight_decay");
  h.decoupled = ctx.GetInt("decoupled_weight_decay") == 1;
  const double t = static_cast<double>(ctx.input(5).GetAsInt64(0)) + 1;
  h.correction1 = 1 - std::pow(h.beta1, t);
  h.correction2 = 1 - std::pow(h.beta2, t);
  const float* p = ctx.input(0).data<float>();
  const float* m = ctx.input(1).data<float>();
  const float* v = ctx.input(2).data<float>();
  const float* g = ctx.input(3).data<float>();
  float* new_p = ctx.output(0).data<float>();
  float* new_m = ctx.output(1).data<float>();
  float* new_v = ctx.output(2).data<float>();
  const auto adam = Rows().adam;
  ctx.ParallelFor(ctx.input(0).num_elements(), kAdamCost, [&](int64_t begin, int64_t end) {
    adam(h, p + begin, m + begin, v + begin, g + begin, end - begin, new_p + begin, new_m + begin, new_v + begin);
  });
  return absl::OkStatus();
}

absl::Status RmsPropKernel(KernelContext& ctx) {
  const optimizer_internal::RmsPropParams h{Scalar(ctx.input(3)), ctx.GetFloat("rho"), ctx.GetFloat("epsilon"),
                                            ctx.GetFloat("weight_decay")};
  const float* p = ctx.input(0).data<float>();
  const float* s = ctx.input(1).data<float>();
  const float* g = ctx.input(2).data<float>();
  float* new_p = ctx.output(0).data<float>();
  float* new_s = ctx.output(1).data<float>();
  const auto rmsprop = Rows().rmsprop;
  ctx.ParallelFor(ctx.input(0).num_elements(), kAdamCost, [&](int64_t begin, int64_t end) {
    rmsprop(h, p + begin, s + begin, g + begin, end - begin, new_p + begin, new_s + begin);
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

// Reference kernels of the optimizer ops (graph/ops/optimizer_ops.cc has the update
// rules): elementwise, computed in double and rounded once to the parameter's dtype.
// They write new tensors; the executor makes them the Variables' values.
#include <cmath>
#include <cstdint>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "kernels/kernel.h"
#include "kernels/reference/convert.h"
#include "kernels/reference/dtype_list.h"
#include "kernels/register_kernels.h"

namespace tsr {

namespace {

using reference::FloatTypes;
using reference::FromDouble;
using reference::RegisterForTypes;
using reference::WidenToDouble;

template <typename T>
double At(const Tensor& t, int64_t i) {
  return WidenToDouble(t.data<T>()[i]);
}

template <typename T>
double ScalarOf(const Tensor& t) {
  return WidenToDouble(t.data<T>()[0]);
}

template <typename T>
absl::Status SgdKernel(KernelContext& ctx) {
  const Tensor &p = ctx.input(0), &g = ctx.input(1);
  const double lr = ScalarOf<T>(ctx.input(2)), wd = ctx.GetFloat("weight_decay");
  T* out = ctx.output(0).data<T>();
  for (int64_t i = 0; i < p.num_elements(); ++i) {
    const double pi = At<T>(p, i);
    out[i] = FromDouble<T>(pi - lr * (At<T>(g, i) + wd * pi));
  }
  return absl::OkStatus();
}

template <typename T>
absl::Status MomentumKernel(KernelContext& ctx) {
  const Tensor &p = ctx.input(0), &v = ctx.input(1), &g = ctx.input(2);
  const double lr = ScalarOf<T>(ctx.input(3)), mu = ctx.GetFloat("momentum"), wd = ctx.GetFloat("weight_decay");
  const bool nesterov = ctx.GetInt("nesterov") == 1;
  T* new_p = ctx.output(0).data<T>();
  T* new_v = ctx.output(1).data<T>();
  for (int64_t i = 0; i < p.num_elements(); ++i) {
    const double pi = At<T>(p, i);
    const double gi = At<T>(g, i) + wd * pi;
    const double vi = mu * At<T>(v, i) + gi;
    new_v[i] = FromDouble<T>(vi);
    new_p[i] = FromDouble<T>(pi - lr * (nesterov ? gi + mu * vi : vi));
  }
  return absl::OkStatus();
}

template <typename T>
absl::Status AdamKernel(KernelContext& ctx) {
  const Tensor &p = ctx.input(0), &m = ctx.input(1), &v = ctx.input(2), &g = ctx.input(3);
  const double lr = ScalarOf<T>(ctx.input(4));
  const double t = static_cast<double>(ctx.input(5).GetAsInt64(0)) + 1;
  const double b1 = ctx.GetFloat("beta1"), b2 = ctx.GetFloat("beta2"), eps = ctx.GetFloat("epsilon");
  const double wd = ctx.GetFloat("weight_decay");
  const bool decoupled = ctx.GetInt("decoupled_weight_decay") == 1;
  const double correction1 = 1 - std::pow(b1, t), correction2 = 1 - std::pow(b2, t);
  T* new_p = ctx.output(0).data<T>();
  T* new_m = ctx.output(1).data<T>();
  T* new_v = ctx.output(2).data<T>();
  for (int64_t i = 0; i < p.num_elements(); ++i) {
    double pi = At<T>(p, i);
    double gi = At<T>(g, i);
    if (decoupled) {
      pi -= lr * wd * pi;
    } else {
      gi += wd * pi;
    }
    const double mi = b1 * At<T>(m, i) + (1 - b1) * gi;
    const double vi = b2 * At<T>(v, i) + (1 - b2) * gi * gi;
    new_m[i] = FromDouble<T>(mi);
    new_v[i] = FromDouble<T>(vi);
    new_p[i] = FromDouble<T>(pi - lr * (mi / correction1) / (std::sqrt(vi / correction2) + eps));
  }
  return absl::OkStatus();
}

template <typename T>
absl::Status RmsPropKernel(KernelContext& ctx) {
  const Tensor &p = ctx.input(0), &s = ctx.input(1), &g = ctx.input(2);
  const double lr = ScalarOf<T>(ctx.input(3)), rho = ctx.GetFloat("rho"), eps = ctx.GetFloat("epsilon");
  const double wd = ctx.GetFloat("weight_decay");
  T* new_p = ctx.output(0).data<T>();
  T* new_s = ctx.output(1).data<T>();
  for (int64_t i = 0; i < p.num_elements(); ++i) {
    const double pi = At<T>(p, i);
    const double gi = At<T>(g, i) + wd * pi;
    const double si = rho * At<T>(s, i) + (1 - rho) * gi * gi;
    new_s[i] = FromDouble<T>(si);
    new_p[i] = FromDouble<T>(pi - lr * gi / (std::sqrt(si) + eps));
  }
  return absl::OkStatus();
}

template <typename T>
absl::Status IncrementKernel(KernelContext& ctx) {
  ctx.output(0).data<T>()[0] = static_cast<T>(ctx.input(0).data<T>()[0] + 1);
  return absl::OkStatus();
}

absl::Status AssignKernel(KernelContext& ctx) {
  const Tensor& value = ctx.input(1);
  Tensor& out = ctx.output(0);
  if (out.dtype() != value.dtype() || out.shape() != value.shape()) {
    return ctx.Error(
        absl::StrCat("the value ", value.type().ToString(), " does not fit the output ", out.type().ToString()));
  }
  if (value.num_bytes() > 0) std::memcpy(out.raw_data(), value.raw_data(), value.num_bytes());
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterReferenceOptimizerKernels(KernelRegistry& registry) {
  TSR_RETURN_IF_ERROR(RegisterForTypes(registry, "SGDUpdate", FloatTypes{},
                                       [](auto tag) -> KernelFn { return SgdKernel<decltype(tag)>; }));
  TSR_RETURN_IF_ERROR(RegisterForTypes(registry, "MomentumUpdate", FloatTypes{},
                                       [](auto tag) -> KernelFn { return MomentumKernel<decltype(tag)>; }));
  TSR_RETURN_IF_ERROR(RegisterForTypes(registry, "AdamUpdate", FloatTypes{},
                                       [](auto tag) -> KernelFn { return AdamKernel<decltype(tag)>; }));
  TSR_RETURN_IF_ERROR(RegisterForTypes(registry, "RMSPropUpdate", FloatTypes{},
                                       [](auto tag) -> KernelFn { return RmsPropKernel<decltype(tag)>; }));
  TSR_RETURN_IF_ERROR(registry.Register("Assign", kReferenceDevice, kAllDTypes, AssignKernel));
  TSR_RETURN_IF_ERROR(RegisterForTypes(registry, "Increment", reference::TypeList<int32_t, int64_t>{},
                                       [](auto tag) -> KernelFn { return IncrementKernel<decltype(tag)>; }));
  return absl::OkStatus();
}

}  // namespace tsr

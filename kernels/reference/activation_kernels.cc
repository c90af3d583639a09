// Reference kernels for activation_ops.cc: Relu, LeakyRelu, Gelu (erf and tanh
// forms), Sigmoid, Tanh, Erf, Softplus and Silu.
//
// Everything computes in double and rounds once to the output type. Sigmoid and
// Softplus use their numerically stable forms, so +-100 (or +-1e300) gives finite
// results without NaN. NaN inputs give NaN.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

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
using reference::kIsFloatLike;
using reference::RegisterForTypes;
using reference::SignedTypes;
using reference::WidenToDouble;

// Applies y = f(x, ctx) per element, computing in double for float-like T.
template <typename T, typename F>
absl::Status MapFloat(KernelContext& ctx, F f) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0);
  if (x.shape() != y.shape()) return ctx.Error("input and output shapes differ");
  const T* px = x.data<T>();
  T* py = y.data<T>();
  for (int64_t i = 0; i < x.num_elements(); ++i) py[i] = FromDouble<T>(f(WidenToDouble(px[i])));
  return absl::OkStatus();
}

// 1 / (1 + e^-x) without overflow: e^-|x| <= 1 always.
double StableSigmoid(double x) {
  if (x >= 0) return 1.0 / (1.0 + std::exp(-x));
  const double e = std::exp(x);
  return e / (1.0 + e);
}

// log(1 + e^x) = max(x, 0) + log1p(e^-|x|).
double StableSoftplus(double x) {
  if (std::isnan(x)) return x;
  return std::max(x, 0.0) + std::log1p(std::exp(-std::fabs(x)));
}

double GeluErf(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }

double GeluTanh(double x) {
  const double k = std::sqrt(2.0 / M_PI);
  return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
}

template <typename T>
KernelFn ReluKernel() {
  return [](KernelContext& ctx) -> absl::Status {
    if constexpr (kIsFloatLike<T>) {
      return MapFloat<T>(ctx, [](double x) { return x < 0 ? 0.0 : x; });  // NaN < 0 is false: NaN stays
    } else {
      const Tensor& x = ctx.input(0);
      const T* px = x.data<T>();
      T* py = ctx.output(0).data<T>();
      for (int64_t i = 0; i < x.num_elements(); ++i) py[i] = px[i] < 0 ? T{0} : px[i];
      return absl::OkStatus();
    }
  };
}

template <typename T>
KernelFn GeluKernel() {
  return [](KernelContext& ctx) {
    const std::string approximate = ctx.GetString("approximate");
    if (approximate == "none") return MapFloat<T>(ctx, GeluErf);
    if (approximate == "tanh") return MapFloat<T>(ctx, GeluTanh);
    return ctx.Error(
        absl::StrCat("attribute 'approximate' is \"", approximate, "\" but \"none\" or \"tanh\" is required"));
  };
}

// Registers a float-only activation computing g(double).
template <typename G>
absl::Status RegisterFloatActivation(KernelRegistry& registry, absl::string_view op, G g) {
  return RegisterForTypes(registry, op, FloatTypes{}, [g](auto t) -> KernelFn {
    using T = decltype(t);
    return [g](KernelContext& ctx) { return MapFloat<T>(ctx, g); };
  });
}

}  // namespace

absl::Status RegisterReferenceActivationKernels(KernelRegistry& registry) {
  TSR_RETURN_IF_ERROR(
      RegisterForTypes(registry, "Relu", SignedTypes{}, [](auto t) { return ReluKernel<decltype(t)>(); }));
  TSR_RETURN_IF_ERROR(RegisterForTypes(registry, "LeakyRelu", FloatTypes{}, [](auto t) -> KernelFn {
    using T = decltype(t);
    return [](KernelContext& ctx) {
      const double alpha = ctx.GetFloat("alpha");
      return MapFloat<T>(ctx, [alpha](double x) { return x >= 0 ? x : alpha * x; });
    };
  }));
  TSR_RETURN_IF_ERROR(
      RegisterForTypes(registry, "Gelu", FloatTypes{}, [](auto t) { return GeluKernel<decltype(t)>(); }));
  TSR_RETURN_IF_ERROR(RegisterFloatActivation(registry, "Sigmoid", StableSigmoid));
  TSR_RETURN_IF_ERROR(RegisterFloatActivation(registry, "Tanh", [](double x) { return std::tanh(x); }));
  TSR_RETURN_IF_ERROR(RegisterFloatActivation(registry, "Erf", [](double x) { return std::erf(x); }));
  TSR_RETURN_IF_ERROR(RegisterFloatActivation(registry, "Softplus", StableSoftplus));
  TSR_RETURN_IF_ERROR(RegisterFloatActivation(registry, "Silu", [](double x) { return x * StableSigmoid(x); }));
  return absl::OkStatus();
}

}  // namespace tsr

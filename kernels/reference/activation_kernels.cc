// Reference kernels for activation_ops.cc: Relu, LeakyRelu, PRelu, Gelu (erf and
// tanh forms), Sigmoid, HardSigmoid, HardSwish, Tanh, Erf, Softplus, Softsign, Elu,
// Selu, Celu, ThresholdedRelu, Shrink and Silu.
//
// Everything computes in double and rounds once to the output type (integer Shrink
// converts like Cast; integer PRelu multiplies with wrap-around). Sigmoid and
// Softplus use their numerically stable forms, so +-100 (or +-1e300) gives finite
// results without NaN; Elu, Selu and Celu use expm1. NaN inputs give NaN.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "kernels/kernel.h"
#include "kernels/reference/broadcast.h"
#include "kernels/reference/convert.h"
#include "kernels/reference/dtype_list.h"
#include "kernels/register_kernels.h"

namespace tsr {

namespace {

using reference::BroadcastIndex;
using reference::FloatTypes;
using reference::FromDouble;
using reference::kIsFloatLike;
using reference::NumericTypes;
using reference::RegisterForTypes;
using reference::SignedTypes;
using reference::TypeList;
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

// y = x if x >= 0 else slope * x, with the slope broadcast to x's shape.
template <typename T>
KernelFn PReluKernel() {
  return [](KernelContext& ctx) {
    const Tensor& x = ctx.input(0);
    const Tensor& slope = ctx.input(1);
    Tensor& y = ctx.output(0);
    if (x.shape() != y.shape()) return ctx.Error("input and output shapes differ");
    absl::StatusOr<BroadcastIndex> index = BroadcastIndex::Create(y.shape(), {x.shape(), slope.shape()});
    if (!index.ok()) return ctx.Error(index.status().message());
    const T* px = x.data<T>();
    const T* ps = slope.data<T>();
    T* py = y.data<T>();
    for (int64_t i = 0; i < index->num_elements(); ++i) {
      const T v = px[i];
      const T a = ps[index->InputOffset(1, i)];
      if constexpr (kIsFloatLike<T>) {
        const double d = WidenToDouble(v);
        py[i] = d < 0 ? FromDouble<T>(WidenToDouble(a) * d) : v;  // NaN < 0 is false: NaN stays
      } else {
        using U = std::make_unsigned_t<T>;
        py[i] = v < 0 ? static_cast<T>(static_cast<U>(a) * static_cast<U>(v)) : v;
      }
    }
    return absl::OkStatus();
  };
}

// alpha * (e^x - 1) for x <= 0, x above (Elu; Selu scales it by gamma).
double ExpLinear(double x, double alpha) { return x > 0 ? x : alpha * std::expm1(x); }

// x + bias below -lambd, x - bias above lambd, 0 between.
double Shrink(double x, double bias, double lambd) {
  if (x < -lambd) return x + bias;
  if (x > lambd) return x - bias;
  return std::isnan(x) ? x : 0.0;
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
  TSR_RETURN_IF_ERROR(RegisterForTypes(registry, "PRelu",
                                       TypeList<float, double, Float16, BFloat16, int32_t, int64_t>{},
                                       [](auto t) { return PReluKernel<decltype(t)>(); }));
  TSR_RETURN_IF_ERROR(RegisterForTypes(registry, "Elu", FloatTypes{}, [](auto t) -> KernelFn {
    using T = decltype(t);
    return [](KernelContext& ctx) {
      const double alpha = ctx.GetFloat("alpha");
      return MapFloat<T>(ctx, [alpha](double x) { return ExpLinear(x, alpha); });
    };
  }));
  TSR_RETURN_IF_ERROR(RegisterForTypes(registry, "Selu", FloatTypes{}, [](auto t) -> KernelFn {
    using T = decltype(t);
    return [](KernelContext& ctx) {
      const double alpha = ctx.GetFloat("alpha"), gamma = ctx.GetFloat("gamma");
      return MapFloat<T>(ctx, [alpha, gamma](double x) { return gamma * ExpLinear(x, alpha); });
    };
  }));
  TSR_RETURN_IF_ERROR(RegisterForTypes(registry, "Celu", FloatTypes{}, [](auto t) -> KernelFn {
    using T = decltype(t);
    return [](KernelContext& ctx) {
      const double alpha = ctx.GetFloat("alpha");
      if (alpha == 0) return ctx.Error("attribute 'alpha' is 0 (Celu divides by it)");
      return MapFloat<T>(ctx, [alpha](double x) { return x > 0 ? x : alpha * std::expm1(x / alpha); });
    };
  }));
  TSR_RETURN_IF_ERROR(RegisterForTypes(registry, "HardSigmoid", FloatTypes{}, [](auto t) -> KernelFn {
    using T = decltype(t);
    return [](KernelContext& ctx) {
      const double alpha = ctx.GetFloat("alpha"), beta = ctx.GetFloat("beta");
      return MapFloat<T>(ctx, [alpha, beta](double x) {
        const double v = alpha * x + beta;
        return std::isnan(v) ? v : std::clamp(v, 0.0, 1.0);
      });
    };
  }));
  TSR_RETURN_IF_ERROR(RegisterFloatActivation(registry, "HardSwish", [](double x) {
    const double v = x / 6.0 + 0.5;
    return std::isnan(v) ? v : x * std::clamp(v, 0.0, 1.0);
  }));
  TSR_RETURN_IF_ERROR(RegisterFloatActivation(registry, "Softsign", [](double x) {
    return std::isinf(x) ? std::copysign(1.0, x) : x / (1.0 + std::fabs(x));  // the limit, not inf / inf
  }));
  TSR_RETURN_IF_ERROR(RegisterForTypes(registry, "ThresholdedRelu", FloatTypes{}, [](auto t) -> KernelFn {
    using T = decltype(t);
    return [](KernelContext& ctx) {
      const double alpha = ctx.GetFloat("alpha");
      return MapFloat<T>(ctx, [alpha](double x) { return x > alpha || std::isnan(x) ? x : 0.0; });
    };
  }));
  TSR_RETURN_IF_ERROR(RegisterForTypes(registry, "Shrink", NumericTypes{}, [](auto t) -> KernelFn {
    using T = decltype(t);
    return [](KernelContext& ctx) -> absl::Status {
      const double bias = ctx.GetFloat("bias"), lambd = ctx.GetFloat("lambd");
      if constexpr (kIsFloatLike<T>) {
        return MapFloat<T>(ctx, [bias, lambd](double x) { return Shrink(x, bias, lambd); });
      } else {
        const Tensor& x = ctx.input(0);
        const T* px = x.data<T>();
        T* py = ctx.output(0).data<T>();
        for (int64_t i = 0; i < x.num_elements(); ++i) {
          py[i] = FromDouble<T>(Shrink(static_cast<double>(px[i]), bias, lambd));
        }
        return absl::OkStatus();
      }
    };
  }));
  return absl::OkStatus();
}

}  // namespace tsr

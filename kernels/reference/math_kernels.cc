// Reference kernels for math_ops.cc: Sin, Cos, Tan, Asin, Acos, Atan, Sinh, Cosh,
// Asinh, Acosh, Atanh, Floor, Ceil, Round, Sign, IsNaN, IsInf and Not.
//
// Floating types compute in double with the C library's functions and round once to
// the output type. Out-of-domain inputs give what the C library gives (NaN, or +-inf
// for Atanh(+-1)); NaN inputs give NaN (false for IsInf). Round breaks ties to even
// whatever the floating-point environment's rounding mode is.
#include <cmath>
#include <cstdint>
#include <type_traits>

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
using reference::NumericTypes;
using reference::RegisterForTypes;
using reference::WidenToDouble;

// y[i] = f(x[i]) with In and Out element types.
template <typename In, typename Out, typename F>
absl::Status Map(KernelContext& ctx, F f) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0);
  if (x.shape() != y.shape()) return ctx.Error("input and output shapes differ");
  const In* px = x.data<In>();
  Out* py = y.data<Out>();
  for (int64_t i = 0; i < x.num_elements(); ++i) py[i] = f(px[i]);
  return absl::OkStatus();
}

// Registers a float-only function computing g(double), rounded to the input's type.
template <typename G>
absl::Status RegisterFloatFunction(KernelRegistry& registry, absl::string_view op, G g) {
  return RegisterForTypes(registry, op, FloatTypes{}, [g](auto t) -> KernelFn {
    using T = decltype(t);
    return [g](KernelContext& ctx) { return Map<T, T>(ctx, [g](T x) { return FromDouble<T>(g(WidenToDouble(x))); }); };
  });
}

// Nearest integer, ties to even (2.5 -> 2, 3.5 -> 4, -2.5 -> -2).
double RoundHalfToEven(double x) {
  if (std::fabs(x - std::trunc(x)) == 0.5) return 2.0 * std::round(x / 2.0);  // x/2 is exact
  return std::round(x);
}

template <typename T>
T SignOf(T x) {
  if constexpr (kIsFloatLike<T>) {
    const double d = WidenToDouble(x);
    if (std::isnan(d)) return x;
    return FromDouble<T>(d > 0 ? 1.0 : (d < 0 ? -1.0 : 0.0));
  } else if constexpr (std::is_signed_v<T>) {
    return static_cast<T>((x > 0) - (x < 0));
  } else {
    return static_cast<T>(x > 0 ? 1 : 0);
  }
}

template <typename T>
KernelFn IsInfKernel() {
  return [](KernelContext& ctx) {
    const bool negative = ctx.GetInt("detect_negative") != 0;
    const bool positive = ctx.GetInt("detect_positive") != 0;
    return Map<T, bool>(ctx, [negative, positive](T x) {
      const double d = WidenToDouble(x);
      return std::isinf(d) && (d > 0 ? positive : negative);
    });
  };
}

}  // namespace

absl::Status RegisterReferenceMathKernels(KernelRegistry& registry) {
  TSR_RETURN_IF_ERROR(RegisterFloatFunction(registry, "Sin", [](double x) { return std::sin(x); }));
  TSR_RETURN_IF_ERROR(RegisterFloatFunction(registry, "Cos", [](double x) { return std::cos(x); }));
  TSR_RETURN_IF_ERROR(RegisterFloatFunction(registry, "Tan", [](double x) { return std::tan(x); }));
  TSR_RETURN_IF_ERROR(RegisterFloatFunction(registry, "Asin", [](double x) { return std::asin(x); }));
  TSR_RETURN_IF_ERROR(RegisterFloatFunction(registry, "Acos", [](double x) { return std::acos(x); }));
  TSR_RETURN_IF_ERROR(RegisterFloatFunction(registry, "Atan", [](double x) { return std::atan(x); }));
  TSR_RETURN_IF_ERROR(RegisterFloatFunction(registry, "Sinh", [](double x) { return std::sinh(x); }));
  TSR_RETURN_IF_ERROR(RegisterFloatFunction(registry, "Cosh", [](double x) { return std::cosh(x); }));
  TSR_RETURN_IF_ERROR(RegisterFloatFunction(registry, "Asinh", [](double x) { return std::asinh(x); }));
  TSR_RETURN_IF_ERROR(RegisterFloatFunction(registry, "Acosh", [](double x) { return std::acosh(x); }));
  TSR_RETURN_IF_ERROR(RegisterFloatFunction(registry, "Atanh", [](double x) { return std::atanh(x); }));
  TSR_RETURN_IF_ERROR(RegisterFloatFunction(registry, "Floor", [](double x) { return std::floor(x); }));
  TSR_RETURN_IF_ERROR(RegisterFloatFunction(registry, "Ceil", [](double x) { return std::ceil(x); }));
  TSR_RETURN_IF_ERROR(RegisterFloatFunction(registry, "Round", RoundHalfToEven));
  TSR_RETURN_IF_ERROR(RegisterForTypes(registry, "Sign", NumericTypes{}, [](auto t) -> KernelFn {
    using T = decltype(t);
    return [](KernelContext& ctx) { return Map<T, T>(ctx, SignOf<T>); };
  }));
  TSR_RETURN_IF_ERROR(RegisterForTypes(registry, "IsNaN", FloatTypes{}, [](auto t) -> KernelFn {
    using T = decltype(t);
    return [](KernelContext& ctx) { return Map<T, bool>(ctx, [](T x) { return std::isnan(WidenToDouble(x)); }); };
  }));
  TSR_RETURN_IF_ERROR(
      RegisterForTypes(registry, "IsInf", FloatTypes{}, [](auto t) { return IsInfKernel<decltype(t)>(); }));
  TSR_RETURN_IF_ERROR(registry.Register("Not", kReferenceDevice, DType::kBool, [](KernelContext& ctx) {
    return Map<bool, bool>(ctx, [](bool x) { return !x; });
  }));
  return absl::OkStatus();
}

}  // namespace tsr

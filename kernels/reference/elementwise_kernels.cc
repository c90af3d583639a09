// Reference kernels for elementwise_ops.cc: Add, Sub, Mul, Div, Pow, Mod, Neg, Abs,
// Exp, Log, Sqrt, Rsqrt, Reciprocal, Max, Min, Equal, Less, Greater, GreaterOrEqual,
// LessOrEqual, And, Or, Xor, BitShift, Where, Cast, Clip.
//
// Floating types compute in double and round once to the output type (for f32/f16/
// bf16 +, -, *, /, sqrt, fmod this equals computing in the type itself). Integer
// arithmetic wraps around (two's complement) instead of overflowing into undefined
// behaviour; integer division truncates toward zero and a zero divisor (Div, Mod) is
// an error. Max and Min propagate NaN. Conversions follow kernels/reference/convert.h.
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "kernels/kernel.h"
#include "kernels/reference/broadcast.h"
#include "kernels/reference/convert.h"
#include "kernels/reference/dtype_list.h"
#include "kernels/register_kernels.h"

namespace tsr {

namespace {

using reference::AllTypes;
using reference::BroadcastIndex;
using reference::ConvertScalar;
using reference::FloatTypes;
using reference::FromDouble;
using reference::kIsFloatLike;
using reference::kIsIntegerDType;
using reference::NumericTypes;
using reference::RegisterForTypes;
using reference::SignedTypes;
using reference::TypeList;
using reference::VisitTypeIn;
using reference::WidenToDouble;

template <typename T>
double AsDouble(T v) {
  if constexpr (kIsFloatLike<T>) {
    return WidenToDouble(v);
  } else {
    return static_cast<double>(v);
  }
}

template <typename T>
bool IsNan(T v) {
  if constexpr (kIsFloatLike<T>) {
    return std::isnan(WidenToDouble(v));
  } else {
    return false;
  }
}

// Wrapping integer arithmetic through the unsigned type of the same width.
template <typename T>
using Unsigned = std::make_unsigned_t<T>;

template <typename T>
T WrapAdd(T a, T b) {
  return static_cast<T>(static_cast<Unsigned<T>>(a) + static_cast<Unsigned<T>>(b));
}
template <typename T>
T WrapSub(T a, T b) {
  return static_cast<T>(static_cast<Unsigned<T>>(a) - static_cast<Unsigned<T>>(b));
}
template <typename T>
T WrapMul(T a, T b) {
  return static_cast<T>(static_cast<Unsigned<T>>(a) * static_cast<Unsigned<T>>(b));
}
template <typename T>
T WrapNeg(T a) {
  return WrapSub(T{0}, a);
}

// out[i] = f(a[..], b[..]) over the broadcast of a and b. `f` returns Out, or
// std::optional<Out> where nullopt fails the kernel with `failure`.
template <typename A, typename B, typename Out, typename F>
absl::Status BinaryMap(KernelContext& ctx, const Tensor& a, const Tensor& b, Tensor& out, F f,
                       absl::string_view failure = "") {
  absl::StatusOr<BroadcastIndex> index = BroadcastIndex::Create(out.shape(), {a.shape(), b.shape()});
  if (!index.ok()) return ctx.Error(index.status().message());
  const A* pa = a.data<A>();
  const B* pb = b.data<B>();
  Out* po = out.data<Out>();
  for (int64_t i = 0; i < index->num_elements(); ++i) {
    auto r = f(pa[index->InputOffset(0, i)], pb[index->InputOffset(1, i)]);
    if constexpr (std::is_same_v<decltype(r), std::optional<Out>>) {
      if (!r.has_value()) return ctx.Error(absl::StrCat(failure, " (output element ", i, ")"));
      po[i] = *r;
    } else {
      po[i] = r;
    }
  }
  return absl::OkStatus();
}

// A kernel applying f(T, T) -> Out to inputs 0 and 1.
template <typename T, typename Out, typename F>
KernelFn BinaryKernel(F f, absl::string_view failure = "") {
  return [f, failure](KernelContext& ctx) {
    return BinaryMap<T, T, Out>(ctx, ctx.input(0), ctx.input(1), ctx.output(0), f, failure);
  };
}

// A kernel applying f(T) -> T to input 0.
template <typename T, typename F>
KernelFn UnaryKernel(F f) {
  return [f](KernelContext& ctx) {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0);
    if (x.shape() != y.shape()) return ctx.Error("input and output shapes differ");
    const T* px = x.data<T>();
    T* py = y.data<T>();
    for (int64_t i = 0; i < x.num_elements(); ++i) py[i] = f(px[i]);
    return absl::OkStatus();
  };
}

// A float-only unary kernel computing g(double) and rounding to T.
template <typename T, typename G>
KernelFn FloatUnaryKernel(G g) {
  return UnaryKernel<T>([g](T x) { return FromDouble<T>(g(WidenToDouble(x))); });
}

template <typename T>
T AddValues(T a, T b) {
  if constexpr (kIsFloatLike<T>) {
    return FromDouble<T>(WidenToDouble(a) + WidenToDouble(b));
  } else {
    return WrapAdd(a, b);
  }
}
template <typename T>
T SubValues(T a, T b) {
  if constexpr (kIsFloatLike<T>) {
    return FromDouble<T>(WidenToDouble(a) - WidenToDouble(b));
  } else {
    return WrapSub(a, b);
  }
}
template <typename T>
T MulValues(T a, T b) {
  if constexpr (kIsFloatLike<T>) {
    return FromDouble<T>(WidenToDouble(a) * WidenToDouble(b));
  } else {
    return WrapMul(a, b);
  }
}
template <typename T>
std::optional<T> DivValues(T a, T b) {
  if constexpr (kIsFloatLike<T>) {
    return FromDouble<T>(WidenToDouble(a) / WidenToDouble(b));  // IEEE: x/0 is inf or NaN
  } else {
    if (b == 0) return std::nullopt;
    // min / -1 overflows; wrap-around gives min.
    if constexpr (std::is_signed_v<T>) {
      if (b == -1) return WrapNeg(a);
    }
    return static_cast<T>(a / b);  // C++ truncates toward zero
  }
}

// Integer remainder: with `fmod` the sign of the dividend (C's %), otherwise the sign
// of the divisor (Python's %). A zero divisor is an error (nullopt); min % -1 is 0.
template <typename T>
std::optional<T> IntegerMod(T a, T b, bool fmod) {
  if (b == 0) return std::nullopt;
  if constexpr (std::is_signed_v<T>) {
    if (b == -1) return T{0};
  }
  T r = static_cast<T>(a % b);
  if constexpr (std::is_signed_v<T>) {
    if (!fmod && r != 0 && ((r < 0) != (b < 0))) r = static_cast<T>(r + b);  // |r| < |b|: no overflow
  }
  return r;
}

template <typename T>
KernelFn ModKernel() {
  return [](KernelContext& ctx) -> absl::Status {
    const bool fmod = ctx.GetInt("fmod") != 0;
    if constexpr (kIsFloatLike<T>) {
      if (!fmod) return ctx.Error("floating-point Mod requires attribute 'fmod' = 1");
      return BinaryMap<T, T, T>(ctx, ctx.input(0), ctx.input(1), ctx.output(0), [](T a, T b) {
        return FromDouble<T>(std::fmod(WidenToDouble(a), WidenToDouble(b)));  // exact; x mod 0 is NaN
      });
    } else {
      return BinaryMap<T, T, T>(
          ctx, ctx.input(0), ctx.input(1), ctx.output(0), [fmod](T a, T b) { return IntegerMod(a, b, fmod); },
          "integer Mod by zero");
    }
  };
}

// Shifts by the bit width or more give 0 (C++ leaves them undefined).
template <typename T>
KernelFn BitShiftKernel() {
  return [](KernelContext& ctx) -> absl::Status {
    const std::string direction = ctx.GetString("direction");
    if (direction != "LEFT" && direction != "RIGHT") {
      return ctx.Error(
          absl::StrCat("attribute 'direction' is \"", direction, "\" but \"LEFT\" or \"RIGHT\" is required"));
    }
    const bool left = direction == "LEFT";
    constexpr T kWidth = static_cast<T>(8 * sizeof(T));
    return BinaryKernel<T, T>([left](T x, T y) -> T {
      if (y >= kWidth) return T{0};
      return static_cast<T>(left ? x << y : x >> y);
    })(ctx);
  };
}

// Integer power with wrap-around. A negative exponent gives 1/x^-y truncated: 0
// unless |x| = 1; x = 0 with a negative exponent is a division by zero (nullopt).
template <typename T>
std::optional<T> IntegerPow(T x, int64_t y) {
  if (y < 0) {
    if (x == 0) return std::nullopt;
    if (x == 1) return T{1};
    if constexpr (std::is_signed_v<T>) {
      if (x == -1) return (y % 2 == 0) ? T{1} : T{-1};
    }
    return T{0};
  }
  T result{1};
  T base = x;
  uint64_t e = static_cast<uint64_t>(y);
  while (e != 0) {
    if (e & 1u) result = WrapMul(result, base);
    base = WrapMul(base, base);
    e >>= 1;
  }
  return result;
}

template <typename T, typename E>
std::optional<T> PowValues(T x, E y) {
  if constexpr (kIsFloatLike<T>) {
    return FromDouble<T>(std::pow(WidenToDouble(x), AsDouble(y)));
  } else if constexpr (kIsIntegerDType<E>) {
    return IntegerPow(x, static_cast<int64_t>(y));
  } else {
    // Integer base, float exponent: the real power, converted like Cast.
    return FromDouble<T>(std::pow(static_cast<double>(x), WidenToDouble(y)));
  }
}

template <typename T>
KernelFn PowKernel() {
  return [](KernelContext& ctx) {
    absl::Status status = ctx.Error(absl::StrCat("exponent dtype ", DTypeName(ctx.input(1).dtype()), " unsupported"));
    VisitTypeIn(NumericTypes{}, ctx.input(1).dtype(), [&](auto e) {
      using E = decltype(e);
      status = BinaryMap<T, E, T>(ctx, ctx.input(0), ctx.input(1), ctx.output(0), PowValues<T, E>,
                                  "integer 0 raised to a negative power");
    });
    return status;
  };
}

template <typename T>
T AbsValue(T x) {
  if constexpr (kIsFloatLike<T>) {
    return FromDouble<T>(std::fabs(WidenToDouble(x)));
  } else if constexpr (std::is_signed_v<T>) {
    return x < 0 ? WrapNeg(x) : x;  // |min| wraps to min
  } else {
    return x;
  }
}

template <typename T>
T NegValue(T x) {
  if constexpr (kIsFloatLike<T>) {
    return FromDouble<T>(-WidenToDouble(x));
  } else {
    return WrapNeg(x);
  }
}

// Max/Min of two values; NaN wins.
template <typename T, bool kMax>
T Extremum(T a, T b) {
  if (IsNan(a)) return a;
  if (IsNan(b)) return b;
  if constexpr (kIsFloatLike<T>) {
    const double x = WidenToDouble(a), y = WidenToDouble(b);
    return (kMax ? y > x : y < x) ? b : a;
  } else {
    return (kMax ? b > a : b < a) ? b : a;
  }
}

template <typename T, bool kMax>
KernelFn VariadicExtremumKernel() {
  return [](KernelContext& ctx) {
    std::vector<Shape> shapes;
    for (int k = 0; k < ctx.num_inputs(); ++k) shapes.push_back(ctx.input(k).shape());
    Tensor& out = ctx.output(0);
    absl::StatusOr<BroadcastIndex> index = BroadcastIndex::Create(out.shape(), shapes);
    if (!index.ok()) return ctx.Error(index.status().message());
    T* po = out.data<T>();
    for (int64_t i = 0; i < index->num_elements(); ++i) {
      T acc = ctx.input(0).data<T>()[index->InputOffset(0, i)];
      for (int k = 1; k < ctx.num_inputs(); ++k) {
        acc = Extremum<T, kMax>(acc, ctx.input(k).data<T>()[index->InputOffset(k, i)]);
      }
      po[i] = acc;
    }
    return absl::OkStatus();
  };
}

// Comparisons: float-like values compare as doubles (NaN compares false), others natively.
template <typename T>
bool EqualValues(T a, T b) {
  if constexpr (kIsFloatLike<T>) {
    return WidenToDouble(a) == WidenToDouble(b);
  } else {
    return a == b;
  }
}
template <typename T>
bool LessValues(T a, T b) {
  if constexpr (kIsFloatLike<T>) {
    return WidenToDouble(a) < WidenToDouble(b);
  } else {
    return a < b;
  }
}
template <typename T>
bool GreaterValues(T a, T b) {
  return LessValues(b, a);
}
template <typename T>
bool GreaterOrEqualValues(T a, T b) {
  if constexpr (kIsFloatLike<T>) {
    return WidenToDouble(a) >= WidenToDouble(b);
  } else {
    return a >= b;
  }
}
template <typename T>
bool LessOrEqualValues(T a, T b) {
  return GreaterOrEqualValues(b, a);
}

// Where is keyed by its condition (bool); X's dtype selects the instantiation.
absl::Status WhereKernel(KernelContext& ctx) {
  const Tensor& cond = ctx.input(0);
  const Tensor& x = ctx.input(1);
  const Tensor& y = ctx.input(2);
  Tensor& out = ctx.output(0);
  if (x.dtype() != y.dtype() || out.dtype() != x.dtype()) return ctx.Error("X, Y and the output must share a dtype");
  absl::StatusOr<BroadcastIndex> index = BroadcastIndex::Create(out.shape(), {cond.shape(), x.shape(), y.shape()});
  if (!index.ok()) return ctx.Error(index.status().message());
  VisitTypeIn(AllTypes{}, x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const bool* pc = cond.data<bool>();
    const T* px = x.data<T>();
    const T* py = y.data<T>();
    T* po = out.data<T>();
    for (int64_t i = 0; i < index->num_elements(); ++i) {
      po[i] = pc[index->InputOffset(0, i)] ? px[index->InputOffset(1, i)] : py[index->InputOffset(2, i)];
    }
  });
  return absl::OkStatus();
}

template <typename From>
KernelFn CastKernel() {
  return [](KernelContext& ctx) {
    const Tensor& in = ctx.input(0);
    Tensor& out = ctx.output(0);
    if (in.shape() != out.shape()) return ctx.Error("input and output shapes differ");
    const From* pi = in.data<From>();
    const bool known = VisitTypeIn(AllTypes{}, out.dtype(), [&](auto tag) {
      using To = decltype(tag);
      To* po = out.data<To>();
      for (int64_t i = 0; i < in.num_elements(); ++i) po[i] = ConvertScalar<To>(pi[i]);
    });
    if (!known) return ctx.Error(absl::StrCat("cannot cast to dtype ", DTypeName(out.dtype())));
    return absl::OkStatus();
  };
}

// Clip: raise to min, then lower to max (so min > max gives max everywhere, as in
// ONNX); NaN inputs stay NaN.
template <typename T>
KernelFn ClipKernel() {
  return [](KernelContext& ctx) {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0);
    std::optional<T> lo;
    std::optional<T> hi;
    for (int k : {1, 2}) {
      if (!ctx.has_input(k)) continue;
      if (ctx.input(k).num_elements() != 1) {
        return ctx.Error(absl::StrCat("input ", k, " (", k == 1 ? "min" : "max", ") must hold one value"));
      }
      (k == 1 ? lo : hi) = ctx.input(k).data<T>()[0];
    }
    const T* px = x.data<T>();
    T* py = y.data<T>();
    for (int64_t i = 0; i < x.num_elements(); ++i) {
      T v = px[i];
      if (lo.has_value() && LessValues(v, *lo)) v = *lo;
      if (hi.has_value() && LessValues(*hi, v)) v = *hi;
      py[i] = v;
    }
    return absl::OkStatus();
  };
}

}  // namespace

absl::Status RegisterReferenceElementwiseKernels(KernelRegistry& registry) {
  TSR_RETURN_IF_ERROR(RegisterForTypes(registry, "Add", NumericTypes{}, [](auto t) {
    using T = decltype(t);
    return BinaryKernel<T, T>(AddValues<T>);
  }));
  TSR_RETURN_IF_ERROR(RegisterForTypes(registry, "Sub", NumericTypes{}, [](auto t) {
    using T = decltype(t);
    return BinaryKernel<T, T>(SubValues<T>);
  }));
  TSR_RETURN_IF_ERROR(RegisterForTypes(registry, "Mul", NumericTypes{}, [](auto t) {
    using T = decltype(t);
    return BinaryKernel<T, T>(MulValues<T>);
  }));
  TSR_RETURN_IF_ERROR(RegisterForTypes(registry, "Div", NumericTypes{}, [](auto t) {
    using T = decltype(t);
    return BinaryKernel<T, T>(DivValues<T>, "integer division by zero");
  }));
  TSR_RETURN_IF_ERROR(
      RegisterForTypes(registry, "Mod", NumericTypes{}, [](auto t) { return ModKernel<decltype(t)>(); }));
  TSR_RETURN_IF_ERROR(RegisterForTypes(registry, "BitShift", TypeList<uint8_t>{},
                                       [](auto t) { return BitShiftKernel<decltype(t)>(); }));
  TSR_RETURN_IF_ERROR(RegisterForTypes(registry, "Pow", TypeList<float, double, Float16, BFloat16, int32_t, int64_t>{},
                                       [](auto t) { return PowKernel<decltype(t)>(); }));

  TSR_RETURN_IF_ERROR(RegisterForTypes(registry, "Neg", SignedTypes{}, [](auto t) {
    using T = decltype(t);
    return UnaryKernel<T>(NegValue<T>);
  }));
  TSR_RETURN_IF_ERROR(RegisterForTypes(registry, "Abs", NumericTypes{}, [](auto t) {
    using T = decltype(t);
    return UnaryKernel<T>(AbsValue<T>);
  }));
  TSR_RETURN_IF_ERROR(RegisterForTypes(registry, "Exp", FloatTypes{}, [](auto t) {
    return FloatUnaryKernel<decltype(t)>([](double x) { return std::exp(x); });
  }));
  TSR_RETURN_IF_ERROR(RegisterForTypes(registry, "Log", FloatTypes{}, [](auto t) {
    return FloatUnaryKernel<decltype(t)>([](double x) { return std::log(x); });
  }));
  TSR_RETURN_IF_ERROR(RegisterForTypes(registry, "Sqrt", FloatTypes{}, [](auto t) {
    return FloatUnaryKernel<decltype(t)>([](double x) { return std::sqrt(x); });
  }));
  TSR_RETURN_IF_ERROR(RegisterForTypes(registry, "Rsqrt", FloatTypes{}, [](auto t) {
    return FloatUnaryKernel<decltype(t)>([](double x) { return 1.0 / std::sqrt(x); });
  }));
  TSR_RETURN_IF_ERROR(RegisterForTypes(registry, "Reciprocal", FloatTypes{}, [](auto t) {
    return FloatUnaryKernel<decltype(t)>([](double x) { return 1.0 / x; });
  }));

  TSR_RETURN_IF_ERROR(RegisterForTypes(registry, "Max", NumericTypes{},
                                       [](auto t) { return VariadicExtremumKernel<decltype(t), true>(); }));
  TSR_RETURN_IF_ERROR(RegisterForTypes(registry, "Min", NumericTypes{},
                                       [](auto t) { return VariadicExtremumKernel<decltype(t), false>(); }));

  TSR_RETURN_IF_ERROR(RegisterForTypes(registry, "Equal", AllTypes{}, [](auto t) {
    using T = decltype(t);
    return BinaryKernel<T, bool>(EqualValues<T>);
  }));
  TSR_RETURN_IF_ERROR(RegisterForTypes(registry, "Less", NumericTypes{}, [](auto t) {
    using T = decltype(t);
    return BinaryKernel<T, bool>(LessValues<T>);
  }));
  TSR_RETURN_IF_ERROR(RegisterForTypes(registry, "Greater", NumericTypes{}, [](auto t) {
    using T = decltype(t);
    return BinaryKernel<T, bool>(GreaterValues<T>);
  }));
  TSR_RETURN_IF_ERROR(RegisterForTypes(registry, "GreaterOrEqual", NumericTypes{}, [](auto t) {
    using T = decltype(t);
    return BinaryKernel<T, bool>(GreaterOrEqualValues<T>);
  }));
  TSR_RETURN_IF_ERROR(RegisterForTypes(registry, "LessOrEqual", NumericTypes{}, [](auto t) {
    using T = decltype(t);
    return BinaryKernel<T, bool>(LessOrEqualValues<T>);
  }));
  TSR_RETURN_IF_ERROR(registry.Register("And", kReferenceDevice, DType::kBool,
                                        BinaryKernel<bool, bool>([](bool a, bool b) { return a && b; })));
  TSR_RETURN_IF_ERROR(registry.Register("Or", kReferenceDevice, DType::kBool,
                                        BinaryKernel<bool, bool>([](bool a, bool b) { return a || b; })));
  TSR_RETURN_IF_ERROR(registry.Register("Xor", kReferenceDevice, DType::kBool,
                                        BinaryKernel<bool, bool>([](bool a, bool b) { return a != b; })));

  TSR_RETURN_IF_ERROR(registry.Register("Where", kReferenceDevice, DType::kBool, WhereKernel));
  TSR_RETURN_IF_ERROR(RegisterForTypes(registry, "Cast", AllTypes{}, [](auto t) { return CastKernel<decltype(t)>(); }));
  TSR_RETURN_IF_ERROR(
      RegisterForTypes(registry, "Clip", NumericTypes{}, [](auto t) { return ClipKernel<decltype(t)>(); }));
  return absl::OkStatus();
}

}  // namespace tsr

// How one element converts between dtypes in the reference kernels: Cast's
// semantics, and the rounding every reference kernel uses to store a result it
// computed in double (or int64) into its output dtype.
//
// - float -> float: round to nearest even, correctly rounded even for f64 -> f16/bf16
//   (double rounding through f32 is avoided by rounding to odd first).
// - float -> int: truncation toward zero; NaN -> 0; out-of-range values (and +-inf)
//   saturate to the integer's min/max. ONNX leaves these cases undefined.
// - int -> int: two's complement wrap-around (C++20 narrowing).
// - int -> float: correctly rounded.
// - anything -> bool: nonzero (NaN is nonzero, so true); bool -> anything: 0 or 1.
#ifndef TESSERA_KERNELS_REFERENCE_CONVERT_H_
#define TESSERA_KERNELS_REFERENCE_CONVERT_H_

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "graph/float16.h"

namespace tsr::reference {

// True for float, double, Float16 and BFloat16.
template <typename T>
inline constexpr bool kIsFloatLike =
    std::is_floating_point_v<T> || std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>;

// True for the integer dtypes (not bool).
template <typename T>
inline constexpr bool kIsIntegerDType = std::is_integral_v<T> && !std::is_same_v<T, bool>;

// A float-like value widened exactly to double.
template <typename T>
double WidenToDouble(T v) {
  if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
    return static_cast<double>(v.ToFloat());
  } else {
    return static_cast<double>(v);
  }
}

namespace internal {

// `d` rounded to float with round-to-odd: exact values stay; inexact ones take the
// neighbour (toward d) whose last mantissa bit is 1. Rounding that to a narrower
// format with round-to-nearest-even then equals rounding `d` directly.
inline float RoundToOddFloat(double d) {
  if (std::isnan(d) || std::isinf(d)) return static_cast<float>(d);
  float f = static_cast<float>(d);
  if (static_cast<double>(f) == d) return f;
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if ((bits & 1u) == 0) f = std::nextafter(f, static_cast<float>(d > f ? HUGE_VALF : -HUGE_VALF));
  return f;
}

// `v` rounded to double with round-to-odd (see RoundToOddFloat).
inline double RoundToOddDouble(int64_t v) {
  double d = static_cast<double>(v);
  // Exactness is decided in long double-free integer arithmetic: |d| <= 2^63.
  if (d >= 9223372036854775808.0) return std::nextafter(d, 0.0);  // v < 2^63 <= d: inexact
  const int64_t back = static_cast<int64_t>(d);
  if (back == v) return d;
  uint64_t bits;
  std::memcpy(&bits, &d, 8);
  if ((bits & 1u) == 0) d = std::nextafter(d, v > back ? HUGE_VAL : -HUGE_VAL);
  return d;
}

// Converts a double to To (see the file comment).
template <typename To>
To FromDouble(double d) {
  if constexpr (std::is_same_v<To, bool>) {
    return d != 0.0;
  } else if constexpr (std::is_same_v<To, double>) {
    return d;
  } else if constexpr (std::is_same_v<To, float>) {
    return static_cast<float>(d);
  } else if constexpr (std::is_same_v<To, Float16> || std::is_same_v<To, BFloat16>) {
    return To::FromFloat(RoundToOddFloat(d));
  } else {
    if (std::isnan(d)) return To{0};
    const double t = std::trunc(d);
    // max + 1 is a power of two, exact in double (for int64, (double)max is already 2^63).
    const double upper = static_cast<double>(std::numeric_limits<To>::max()) + (sizeof(To) < 8 ? 1.0 : 0.0);
    const double lower = static_cast<double>(std::numeric_limits<To>::min());
    if (t >= upper) return std::numeric_limits<To>::max();
    if (t < lower) return std::numeric_limits<To>::min();
    return static_cast<To>(t);
  }
}

}  // namespace internal

// Converts one element from From to To (see the file comment).
template <typename To, typename From>
To ConvertScalar(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (std::is_same_v<From, bool>) {
    return ConvertScalar<To>(static_cast<int32_t>(v ? 1 : 0));
  } else if constexpr (kIsFloatLike<From>) {
    if constexpr (std::is_same_v<To, bool>) {
      return WidenToDouble(v) != 0.0;
    } else if constexpr (std::is_same_v<To, Float16> || std::is_same_v<To, BFloat16>) {
      if constexpr (std::is_same_v<From, double>) {
        return internal::FromDouble<To>(v);
      } else {
        return To::FromFloat(static_cast<float>(WidenToDouble(v)));  // exact widening, one rounding
      }
    } else {
      return internal::FromDouble<To>(WidenToDouble(v));
    }
  } else {  // From is an integer
    if constexpr (std::is_same_v<To, bool>) {
      return v != 0;
    } else if constexpr (std::is_floating_point_v<To>) {
      return static_cast<To>(v);  // correctly rounded by the hardware conversion
    } else if constexpr (std::is_same_v<To, Float16> || std::is_same_v<To, BFloat16>) {
      return internal::FromDouble<To>(internal::RoundToOddDouble(static_cast<int64_t>(v)));
    } else {
      return static_cast<To>(v);  // modular (C++20)
    }
  }
}

// A result computed in double, stored as T (float-like T: rounded; others: Cast rules).
template <typename T>
T FromDouble(double d) {
  return internal::FromDouble<T>(d);
}

}  // namespace tsr::reference

#endif  // TESSERA_KERNELS_REFERENCE_CONVERT_H_

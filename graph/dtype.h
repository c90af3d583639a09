// Element types of tensors (`DType`) and their C++ storage types.
#ifndef TESSERA_GRAPH_DTYPE_H_
#define TESSERA_GRAPH_DTYPE_H_

#include <cstddef>
#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "graph/float16.h"

namespace tsr {

// The numbering is part of the GraphDef format: never renumber, only append.
enum class DType : uint8_t {
  kInvalid = 0,
  kF32 = 1,
  kF64 = 2,
  kF16 = 3,
  kBF16 = 4,
  kI8 = 5,
  kU8 = 6,
  kI32 = 7,
  kI64 = 8,
  kBool = 9,
};

inline constexpr DType kAllDTypes[] = {DType::kF32, DType::kF64, DType::kF16, DType::kBF16, DType::kI8,
                                       DType::kU8,  DType::kI32, DType::kI64, DType::kBool};
inline constexpr DType kFloatDTypes[] = {DType::kF32, DType::kF64, DType::kF16, DType::kBF16};
inline constexpr DType kIntDTypes[] = {DType::kI8, DType::kU8, DType::kI32, DType::kI64};
inline constexpr DType kIndexDTypes[] = {DType::kI32, DType::kI64};
// Float and integer types (everything but bool).
inline constexpr DType kNumericDTypes[] = {DType::kF32, DType::kF64, DType::kF16, DType::kBF16,
                                           DType::kI8,  DType::kU8,  DType::kI32, DType::kI64};
// Numeric types whose values can be negative.
inline constexpr DType kSignedDTypes[] = {DType::kF32, DType::kF64, DType::kF16, DType::kBF16,
                                          DType::kI8,  DType::kI32, DType::kI64};

// Short lowercase name: "f32", "bf16", "i64", "bool".
absl::string_view DTypeName(DType dtype);
// Parses the short name (and a few aliases: "float32", "float", "int64", ...).
absl::StatusOr<DType> ParseDType(absl::string_view name);
// Bytes per element; 0 for kInvalid.
size_t DTypeSize(DType dtype);
bool IsValidDType(DType dtype);
bool IsFloating(DType dtype);
bool IsInteger(DType dtype);
bool IsSignedInteger(DType dtype);
bool Contains(absl::Span<const DType> set, DType dtype);

// DTypeOf<T>::value maps a storage type to its DType.
template <typename T>
struct DTypeOf;
template <>
struct DTypeOf<float> {
  static constexpr DType value = DType::kF32;
};
template <>
struct DTypeOf<double> {
  static constexpr DType value = DType::kF64;
};
template <>
struct DTypeOf<Float16> {
  static constexpr DType value = DType::kF16;
};
template <>
struct DTypeOf<BFloat16> {
  static constexpr DType value = DType::kBF16;
};
template <>
struct DTypeOf<int8_t> {
  static constexpr DType value = DType::kI8;
};
template <>
struct DTypeOf<uint8_t> {
  static constexpr DType value = DType::kU8;
};
template <>
struct DTypeOf<int32_t> {
  static constexpr DType value = DType::kI32;
};
template <>
struct DTypeOf<int64_t> {
  static constexpr DType value = DType::kI64;
};
template <>
struct DTypeOf<bool> {
  static constexpr DType value = DType::kBool;
};

// Calls fn(T{}) with the storage type of `dtype`; returns fn's result.
// `dtype` must be valid.
template <typename Fn>
decltype(auto) VisitDType(DType dtype, Fn&& fn) {
  switch (dtype) {
    case DType::kF64:
      return fn(double{});
    case DType::kF16:
      return fn(Float16{});
    case DType::kBF16:
      return fn(BFloat16{});
    case DType::kI8:
      return fn(int8_t{});
    case DType::kU8:
      return fn(uint8_t{});
    case DType::kI32:
      return fn(int32_t{});
    case DType::kI64:
      return fn(int64_t{});
    case DType::kBool:
      return fn(bool{});
    case DType::kF32:
    case DType::kInvalid:
    default:
      return fn(float{});
  }
}

}  // namespace tsr

#endif  // TESSERA_GRAPH_DTYPE_H_

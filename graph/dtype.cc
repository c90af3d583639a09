// DType names and properties.
#include "graph/dtype.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace tsr {

absl::string_view DTypeName(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return "f32";
    case DType::kF64:
      return "f64";
    case DType::kF16:
      return "f16";
    case DType::kBF16:
      return "bf16";
    case DType::kI8:
      return "i8";
    case DType::kU8:
      return "u8";
    case DType::kI32:
      return "i32";
    case DType::kI64:
      return "i64";
    case DType::kBool:
      return "bool";
    case DType::kInvalid:
      break;
  }
  return "invalid";
}

absl::StatusOr<DType> ParseDType(absl::string_view name) {
  struct Alias {
    absl::string_view name;
    DType dtype;
  };
  static constexpr Alias kAliases[] = {
      {"f32", DType::kF32},     {"float32", DType::kF32}, {"float", DType::kF32},     {"f64", DType::kF64},
      {"float64", DType::kF64}, {"double", DType::kF64},  {"f16", DType::kF16},       {"float16", DType::kF16},
      {"half", DType::kF16},    {"bf16", DType::kBF16},   {"bfloat16", DType::kBF16}, {"i8", DType::kI8},
      {"int8", DType::kI8},     {"u8", DType::kU8},       {"uint8", DType::kU8},      {"i32", DType::kI32},
      {"int32", DType::kI32},   {"i64", DType::kI64},     {"int64", DType::kI64},     {"bool", DType::kBool},
  };
  for (const Alias& a : kAliases) {
    if (a.name == name) return a.dtype;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown dtype '", name, "'; expected one of f32, f64, f16, bf16, i8, u8, i32, i64, bool"));
}

size_t DTypeSize(DType dtype) {
  switch (dtype) {
    case DType::kF64:
    case DType::kI64:
      return 8;
    case DType::kF32:
    case DType::kI32:
      return 4;
    case DType::kF16:
    case DType::kBF16:
      return 2;
    case DType::kI8:
    case DType::kU8:
    case DType::kBool:
      return 1;
    case DType::kInvalid:
      break;
  }
  return 0;
}

bool IsValidDType(DType dtype) { return Contains(kAllDTypes, dtype); }
bool IsFloating(DType dtype) { return Contains(kFloatDTypes, dtype); }
bool IsInteger(DType dtype) { return Contains(kIntDTypes, dtype); }
bool IsSignedInteger(DType dtype) { return dtype == DType::kI8 || dtype == DType::kI32 || dtype == DType::kI64; }
bool Contains(absl::Span<const DType> set, DType dtype) {
  return std::find(set.begin(), set.end(), dtype) != set.end();
}

}  // namespace tsr

// AttrValue printing and comparison.
#include "graph/attribute.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace tsr {

absl::string_view AttrTypeName(AttrType type) {
  switch (type) {
    case AttrType::kInt:
      return "int";
    case AttrType::kFloat:
      return "float";
    case AttrType::kString:
      return "string";
    case AttrType::kBool:
      return "bool";
    case AttrType::kInts:
      return "ints";
    case AttrType::kFloats:
      return "floats";
    case AttrType::kStrings:
      return "strings";
    case AttrType::kTensor:
      return "tensor";
    case AttrType::kType:
      return "type";
    case AttrType::kShape:
      return "shape";
  }
  return "invalid";
}

std::string AttrValue::ToString() const {
  switch (type()) {
    case AttrType::kInt:
      return absl::StrCat(i());
    case AttrType::kFloat:
      return absl::StrCat(f());
    case AttrType::kString:
      return absl::StrCat("\"", s(), "\"");
    case AttrType::kBool:
      return b() ? "true" : "false";
    case AttrType::kInts:
      return absl::StrCat("[", absl::StrJoin(ints(), ","), "]");
    case AttrType::kFloats:
      return absl::StrCat("[", absl::StrJoin(floats(), ","), "]");
    case AttrType::kStrings:
      return absl::StrCat("[\"", absl::StrJoin(strings(), "\",\""), "\"]");
    case AttrType::kTensor:
      return tensor().DebugString(4);
    case AttrType::kType:
      return std::string(DTypeName(dtype()));
    case AttrType::kShape:
      return shape().ToString();
  }
  return "?";
}

bool operator==(const AttrValue& a, const AttrValue& b) {
  if (a.type() != b.type()) return false;
  return std::visit(
      [&](const auto& va) {
        using T = std::decay_t<decltype(va)>;
        const T& vb = std::get<T>(b.value_);
        if constexpr (std::is_same_v<T, Tensor>) {
          return va.BitwiseEquals(vb);
        } else {
          return va == vb;
        }
      },
      a.value_);
}

}  // namespace tsr

// AttrReader: attributes with defaults applied.
#include "graph/attr_reader.h"

#include "graph/op_def.h"

namespace tsr {

AttrReader::AttrReader(const OpDef& def, const AttrMap& attrs) : attrs_(attrs) {
  for (const AttrDef& a : def.attrs) {
    if (a.default_value.has_value() && attrs_.find(a.name) == attrs_.end()) attrs_[a.name] = *a.default_value;
  }
}

const AttrValue* AttrReader::attr(absl::string_view name) const {
  auto it = attrs_.find(name);
  return it == attrs_.end() ? nullptr : &it->second;
}

int64_t AttrReader::GetInt(absl::string_view name) const {
  const AttrValue* a = attr(name);
  return a != nullptr && a->type() == AttrType::kInt ? a->i() : 0;
}
double AttrReader::GetFloat(absl::string_view name) const {
  const AttrValue* a = attr(name);
  return a != nullptr && a->type() == AttrType::kFloat ? a->f() : 0.0;
}
std::string AttrReader::GetString(absl::string_view name) const {
  const AttrValue* a = attr(name);
  return a != nullptr && a->type() == AttrType::kString ? a->s() : std::string();
}
bool AttrReader::GetBool(absl::string_view name) const {
  const AttrValue* a = attr(name);
  return a != nullptr && a->type() == AttrType::kBool ? a->b() : false;
}
std::vector<int64_t> AttrReader::GetInts(absl::string_view name) const {
  const AttrValue* a = attr(name);
  return a != nullptr && a->type() == AttrType::kInts ? a->ints() : std::vector<int64_t>();
}
std::vector<double> AttrReader::GetFloats(absl::string_view name) const {
  const AttrValue* a = attr(name);
  return a != nullptr && a->type() == AttrType::kFloats ? a->floats() : std::vector<double>();
}
std::vector<std::string> AttrReader::GetStrings(absl::string_view name) const {
  const AttrValue* a = attr(name);
  return a != nullptr && a->type() == AttrType::kStrings ? a->strings() : std::vector<std::string>();
}
const Tensor* AttrReader::GetTensor(absl::string_view name) const {
  const AttrValue* a = attr(name);
  return a != nullptr && a->type() == AttrType::kTensor ? &a->tensor() : nullptr;
}
DType AttrReader::GetType(absl::string_view name) const {
  const AttrValue* a = attr(name);
  return a != nullptr && a->type() == AttrType::kType ? a->dtype() : DType::kInvalid;
}
Shape AttrReader::GetShape(absl::string_view name) const {
  const AttrValue* a = attr(name);
  return a != nullptr && a->type() == AttrType::kShape ? a->shape() : Shape();
}

}  // namespace tsr

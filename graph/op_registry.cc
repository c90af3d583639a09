// OpRegistry: registration, lookup and the global registry of built-in ops.
#include "graph/op_registry.h"

#include <algorithm>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "graph/autodiff/gradients.h"
#include "graph/ops/register_ops.h"

namespace tsr {

OpRegistry& OpRegistry::Global() {
  static OpRegistry* registry = [] {
    auto* r = new OpRegistry();
    absl::Status s = RegisterBuiltinOps(*r);
    if (s.ok()) s = RegisterBuiltinGradients(*r);
    if (!s.ok()) {
      // A malformed built-in op is a programming error caught by every test run.
      fprintf(stderr, "tessera: built-in op registration failed: %s\n", std::string(s.message()).c_str());
      abort();
    }
    return r;
  }();
  return *registry;
}

absl::Status OpRegistry::Register(OpDef def) {
  if (def.name.empty()) return absl::InvalidArgumentError("op definition has no name");
  if (ops_.contains(def.name))
    return absl::AlreadyExistsError(absl::StrCat("op '", def.name, "' is already registered"));
  std::set<std::string> names;
  for (size_t i = 0; i < def.inputs.size(); ++i) {
    if (def.inputs[i].kind == ArgDef::Kind::kVariadic && i + 1 != def.inputs.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("op '", def.name, "': variadic input '", def.inputs[i].name, "' must be the last input"));
    }
  }
  for (const AttrDef& a : def.attrs) {
    if (!names.insert(a.name).second) {
      return absl::InvalidArgumentError(absl::StrCat("op '", def.name, "': attribute '", a.name, "' declared twice"));
    }
    if (a.default_value.has_value() && a.default_value->type() != a.type) {
      return absl::InvalidArgumentError(
          absl::StrCat("op '", def.name, "': default of attribute '", a.name, "' has the wrong type"));
    }
  }
  if (!def.infer) return absl::InvalidArgumentError(absl::StrCat("op '", def.name, "' has no shape function"));
  std::string name = def.name;
  ops_.emplace(std::move(name), std::make_unique<OpDef>(std::move(def)));
  return absl::OkStatus();
}

const OpDef* OpRegistry::Find(absl::string_view name) const {
  auto it = ops_.find(name);
  return it == ops_.end() ? nullptr : it->second.get();
}

OpDef* OpRegistry::FindMutable(absl::string_view name) {
  auto it = ops_.find(name);
  return it == ops_.end() ? nullptr : it->second.get();
}

absl::StatusOr<const OpDef*> OpRegistry::Lookup(absl::string_view name) const {
  if (const OpDef* def = Find(name)) return def;
  std::string hint;
  for (const auto& [known, def] : ops_) {
    if (absl::EqualsIgnoreCase(known, name)) hint = absl::StrCat(" (did you mean '", known, "'?)");
  }
  return absl::NotFoundError(absl::StrCat("unknown op '", name, "'", hint));
}

std::vector<std::string> OpRegistry::OpNames() const {
  std::vector<std::string> names;
  names.reserve(ops_.size());
  for (const auto& [name, def] : ops_) names.push_back(name);
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace tsr

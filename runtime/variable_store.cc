// VariableStore.
#include "runtime/variable_store.h"

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "runtime/initializers.h"

namespace tsr {

absl::StatusOr<VariableStore> VariableStore::Initialize(const Graph& graph, uint64_t session_seed) {
  VariableStore store;
  for (const Node* node : graph.nodes()) {
    if (node->op() != "Variable") continue;
    TSR_ASSIGN_OR_RETURN(Tensor value, InitializeVariable(*node, session_seed));
    store.values_.emplace(node->name(), std::move(value));
  }
  return store;
}

absl::StatusOr<Tensor> VariableStore::Get(absl::string_view name) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = values_.find(name);
  if (it == values_.end()) return absl::NotFoundError(absl::StrCat("no variable named '", name, "'"));
  return it->second;
}

absl::Status VariableStore::Set(absl::string_view name, const Tensor& value) {
  // A copy first, so the caller's tensor stays theirs.
  return Replace(name, value.valid() ? value.Clone() : value);
}

absl::Status VariableStore::Replace(absl::string_view name, Tensor value) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = values_.find(name);
  if (it == values_.end()) return absl::NotFoundError(absl::StrCat("no variable named '", name, "'"));
  if (value.dtype() != it->second.dtype() || value.shape() != it->second.shape()) {
    return absl::InvalidArgumentError(absl::StrCat("variable '", name, "' is ", it->second.type().ToString(),
                                                   " but the new value is ", value.type().ToString()));
  }
  it->second = std::move(value);
  return absl::OkStatus();
}

std::vector<std::string> VariableStore::Names() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> names;
  names.reserve(values_.size());
  for (const auto& [name, value] : values_) names.push_back(name);
  return names;
}

}  // namespace tsr

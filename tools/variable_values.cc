// InitialVariableValues (see variable_values.h).
#include "tools/variable_values.h"

#include <memory>
#include <utility>

#include "runtime/session.h"

namespace tsr::cli {

absl::StatusOr<std::map<std::string, Tensor>> InitialVariableValues(const Graph& graph, uint64_t seed) {
  std::map<std::string, Tensor> values;
  bool any_missing = false;
  for (const Node* node : graph.nodes()) {
    if (node->op() == "Variable" && node->FindAttr("value") == nullptr) any_missing = true;
  }
  if (!any_missing) return values;
  absl::StatusOr<std::unique_ptr<Session>> session = Session::Create(graph.Clone(), {.seed = seed});
  if (!session.ok()) return session.status();
  for (const Node* node : graph.nodes()) {
    if (node->op() != "Variable" || node->FindAttr("value") != nullptr) continue;
    absl::StatusOr<Tensor> value = (*session)->GetVariable(node->name());
    if (!value.ok()) return value.status();
    values.emplace(node->name(), *std::move(value));
  }
  return values;
}

}  // namespace tsr::cli

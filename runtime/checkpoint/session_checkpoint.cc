// Capture and all-or-nothing restore of a Session's variables.
#include "runtime/checkpoint/session_checkpoint.h"

#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"

namespace tsr {

absl::StatusOr<Checkpoint> CaptureVariables(const Session& session, int64_t step,
                                            std::map<std::string, std::string> metadata) {
  Checkpoint checkpoint;
  checkpoint.step = step;
  checkpoint.metadata = std::move(metadata);
  for (const std::string& name : session.VariableNames()) {
    TSR_ASSIGN_OR_RETURN(Tensor value, session.GetVariable(name));
    checkpoint.tensors.emplace_back(name, std::move(value));
  }
  return checkpoint;
}

absl::Status RestoreVariables(Session& session, const Checkpoint& checkpoint, absl::string_view source) {
  absl::flat_hash_map<absl::string_view, const Tensor*> by_name;
  for (const auto& [name, tensor] : checkpoint.tensors) by_name[name] = &tensor;

  // The current values double as the expected types and as the rollback if a set fails.
  const std::vector<std::string> names = session.VariableNames();
  std::vector<Tensor> previous;
  std::vector<const Tensor*> saved_values;
  previous.reserve(names.size());
  saved_values.reserve(names.size());
  for (const std::string& name : names) {
    TSR_ASSIGN_OR_RETURN(Tensor current, session.GetVariable(name));
    auto it = by_name.find(name);
    if (it == by_name.end()) {
      return absl::NotFoundError(absl::StrCat("checkpoint '", source, "' has no tensor for variable '", name, "' (",
                                              DTypeName(current.dtype()), current.shape().ToString(), ")"));
    }
    const Tensor& saved = *it->second;
    if (saved.dtype() != current.dtype() || saved.shape() != current.shape()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "checkpoint '", source, "': tensor '", name, "' is ", DTypeName(saved.dtype()), saved.shape().ToString(),
          " but the variable is ", DTypeName(current.dtype()), current.shape().ToString()));
    }
    by_name.erase(it);
    previous.push_back(std::move(current));
    saved_values.push_back(&saved);
  }
  if (!by_name.empty()) {
    // Name the first in file order, so that the message does not depend on hashing.
    for (const auto& [name, tensor] : checkpoint.tensors) {
      if (by_name.contains(name)) {
        return absl::InvalidArgumentError(
            absl::StrCat("checkpoint '", source, "' has tensor '", name, "' but the session has no such variable"));
      }
    }
  }
  for (size_t i = 0; i < names.size(); ++i) {
    absl::Status set = session.SetVariable(names[i], *saved_values[i]);
    if (!set.ok()) {
      // Not reachable after the checks above; undo rather than leave a mix.
      for (size_t j = 0; j < i; ++j) session.SetVariable(names[j], previous[j]).IgnoreError();
      return absl::InternalError(absl::StrCat("checkpoint '", source, "': restoring '", names[i],
                                              "' failed after verification: ", set.message()));
    }
  }
  return absl::OkStatus();
}

}  // namespace tsr

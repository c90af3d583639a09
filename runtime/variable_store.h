// `VariableStore`: the current values of a graph's Variables, by node name. Reads hand
// out the stored tensor (sharing its buffer); writes replace it, so a tensor read
// earlier keeps the value it had.
#ifndef TESSERA_RUNTIME_VARIABLE_STORE_H_
#define TESSERA_RUNTIME_VARIABLE_STORE_H_

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/graph.h"
#include "graph/tensor.h"

namespace tsr {

class VariableStore {
 public:
  // Runs the initializer of every Variable node of `graph`.
  static absl::StatusOr<VariableStore> Initialize(const Graph& graph, uint64_t session_seed);

  VariableStore() = default;
  VariableStore(VariableStore&& other) : values_(std::move(other.values_)) {}

  // NotFound naming the variable when there is none.
  absl::StatusOr<Tensor> Get(absl::string_view name) const;
  // Stores a deep copy of `value`; its dtype and shape must match the variable's.
  absl::Status Set(absl::string_view name, const Tensor& value);
  // Makes `value` itself (sharing its buffer, no copy) the variable's value: what an
  // optimizer op's output becomes once it ran. Same checks as Set.
  absl::Status Replace(absl::string_view name, Tensor value);
  // Sorted.
  std::vector<std::string> Names() const;

 private:
  mutable std::mutex mu_;
  std::map<std::string, Tensor, std::less<>> values_;
};

}  // namespace tsr

#endif  // TESSERA_RUNTIME_VARIABLE_STORE_H_

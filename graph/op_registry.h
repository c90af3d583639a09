// `OpRegistry`: every op Tessera knows, by name. `OpRegistry::Global()` holds the
// built-in ops (registered once, explicitly, on first use — no static initializers
// that a linker could drop).
#ifndef TESSERA_GRAPH_OP_REGISTRY_H_
#define TESSERA_GRAPH_OP_REGISTRY_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "graph/op_def.h"

namespace tsr {

class OpRegistry {
 public:
  OpRegistry() = default;
  OpRegistry(const OpRegistry&) = delete;
  OpRegistry& operator=(const OpRegistry&) = delete;

  // The registry holding all built-in ops.
  static OpRegistry& Global();

  // Fails when an op of that name exists or the definition is malformed.
  absl::Status Register(OpDef def);
  // nullptr when unknown.
  const OpDef* Find(absl::string_view name) const;
  // NotFound naming the op (and a close match when there is one).
  absl::StatusOr<const OpDef*> Lookup(absl::string_view name) const;
  // Mutable access, e.g. for autodiff to attach gradient functions.
  OpDef* FindMutable(absl::string_view name);
  // Sorted op names.
  std::vector<std::string> OpNames() const;
  int size() const { return static_cast<int>(ops_.size()); }

 private:
  absl::flat_hash_map<std::string, std::unique_ptr<OpDef>> ops_;
};

}  // namespace tsr

#endif  // TESSERA_GRAPH_OP_REGISTRY_H_

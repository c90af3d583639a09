// Values for a model's Variables that hold none (a model never trained), as `tessera run`
// initializes them: shared by the commands that turn Variables into constants (export,
// compile, the compiled path of run) so that every path computes the same outputs.
#ifndef TESSERA_TOOLS_VARIABLE_VALUES_H_
#define TESSERA_TOOLS_VARIABLE_VALUES_H_

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "graph/tensor.h"

namespace tsr::cli {

// By node name, the value a Session seeded with `seed` gives each Variable without a
// `value` attribute; empty when every Variable holds one.
absl::StatusOr<std::map<std::string, Tensor>> InitialVariableValues(const Graph& graph, uint64_t seed);

}  // namespace tsr::cli

#endif  // TESSERA_TOOLS_VARIABLE_VALUES_H_

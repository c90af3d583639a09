// Shape functions and FLOP estimates shared by several op families.
#ifndef TESSERA_GRAPH_OPS_OP_HELPERS_H_
#define TESSERA_GRAPH_OPS_OP_HELPERS_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "graph/op_def.h"

namespace tsr {

// Output 0 has the type of input 0.
absl::Status SameAsFirstInput(InferenceContext& ctx);
// Output 0: the broadcast of all present inputs' shapes, with input 0's dtype.
absl::Status BroadcastAllInputs(InferenceContext& ctx);
// Like BroadcastAllInputs but the output dtype is bool (comparisons).
absl::Status BroadcastToBool(InferenceContext& ctx);

// Number of elements of output i with symbolic dims counted as 1.
int64_t OutputElements(const InferenceContext& ctx, int i = 0);
// FLOPs = `per_element` x elements of output 0.
FlopsFn PerOutputElement(int64_t per_element);

// Converts an axes list (possibly negative) to sorted unique axes in [0, rank);
// errors name the offending axis.
absl::StatusOr<std::vector<int>> NormalizeAxes(const InferenceContext& ctx, const std::vector<int64_t>& axes,
                                               int rank);

}  // namespace tsr

#endif  // TESSERA_GRAPH_OPS_OP_HELPERS_H_

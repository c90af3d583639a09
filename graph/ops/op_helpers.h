// Shape functions, FLOP estimates and checks shared by several op families.
#ifndef TESSERA_GRAPH_OPS_OP_HELPERS_H_
#define TESSERA_GRAPH_OPS_OP_HELPERS_H_

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
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
// The product of `factors`, saturating at INT64_MAX: FLOP counts of absurd (e.g.
// fuzzed) shapes stay meaningful instead of overflowing.
int64_t SaturatingProduct(std::initializer_list<int64_t> factors);

// Checks that the int attribute `name`, which ONNX declares as a flag, is 0 or 1:
// anything else is a typo.
absl::Status CheckFlagAttr(const InferenceContext& ctx, absl::string_view name);

// The value of input `i` when it is a known constant. Otherwise an error naming the
// input (by its OpDef name) and saying that it must be a constant, followed by
// `why` when given ("it sets an output dim").
absl::StatusOr<const Tensor*> ConstantInput(const InferenceContext& ctx, int i, absl::string_view why = "");
// The values of input `i`, a 1-D i32/i64 tensor that must be a known constant
// because it determines an output shape (Reshape's shape, Slice's starts, ...).
// Errors name the input and say what is expected.
absl::StatusOr<std::vector<int64_t>> ReadConstantInts(const InferenceContext& ctx, int i);
// "[1,-1,0]": the values of a shape-like input, for error messages.
std::string IntsToString(const std::vector<int64_t>& values);

// Converts an axes list (possibly negative) to sorted unique axes in [0, rank);
// errors name the offending axis.
absl::StatusOr<std::vector<int>> NormalizeAxes(const InferenceContext& ctx, const std::vector<int64_t>& axes, int rank);

}  // namespace tsr

#endif  // TESSERA_GRAPH_OPS_OP_HELPERS_H_

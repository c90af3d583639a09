// Pieces shared by the per-element op families (elementwise, activation, random):
// the definition of a plain unary op and the check that an operand is a scalar.
//
// FLOP convention for these families: every arithmetic operation, comparison and
// transcendental function (exp, log, erf, tanh, pow, ...) counts as one FLOP per
// element; pure data movement (Cast, Where, Identity-like ops) counts as none.
#ifndef TESSERA_GRAPH_OPS_ELEMENTWISE_HELPERS_H_
#define TESSERA_GRAPH_OPS_ELEMENTWISE_HELPERS_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "graph/op_def.h"

namespace tsr {

// A builder for Y = f(X) applied per element: input "X" and output "Y" of type T
// restricted to `allowed`, output type = input type, `flops_per_element` FLOPs per
// element. Callers may add attributes (and replace Infer/Flops) before Build().
OpDefBuilder UnaryOp(std::string name, std::string summary, absl::Span<const DType> allowed, int64_t flops_per_element);

// OK when input `i` is absent or holds exactly one value: rank 0, or rank 1 with a
// static size of 1 (ONNX exporters emit both for "scalar" operands). Otherwise an
// error naming the input as `what`.
absl::Status CheckScalarInput(const InferenceContext& ctx, int i, absl::string_view what);

}  // namespace tsr

#endif  // TESSERA_GRAPH_OPS_ELEMENTWISE_HELPERS_H_

// Helpers for shape-inference tests of single ops.
#ifndef TESSERA_TESTS_GRAPH_OPS_OP_TEST_UTIL_H_
#define TESSERA_TESTS_GRAPH_OPS_OP_TEST_UTIL_H_

#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/op_registry.h"

namespace tsr::testing {

// Runs the registered op's full inference (attribute, input and type-constraint
// checks, then its shape function) on one node named "n". `values[i]`, when given
// and non-null, is the constant value of input i. std::nullopt = absent input.
inline absl::StatusOr<std::vector<TensorType>> Infer(absl::string_view op,
                                                     std::vector<std::optional<TensorType>> inputs,
                                                     AttrMap attrs = {}, std::vector<const Tensor*> values = {}) {
  absl::StatusOr<const OpDef*> def = OpRegistry::Global().Lookup(op);
  if (!def.ok()) return def.status();
  values.resize(inputs.size(), nullptr);
  return InferOutputTypes(**def, "n", attrs, std::move(inputs), std::move(values));
}

// The single output type, or the error.
inline absl::StatusOr<TensorType> Infer1(absl::string_view op, std::vector<std::optional<TensorType>> inputs,
                                         AttrMap attrs = {}, std::vector<const Tensor*> values = {}) {
  absl::StatusOr<std::vector<TensorType>> out = Infer(op, std::move(inputs), std::move(attrs), std::move(values));
  if (!out.ok()) return out.status();
  return out->at(0);
}

inline TensorType F32(Shape s) { return TensorType(DType::kF32, std::move(s)); }
inline TensorType I64(Shape s) { return TensorType(DType::kI64, std::move(s)); }

}  // namespace tsr::testing

#endif  // TESSERA_TESTS_GRAPH_OPS_OP_TEST_UTIL_H_

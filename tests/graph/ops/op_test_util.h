// Helpers for shape-inference tests of single ops: running an op's inference and
// FLOP estimate on one node named "n", building input types, and checking results
// (gtest assertions and gmock matchers with messages that show what inference said).
#ifndef TESSERA_TESTS_GRAPH_OPS_OP_TEST_UTIL_H_
#define TESSERA_TESTS_GRAPH_OPS_OP_TEST_UTIL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "gmock/gmock.h"
#include "graph/op_registry.h"
#include "gtest/gtest.h"

namespace tsr::testing {

// Runs the registered op's full inference (attribute, input and type-constraint
// checks, then its shape function) on one node named "n". `values[i]`, when given
// and non-null, is the constant value of input i. std::nullopt = absent input.
inline absl::StatusOr<std::vector<TensorType>> Infer(absl::string_view op,
                                                     std::vector<std::optional<TensorType>> inputs, AttrMap attrs = {},
                                                     std::vector<const Tensor*> values = {}) {
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

// The FLOP estimate of the node after inference, with the arguments of Infer.
// Inference must succeed: a failure is reported (with its message) and gives -1.
inline int64_t Flops(absl::string_view op, std::vector<std::optional<TensorType>> inputs, AttrMap attrs = {},
                     std::vector<const Tensor*> values = {}) {
  values.resize(inputs.size(), nullptr);
  absl::StatusOr<std::vector<TensorType>> out = Infer(op, inputs, attrs, values);
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok()) return -1;
  return EstimateFlops(*OpRegistry::Global().Find(op), "n", attrs, std::move(inputs), std::move(values), *out);
}

inline TensorType T(DType dtype, Shape shape) { return TensorType(dtype, std::move(shape)); }
inline TensorType F32(Shape s) { return T(DType::kF32, std::move(s)); }
inline TensorType I64(Shape s) { return T(DType::kI64, std::move(s)); }

// An ints attribute (kernel_shape, strides, ...).
inline AttrValue Ints(std::vector<int64_t> v) { return AttrValue::Ints(std::move(v)); }

// "f32[N,5], bool[N,5]".
inline std::string TypesToString(const std::vector<TensorType>& types) {
  return absl::StrJoin(types, ", ", [](std::string* out, const TensorType& t) { out->append(t.ToString()); });
}

// "f32[N,5]" (or "f32[N,5], bool[N,5]" for several outputs), or "error: <message>",
// so that comparing it with the expected type shows what inference said.
inline std::string Str(const absl::StatusOr<TensorType>& r) {
  return r.ok() ? r->ToString() : absl::StrCat("error: ", r.status().message());
}
inline std::string Str(const absl::StatusOr<std::vector<TensorType>>& r) {
  return r.ok() ? TypesToString(*r) : absl::StrCat("error: ", r.status().message());
}

// Inference failed with InvalidArgument, naming node 'n' and `op`, and saying `needle`.
// For results of Infer1 and Infer: EXPECT_TRUE(FailsWith(Infer1("Relu", ...), "Relu", "has dtype"));
template <typename V>
::testing::AssertionResult FailsWith(const absl::StatusOr<V>& r, absl::string_view op, absl::string_view needle) {
  if (r.ok()) return ::testing::AssertionFailure() << "inference succeeded: " << Str(r);
  const std::string msg(r.status().message());
  const std::string node = absl::StrCat("node 'n' (", op, "): ");
  if (r.status().code() != absl::StatusCode::kInvalidArgument || !absl::StartsWith(msg, node) ||
      !absl::StrContains(msg, needle)) {
    return ::testing::AssertionFailure() << r.status() << " does not start with \"" << node << "\" and say \"" << needle
                                         << "\"";
  }
  return ::testing::AssertionSuccess();
}

// gmock matchers of inference results.

// An absl::StatusOr<TensorType> holding `expected`.
MATCHER_P(Yields, expected, absl::StrCat("yields ", expected.ToString())) {
  if (!arg.ok()) {
    *result_listener << "fails: " << arg.status().message();
    return false;
  }
  *result_listener << "yields " << arg->ToString();
  return *arg == expected;
}

// An absl::StatusOr<std::vector<TensorType>> holding the types `expected`.
MATCHER_P(YieldsAll, expected, absl::StrCat("yields ", TypesToString(expected))) {
  if (!arg.ok()) {
    *result_listener << "fails: " << arg.status().message();
    return false;
  }
  *result_listener << "yields " << TypesToString(*arg);
  return *arg == expected;
}

// A failed absl::StatusOr whose InvalidArgument message contains `needle`.
MATCHER_P(IsInvalidWith, needle, absl::StrCat("fails with InvalidArgument containing \"", needle, "\"")) {
  if (arg.ok()) {
    *result_listener << "succeeds";
    return false;
  }
  *result_listener << "fails: " << arg.status();
  return arg.status().code() == absl::StatusCode::kInvalidArgument && absl::StrContains(arg.status().message(), needle);
}

}  // namespace tsr::testing

#endif  // TESSERA_TESTS_GRAPH_OPS_OP_TEST_UTIL_H_

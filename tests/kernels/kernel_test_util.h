// Helpers shared by the kernel tests (tests/kernels/**): building tensors from
// vectors of doubles, running one op and taking its output(s), reading a tensor's
// values back, and comparing them with expected values.
#ifndef TESSERA_TESTS_KERNELS_KERNEL_TEST_UTIL_H_
#define TESSERA_TESTS_KERNELS_KERNEL_TEST_UTIL_H_

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/attribute.h"
#include "graph/op_registry.h"
#include "graph/tensor.h"
#include "gtest/gtest.h"
#include "kernels/reference/convert.h"
#include "kernels/run_op.h"

namespace tsr::testing {

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
inline constexpr double kInf = std::numeric_limits<double>::infinity();

// A tensor of `dtype` and `shape` holding `values` (converted like Cast).
inline Tensor Make(DType dtype, Shape shape, const std::vector<double>& values) {
  Tensor t(dtype, std::move(shape));
  VisitDType(dtype, [&](auto tag) {
    using T = decltype(tag);
    for (size_t i = 0; i < values.size(); ++i) t.data<T>()[i] = reference::ConvertScalar<T>(values[i]);
  });
  return t;
}

// A double tensor of `shape` with elements uniform in [-scale, scale) drawn from `rng`.
inline Tensor Random(Shape shape, std::mt19937& rng, double scale = 1.0) {
  std::uniform_real_distribution<double> dist(-scale, scale);
  std::vector<double> v(static_cast<size_t>(shape.num_elements()));
  for (double& x : v) x = dist(rng);
  return Tensor::FromVector<double>(std::move(shape), v);
}

// As above, from a fresh generator seeded with `seed`.
inline Tensor Random(Shape shape, uint32_t seed, double scale = 1.0) {
  std::mt19937 rng(seed);
  return Random(std::move(shape), rng, scale);
}

// The elements of `t` as doubles, in row-major order.
inline std::vector<double> Values(const Tensor& t) {
  std::vector<double> v(static_cast<size_t>(t.num_elements()));
  for (int64_t i = 0; i < t.num_elements(); ++i) v[static_cast<size_t>(i)] = t.GetAsDouble(i);
  return v;
}

// Runs `op`, expecting success and exactly one output, and returns it (an empty
// Tensor otherwise).
inline Tensor RunOne(absl::string_view op, const std::vector<std::optional<Tensor>>& inputs,
                     const AttrMap& attrs = {}) {
  absl::StatusOr<std::vector<Tensor>> out = RunOp(op, inputs, attrs);
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok()) return Tensor();
  EXPECT_EQ(out->size(), 1u) << op << " returned " << out->size() << " outputs";
  return out->size() == 1 ? (*out)[0] : Tensor();
}

// Runs `op`, expecting success, and returns all its outputs. On failure, returns as
// many empty tensors as the op declares outputs, so that indexing them stays valid.
inline std::vector<Tensor> RunAll(absl::string_view op, const std::vector<std::optional<Tensor>>& inputs,
                                  const AttrMap& attrs = {}) {
  absl::StatusOr<std::vector<Tensor>> out = RunOp(op, inputs, attrs);
  EXPECT_TRUE(out.ok()) << out.status();
  if (out.ok()) return *std::move(out);
  absl::StatusOr<const OpDef*> def = OpRegistry::Global().Lookup(op);
  return std::vector<Tensor>(def.ok() ? (*def)->outputs.size() : 0);
}

// `t` has expected.size() elements, each within `tol` (absolute) of the expected one.
inline void ExpectNear(const Tensor& t, const std::vector<double>& expected, double tol) {
  ASSERT_EQ(t.num_elements(), static_cast<int64_t>(expected.size())) << t.DebugString();
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_NEAR(t.GetAsDouble(static_cast<int64_t>(i)), expected[i], tol) << "element " << i;
  }
}

// Elementwise comparison within `tolerance` (relative, at least absolute for values
// below 1), where NaN matches NaN, infinities must match exactly, and tolerance 0
// means exact equality.
inline void ExpectValues(const Tensor& t, const std::vector<double>& expected, double tolerance = 0) {
  const std::vector<double> got = Values(t);
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(expected[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << "element " << i << " is " << got[i];
    } else if (tolerance == 0 || std::isinf(expected[i])) {
      EXPECT_EQ(got[i], expected[i]) << "element " << i;
    } else {
      EXPECT_NEAR(got[i], expected[i], tolerance * std::max(1.0, std::fabs(expected[i]))) << "element " << i;
    }
  }
}

// The dtypes `op` accepts for its input 0, in kAllDTypes order.
inline std::vector<DType> AcceptedDTypes(absl::string_view op) {
  absl::StatusOr<const OpDef*> def = OpRegistry::Global().Lookup(op);
  EXPECT_TRUE(def.ok());
  std::vector<DType> out;
  if (!def.ok()) return out;
  const TypeConstraintDef* c = (*def)->FindTypeConstraint((*def)->inputs[0].type_var);
  for (DType d : kAllDTypes) {
    if (c != nullptr && Contains(c->allowed, d)) out.push_back(d);
  }
  return out;
}

}  // namespace tsr::testing

#endif  // TESSERA_TESTS_KERNELS_KERNEL_TEST_UTIL_H_

// Tests of the reference reduction kernels (kernels/reference/reduction_kernels.cc).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/attribute.h"
#include "graph/op_registry.h"
#include "gtest/gtest.h"
#include "kernels/kernel.h"
#include "kernels/reference/convert.h"
#include "kernels/run_op.h"

namespace tsr {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// A tensor of `dtype` holding `values` (converted like Cast).
Tensor Make(DType dtype, Shape shape, const std::vector<double>& values) {
  Tensor t(dtype, std::move(shape));
  VisitDType(dtype, [&](auto tag) {
    using T = decltype(tag);
    for (size_t i = 0; i < values.size(); ++i) t.data<T>()[i] = reference::ConvertScalar<T>(values[i]);
  });
  return t;
}

std::vector<double> Values(const Tensor& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.num_elements(); ++i) v.push_back(t.GetAsDouble(i));
  return v;
}

Tensor Eval(absl::string_view op, const std::vector<std::optional<Tensor>>& inputs, const AttrMap& attrs = {}) {
  absl::StatusOr<std::vector<Tensor>> out = RunOp(op, inputs, attrs);
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? (*out)[0] : Tensor();
}

// Elementwise comparison within `tolerance` (relative), where NaN matches NaN.
void ExpectValues(const Tensor& t, const std::vector<double>& expected, double tolerance = 0) {
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

// The dtypes the op accepts for input 0, in kAllDTypes order.
std::vector<DType> AcceptedDTypes(absl::string_view op) {
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

Tensor Axes(const std::vector<double>& axes) {
  return Make(DType::kI64, Shape{static_cast<int64_t>(axes.size())}, axes);
}

AttrMap KeepDims(int64_t keep) { return {{"keepdims", AttrValue::Int(keep)}}; }

TEST(ReductionKernelsTest, RegisteredForEveryAcceptedDType) {
  for (const char* op : {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL2", "ArgMax"}) {
    EXPECT_EQ(KernelRegistry::Global().DTypesFor(op, kReferenceDevice), AcceptedDTypes(op)) << op;
  }
}

TEST(ReductionKernelsTest, EveryKindAlongOneAxis) {
  for (DType dtype : {DType::kF32, DType::kF64, DType::kF16, DType::kBF16, DType::kI32, DType::kI64}) {
    SCOPED_TRACE(DTypeName(dtype));
    const Tensor x = Make(dtype, Shape{2, 3}, {1, 2, 3, 4, 5, 6});
    Tensor sum = Eval("ReduceSum", {x, Axes({1})});
    EXPECT_EQ(sum.shape(), (Shape{2, 1}));
    ExpectValues(sum, {6, 15});
    ExpectValues(Eval("ReduceMean", {x, Axes({1})}), {2, 5});
    ExpectValues(Eval("ReduceMax", {x, Axes({1})}), {3, 6});
    ExpectValues(Eval("ReduceMin", {x, Axes({1})}), {1, 4});
    ExpectValues(Eval("ReduceProd", {x, Axes({1})}), {6, 120});
    Tensor l2 = Eval("ReduceL2", {x, Axes({-2})}, KeepDims(0));
    EXPECT_EQ(l2.shape(), (Shape{3}));
    if (IsInteger(dtype)) {
      ExpectValues(l2, {4, 5, 6});  // sqrt(17), sqrt(29), sqrt(45) truncated
    } else {
      ExpectValues(l2, {std::sqrt(17.0), std::sqrt(29.0), std::sqrt(45.0)}, dtype == DType::kF64 ? 0 : 1e-2);
    }
  }
}

TEST(ReductionKernelsTest, AxesKeepdimsAndNoop) {
  std::vector<double> v(24);
  for (int i = 0; i < 24; ++i) v[i] = i;
  const Tensor x = Make(DType::kF64, Shape{2, 3, 4}, v);
  Tensor all = Eval("ReduceSum", {x});
  EXPECT_EQ(all.shape(), (Shape{1, 1, 1}));
  ExpectValues(all, {276});
  Tensor scalar = Eval("ReduceSum", {x, Axes({})}, KeepDims(0));
  EXPECT_EQ(scalar.shape(), Shape());
  ExpectValues(scalar, {276});
  // Axes 0 and 2: out[j] = sum over i, k of 12i + 4j + k = 2*4*4j + (0+12)*4 + 2*(0+1+2+3).
  Tensor mid = Eval("ReduceSum", {x, Axes({2, 0})}, KeepDims(0));
  EXPECT_EQ(mid.shape(), (Shape{3}));
  ExpectValues(mid, {60, 92, 124});
  // A negative axis counts from the end.
  ExpectValues(Eval("ReduceMax", {x, Axes({-1})}, KeepDims(0)), {3, 7, 11, 15, 19, 23});
  Tensor same = Eval("ReduceSum", {x}, {{"noop_with_empty_axes", AttrValue::Int(1)}});
  EXPECT_TRUE(same.BitwiseEquals(x));
}

TEST(ReductionKernelsTest, MaxMinEveryOrderedDType) {
  for (DType dtype : {DType::kI8, DType::kU8, DType::kI32, DType::kI64, DType::kF16}) {
    SCOPED_TRACE(DTypeName(dtype));
    const Tensor x = Make(dtype, Shape{2, 2}, {7, 100, 3, 0});
    ExpectValues(Eval("ReduceMax", {x, Axes({0})}, KeepDims(0)), {7, 100});
    ExpectValues(Eval("ReduceMin", {x}, KeepDims(0)), {0});
  }
  const Tensor b = Make(DType::kBool, Shape{2, 2}, {0, 1, 0, 0});
  ExpectValues(Eval("ReduceMax", {b, Axes({1})}, KeepDims(0)), {1, 0});
  ExpectValues(Eval("ReduceMin", {b, Axes({0})}, KeepDims(0)), {0, 0});
  ExpectValues(Eval("ReduceMin", {Make(DType::kBool, Shape{2}, {1, 1})}, KeepDims(0)), {1});
}

TEST(ReductionKernelsTest, MaxMinPropagateNaN) {
  const Tensor x = Make(DType::kF32, Shape{2, 3}, {1, kNaN, 3, 4, 5, 6});
  ExpectValues(Eval("ReduceMax", {x, Axes({1})}, KeepDims(0)), {kNaN, 6});
  ExpectValues(Eval("ReduceMin", {x, Axes({1})}, KeepDims(0)), {kNaN, 4});
  ExpectValues(Eval("ReduceSum", {x, Axes({1})}, KeepDims(0)), {kNaN, 15});
}

TEST(ReductionKernelsTest, EmptyReductionsGiveIdentities) {
  const Tensor x(DType::kF32, Shape{0, 2});
  ExpectValues(Eval("ReduceSum", {x, Axes({0})}), {0, 0});
  ExpectValues(Eval("ReduceProd", {x, Axes({0})}), {1, 1});
  ExpectValues(Eval("ReduceL2", {x, Axes({0})}), {0, 0});
  ExpectValues(Eval("ReduceMax", {x, Axes({0})}), {-kInf, -kInf});
  ExpectValues(Eval("ReduceMin", {x, Axes({0})}), {kInf, kInf});
  ExpectValues(Eval("ReduceMean", {x, Axes({0})}), {kNaN, kNaN});
  const Tensor xi(DType::kI32, Shape{0, 2});
  ExpectValues(Eval("ReduceMax", {xi, Axes({0})}), {-2147483648.0, -2147483648.0});
  ExpectValues(Eval("ReduceMin", {xi, Axes({0})}), {2147483647.0, 2147483647.0});
  EXPECT_FALSE(RunOp("ReduceMean", {xi, Axes({0})}).ok());
  // Reducing the non-empty axis of an empty tensor gives an empty output.
  EXPECT_EQ(Eval("ReduceSum", {x, Axes({1})}).shape(), (Shape{0, 1}));
}

TEST(ReductionKernelsTest, AccumulatesInDouble) {
  // In f32 arithmetic 1e8 + 1 == 1e8, so a float accumulator would give 0.
  ExpectValues(Eval("ReduceSum", {Make(DType::kF32, Shape{3}, {1e8, 1, -1e8})}, KeepDims(0)), {1});
  ExpectValues(Eval("ReduceMean", {Make(DType::kF16, Shape{4}, {2048, 1, 1, -2048})}, KeepDims(0)), {0.5});
}

TEST(ReductionKernelsTest, IntegerSumsWrapAndMeansTruncate) {
  ExpectValues(Eval("ReduceSum", {Make(DType::kI32, Shape{2}, {2147483647.0, 1})}, KeepDims(0)), {-2147483648.0});
  ExpectValues(Eval("ReduceMean", {Make(DType::kI64, Shape{3}, {1, 2, 4})}, KeepDims(0)), {2});
  ExpectValues(Eval("ReduceMean", {Make(DType::kI32, Shape{2}, {-3, -4})}, KeepDims(0)), {-3});
}

TEST(ReductionKernelsTest, ArgMax) {
  const Tensor x = Make(DType::kF32, Shape{2, 3}, {1, 3, 3, 5, 2, 5});
  Tensor first = Eval("ArgMax", {x}, {{"axis", AttrValue::Int(1)}});
  EXPECT_EQ(first.dtype(), DType::kI64);
  EXPECT_EQ(first.shape(), (Shape{2, 1}));
  ExpectValues(first, {1, 0});
  ExpectValues(Eval("ArgMax", {x}, {{"axis", AttrValue::Int(-1)}, {"select_last_index", AttrValue::Int(1)}}), {2, 2});
  Tensor along0 = Eval("ArgMax", {x}, {{"keepdims", AttrValue::Int(0)}});
  EXPECT_EQ(along0.shape(), (Shape{3}));
  ExpectValues(along0, {1, 0, 1});
  for (DType dtype : kNumericDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    ExpectValues(Eval("ArgMax", {Make(dtype, Shape{4}, {2, 9, 0, 9})}, KeepDims(0)), {1});
  }
  ExpectValues(Eval("ArgMax", {Make(DType::kF64, Shape{4}, {1, kNaN, 7, kNaN})}, KeepDims(0)), {1});
  ExpectValues(
      Eval("ArgMax", {Make(DType::kF64, Shape{4}, {1, kNaN, 7, kNaN})}, {{"select_last_index", AttrValue::Int(1)}}),
      {3});
  ExpectValues(Eval("ArgMax", {Make(DType::kI64, Shape{2}, {9007199254740993.0, 9007199254740992.0})}), {0});
}

}  // namespace
}  // namespace tsr

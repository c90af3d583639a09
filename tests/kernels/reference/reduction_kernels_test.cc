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
#include "tests/kernels/kernel_test_util.h"

namespace tsr {
namespace {

using ::tsr::testing::AcceptedDTypes;
using ::tsr::testing::ExpectValues;
using ::tsr::testing::kInf;
using ::tsr::testing::kNaN;
using ::tsr::testing::Make;
using ::tsr::testing::RunOne;

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
    Tensor sum = RunOne("ReduceSum", {x, Axes({1})});
    EXPECT_EQ(sum.shape(), (Shape{2, 1}));
    ExpectValues(sum, {6, 15});
    ExpectValues(RunOne("ReduceMean", {x, Axes({1})}), {2, 5});
    ExpectValues(RunOne("ReduceMax", {x, Axes({1})}), {3, 6});
    ExpectValues(RunOne("ReduceMin", {x, Axes({1})}), {1, 4});
    ExpectValues(RunOne("ReduceProd", {x, Axes({1})}), {6, 120});
    Tensor l2 = RunOne("ReduceL2", {x, Axes({-2})}, KeepDims(0));
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
  Tensor all = RunOne("ReduceSum", {x});
  EXPECT_EQ(all.shape(), (Shape{1, 1, 1}));
  ExpectValues(all, {276});
  Tensor scalar = RunOne("ReduceSum", {x, Axes({})}, KeepDims(0));
  EXPECT_EQ(scalar.shape(), Shape());
  ExpectValues(scalar, {276});
  // Axes 0 and 2: out[j] = sum over i, k of 12i + 4j + k = 2*4*4j + (0+12)*4 + 2*(0+1+2+3).
  Tensor mid = RunOne("ReduceSum", {x, Axes({2, 0})}, KeepDims(0));
  EXPECT_EQ(mid.shape(), (Shape{3}));
  ExpectValues(mid, {60, 92, 124});
  // A negative axis counts from the end.
  ExpectValues(RunOne("ReduceMax", {x, Axes({-1})}, KeepDims(0)), {3, 7, 11, 15, 19, 23});
  Tensor same = RunOne("ReduceSum", {x}, {{"noop_with_empty_axes", AttrValue::Int(1)}});
  EXPECT_TRUE(same.BitwiseEquals(x));
}

TEST(ReductionKernelsTest, MaxMinEveryOrderedDType) {
  for (DType dtype : {DType::kI8, DType::kU8, DType::kI32, DType::kI64, DType::kF16}) {
    SCOPED_TRACE(DTypeName(dtype));
    const Tensor x = Make(dtype, Shape{2, 2}, {7, 100, 3, 0});
    ExpectValues(RunOne("ReduceMax", {x, Axes({0})}, KeepDims(0)), {7, 100});
    ExpectValues(RunOne("ReduceMin", {x}, KeepDims(0)), {0});
  }
  const Tensor b = Make(DType::kBool, Shape{2, 2}, {0, 1, 0, 0});
  ExpectValues(RunOne("ReduceMax", {b, Axes({1})}, KeepDims(0)), {1, 0});
  ExpectValues(RunOne("ReduceMin", {b, Axes({0})}, KeepDims(0)), {0, 0});
  ExpectValues(RunOne("ReduceMin", {Make(DType::kBool, Shape{2}, {1, 1})}, KeepDims(0)), {1});
}

TEST(ReductionKernelsTest, MaxMinPropagateNaN) {
  const Tensor x = Make(DType::kF32, Shape{2, 3}, {1, kNaN, 3, 4, 5, 6});
  ExpectValues(RunOne("ReduceMax", {x, Axes({1})}, KeepDims(0)), {kNaN, 6});
  ExpectValues(RunOne("ReduceMin", {x, Axes({1})}, KeepDims(0)), {kNaN, 4});
  ExpectValues(RunOne("ReduceSum", {x, Axes({1})}, KeepDims(0)), {kNaN, 15});
}

TEST(ReductionKernelsTest, EmptyReductionsGiveIdentities) {
  const Tensor x(DType::kF32, Shape{0, 2});
  ExpectValues(RunOne("ReduceSum", {x, Axes({0})}), {0, 0});
  ExpectValues(RunOne("ReduceProd", {x, Axes({0})}), {1, 1});
  ExpectValues(RunOne("ReduceL2", {x, Axes({0})}), {0, 0});
  ExpectValues(RunOne("ReduceMax", {x, Axes({0})}), {-kInf, -kInf});
  ExpectValues(RunOne("ReduceMin", {x, Axes({0})}), {kInf, kInf});
  ExpectValues(RunOne("ReduceMean", {x, Axes({0})}), {kNaN, kNaN});
  const Tensor xi(DType::kI32, Shape{0, 2});
  ExpectValues(RunOne("ReduceMax", {xi, Axes({0})}), {-2147483648.0, -2147483648.0});
  ExpectValues(RunOne("ReduceMin", {xi, Axes({0})}), {2147483647.0, 2147483647.0});
  EXPECT_FALSE(RunOp("ReduceMean", {xi, Axes({0})}).ok());
  // Reducing the non-empty axis of an empty tensor gives an empty output.
  EXPECT_EQ(RunOne("ReduceSum", {x, Axes({1})}).shape(), (Shape{0, 1}));
}

TEST(ReductionKernelsTest, AccumulatesInDouble) {
  // In f32 arithmetic 1e8 + 1 == 1e8, so a float accumulator would give 0.
  ExpectValues(RunOne("ReduceSum", {Make(DType::kF32, Shape{3}, {1e8, 1, -1e8})}, KeepDims(0)), {1});
  ExpectValues(RunOne("ReduceMean", {Make(DType::kF16, Shape{4}, {2048, 1, 1, -2048})}, KeepDims(0)), {0.5});
}

TEST(ReductionKernelsTest, IntegerSumsWrapAndMeansTruncate) {
  ExpectValues(RunOne("ReduceSum", {Make(DType::kI32, Shape{2}, {2147483647.0, 1})}, KeepDims(0)), {-2147483648.0});
  ExpectValues(RunOne("ReduceMean", {Make(DType::kI64, Shape{3}, {1, 2, 4})}, KeepDims(0)), {2});
  ExpectValues(RunOne("ReduceMean", {Make(DType::kI32, Shape{2}, {-3, -4})}, KeepDims(0)), {-3});
}

TEST(ReductionKernelsTest, ArgMax) {
  const Tensor x = Make(DType::kF32, Shape{2, 3}, {1, 3, 3, 5, 2, 5});
  Tensor first = RunOne("ArgMax", {x}, {{"axis", AttrValue::Int(1)}});
  EXPECT_EQ(first.dtype(), DType::kI64);
  EXPECT_EQ(first.shape(), (Shape{2, 1}));
  ExpectValues(first, {1, 0});
  ExpectValues(RunOne("ArgMax", {x}, {{"axis", AttrValue::Int(-1)}, {"select_last_index", AttrValue::Int(1)}}), {2, 2});
  Tensor along0 = RunOne("ArgMax", {x}, {{"keepdims", AttrValue::Int(0)}});
  EXPECT_EQ(along0.shape(), (Shape{3}));
  ExpectValues(along0, {1, 0, 1});
  for (DType dtype : kNumericDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    ExpectValues(RunOne("ArgMax", {Make(dtype, Shape{4}, {2, 9, 0, 9})}, KeepDims(0)), {1});
  }
  ExpectValues(RunOne("ArgMax", {Make(DType::kF64, Shape{4}, {1, kNaN, 7, kNaN})}, KeepDims(0)), {1});
  ExpectValues(
      RunOne("ArgMax", {Make(DType::kF64, Shape{4}, {1, kNaN, 7, kNaN})}, {{"select_last_index", AttrValue::Int(1)}}),
      {3});
  ExpectValues(RunOne("ArgMax", {Make(DType::kI64, Shape{2}, {9007199254740993.0, 9007199254740992.0})}), {0});
}

}  // namespace
}  // namespace tsr

// Shape/dtype inference and FLOP estimates of the reductions (graph/ops/reduction_ops.cc).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/op_def.h"
#include "gtest/gtest.h"
#include "tests/graph/ops/op_test_util.h"

namespace tsr {
namespace {

using ::tsr::testing::F32;
using ::tsr::testing::FailsWith;
using ::tsr::testing::Flops;
using ::tsr::testing::I64;
using ::tsr::testing::Infer1;
using ::tsr::testing::Str;
using ::tsr::testing::T;

constexpr int64_t N = kBatchDim;

Tensor Axes(std::vector<int64_t> axes) {
  const int64_t n = static_cast<int64_t>(axes.size());
  return Tensor::FromVector<int64_t>(Shape{n}, axes);
}

AttrMap KeepDims(int64_t v) { return {{"keepdims", AttrValue::Int(v)}}; }

// ---------------------------------------------------------------------------
// ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL2 share inference.

class ReduceTest : public ::testing::TestWithParam<const char*> {
 protected:
  // Reduces `data` over the constant `axes`.
  absl::StatusOr<TensorType> Reduce(TensorType data, const std::vector<int64_t>& axes, AttrMap attrs = {}) {
    axes_ = Axes(axes);
    return Infer1(GetParam(), {std::move(data), I64({static_cast<int64_t>(axes.size())})}, std::move(attrs),
                  {nullptr, &axes_});
  }

  Tensor axes_;
};

TEST_P(ReduceTest, KeepdimsDefaultsToOne) {
  EXPECT_EQ(Str(Reduce(F32({N, 3, 4}), {1})), "f32[N,1,4]");
  EXPECT_EQ(Str(Reduce(F32({N, 3, 4}), {1}, KeepDims(1))), "f32[N,1,4]");
}

TEST_P(ReduceTest, KeepdimsZeroDropsAxes) {
  EXPECT_EQ(Str(Reduce(F32({N, 3, 4}), {1}, KeepDims(0))), "f32[N,4]");
  EXPECT_EQ(Str(Reduce(F32({N, 3, 4}), {2, 1}, KeepDims(0))), "f32[N]");
}

TEST_P(ReduceTest, NegativeAxes) {
  EXPECT_EQ(Str(Reduce(F32({N, 3, 4}), {-1})), "f32[N,3,1]");
  EXPECT_EQ(Str(Reduce(F32({N, 3, 4}), {-3, -1}, KeepDims(0))), "f32[3]");
}

TEST_P(ReduceTest, ReducingTheBatchDim) {
  EXPECT_EQ(Str(Reduce(F32({N, 3, 4}), {0})), "f32[1,3,4]");
  EXPECT_EQ(Str(Reduce(F32({N, 3, 4}), {0}, KeepDims(0))), "f32[3,4]");
}

TEST_P(ReduceTest, AbsentAxesReduceEverything) {
  EXPECT_EQ(Str(Infer1(GetParam(), {F32({N, 3, 4})})), "f32[1,1,1]");
  EXPECT_EQ(Str(Infer1(GetParam(), {F32({N, 3, 4})}, KeepDims(0))), "f32[]");
  EXPECT_EQ(Str(Infer1(GetParam(), {F32({N, 3, 4}), std::nullopt}, KeepDims(0))), "f32[]");
  EXPECT_EQ(Str(Infer1(GetParam(), {F32({})})), "f32[]");
}

TEST_P(ReduceTest, EmptyAxesReduceEverythingUnlessNoop) {
  EXPECT_EQ(Str(Reduce(F32({N, 3}), {})), "f32[1,1]");
  EXPECT_EQ(Str(Reduce(F32({N, 3}), {}, {{"noop_with_empty_axes", AttrValue::Int(1)}})), "f32[N,3]");
  EXPECT_EQ(Str(Infer1(GetParam(), {F32({N, 3})},
                       {{"noop_with_empty_axes", AttrValue::Int(1)}, {"keepdims", AttrValue::Int(0)}})),
            "f32[N,3]");
  // noop only applies to empty axes.
  EXPECT_EQ(Str(Reduce(F32({N, 3}), {1}, {{"noop_with_empty_axes", AttrValue::Int(1)}})), "f32[N,1]");
}

TEST_P(ReduceTest, AxisErrors) {
  EXPECT_TRUE(FailsWith(Reduce(F32({N, 3, 4}), {1, -2}), GetParam(), "axis -2 is repeated"));
  EXPECT_TRUE(FailsWith(Reduce(F32({N, 3, 4}), {3}), GetParam(), "axis 3 is out of range for rank 3"));
  EXPECT_TRUE(FailsWith(Reduce(F32({N, 3, 4}), {-4}), GetParam(), "axis -4 is out of range"));
  EXPECT_TRUE(FailsWith(Reduce(F32({}), {0}), GetParam(), "out of range for rank 0"));
}

TEST_P(ReduceTest, AxesMustBeAConstantI64Vector) {
  EXPECT_TRUE(
      FailsWith(Infer1(GetParam(), {F32({N, 3}), I64({1})}), GetParam(), "input 1 ('axes') must be a constant"));
  const Tensor i32_axes = Tensor::FromVector<int32_t>(Shape{1}, {1});
  EXPECT_TRUE(FailsWith(Infer1(GetParam(), {F32({N, 3}), T(DType::kI32, {1})}, {}, {nullptr, &i32_axes}), GetParam(),
                        "input 1 ('axes') has dtype i32 but one of {i64} is required"));
  const Tensor scalar_axis = Tensor::Scalar<int64_t>(1);
  EXPECT_TRUE(FailsWith(Infer1(GetParam(), {F32({N, 3}), I64({})}, {}, {nullptr, &scalar_axis}), GetParam(),
                        "input 1 ('axes') has shape [] but a 1-D tensor is required"));
}

TEST_P(ReduceTest, AttributeErrors) {
  EXPECT_TRUE(
      FailsWith(Reduce(F32({2, 3}), {1}, KeepDims(2)), GetParam(), "attribute 'keepdims' is 2 but must be 0 or 1"));
  EXPECT_TRUE(FailsWith(Reduce(F32({2, 3}), {1}, {{"noop_with_empty_axes", AttrValue::Int(-1)}}), GetParam(),
                        "attribute 'noop_with_empty_axes' is -1"));
  EXPECT_TRUE(FailsWith(Reduce(F32({2, 3}), {1}, {{"keepdims", AttrValue::Bool(false)}}), GetParam(),
                        "attribute 'keepdims' has type bool but int is required"));
  // Opset 18 moved axes from an attribute to an input.
  EXPECT_TRUE(FailsWith(Infer1(GetParam(), {F32({2, 3})}, {{"axes", AttrValue::Ints({1})}}), GetParam(),
                        "unknown attribute 'axes' (known: keepdims, noop_with_empty_axes)"));
}

TEST_P(ReduceTest, InputCountAndDTypes) {
  EXPECT_TRUE(FailsWith(Infer1(GetParam(), {}), GetParam(), "has 0 inputs but 1 to 2 expected"));
  EXPECT_TRUE(FailsWith(Infer1(GetParam(), {F32({2}), I64({1}), I64({1})}), GetParam(), "has 3 inputs but 1 to 2"));
  for (DType dtype : {DType::kF64, DType::kF16, DType::kBF16, DType::kI32, DType::kI64}) {
    EXPECT_EQ(Str(Infer1(GetParam(), {T(dtype, {2, 3})}, KeepDims(0))), absl::StrCat(DTypeName(dtype), "[]"));
  }
}

INSTANTIATE_TEST_SUITE_P(Ops, ReduceTest,
                         ::testing::Values("ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd",
                                           "ReduceL2"));

TEST(ReduceDTypeTest, OrderingReductionsTakeBoolAndBytes) {
  for (const char* op : {"ReduceMax", "ReduceMin"}) {
    EXPECT_EQ(Str(Infer1(op, {T(DType::kBool, {N, 3})})), "bool[1,1]") << op;
    EXPECT_EQ(Str(Infer1(op, {T(DType::kU8, {3})})), "u8[1]") << op;
    EXPECT_EQ(Str(Infer1(op, {T(DType::kI8, {3})})), "i8[1]") << op;
  }
}

TEST(ReduceDTypeTest, ArithmeticReductionsRejectBoolAndBytes) {
  for (const char* op : {"ReduceSum", "ReduceMean", "ReduceProd", "ReduceL2"}) {
    EXPECT_TRUE(FailsWith(Infer1(op, {T(DType::kBool, {3})}), op, "input 0 ('data') has dtype bool")) << op;
    EXPECT_TRUE(FailsWith(Infer1(op, {T(DType::kI8, {3})}), op, "input 0 ('data') has dtype i8")) << op;
  }
}

TEST(ReduceFlopsTest, PerInputAndPerOutputElement) {
  const Tensor axes = Axes({1});
  const std::vector<std::optional<TensorType>> inputs = {F32({N, 3, 4}), I64({1})};
  // 12 input elements (batch counted as 1), 4 output elements.
  EXPECT_EQ(Flops("ReduceSum", inputs, {}, {nullptr, &axes}), 12);
  EXPECT_EQ(Flops("ReduceMax", inputs, {}, {nullptr, &axes}), 12);
  EXPECT_EQ(Flops("ReduceMean", inputs, {}, {nullptr, &axes}), 16);
  EXPECT_EQ(Flops("ReduceL2", inputs, {}, {nullptr, &axes}), 28);
  EXPECT_EQ(Flops("ReduceSum", {F32({2, 3, 4})}), 24);
}

TEST(ReduceFlopsTest, NoopCostsNothing) {
  EXPECT_EQ(Flops("ReduceSum", {F32({2, 3, 4})}, {{"noop_with_empty_axes", AttrValue::Int(1)}}), 0);
  const Tensor empty = Axes({});
  EXPECT_EQ(
      Flops("ReduceMean", {F32({2, 3, 4}), I64({0})}, {{"noop_with_empty_axes", AttrValue::Int(1)}}, {nullptr, &empty}),
      0);
}

// ---------------------------------------------------------------------------

TEST(ArgMaxTest, DefaultsReduceAxisZeroKeepingDims) {
  EXPECT_EQ(Str(Infer1("ArgMax", {F32({N, 3, 4})})), "i64[1,3,4]");
  EXPECT_EQ(Str(Infer1("ArgMax", {F32({5})})), "i64[1]");
}

TEST(ArgMaxTest, AxisAndKeepdims) {
  EXPECT_EQ(Str(Infer1("ArgMax", {F32({N, 3, 4})}, {{"axis", AttrValue::Int(-1)}, {"keepdims", AttrValue::Int(0)}})),
            "i64[N,3]");
  EXPECT_EQ(Str(Infer1("ArgMax", {F32({N, 3, 4})}, {{"axis", AttrValue::Int(1)}})), "i64[N,1,4]");
  EXPECT_EQ(Str(Infer1("ArgMax", {F32({N, 10})}, {{"axis", AttrValue::Int(0)}, {"keepdims", AttrValue::Int(0)}})),
            "i64[10]");
  EXPECT_EQ(Str(Infer1("ArgMax", {T(DType::kI32, {N, 10})},
                       {{"axis", AttrValue::Int(1)}, {"select_last_index", AttrValue::Int(1)}})),
            "i64[N,1]");
}

TEST(ArgMaxTest, Errors) {
  EXPECT_TRUE(FailsWith(Infer1("ArgMax", {F32({N, 3})}, {{"axis", AttrValue::Int(2)}}), "ArgMax",
                        "axis 2 is out of range for rank 2"));
  EXPECT_TRUE(FailsWith(Infer1("ArgMax", {F32({})}), "ArgMax", "axis 0 is out of range for rank 0"));
  EXPECT_TRUE(FailsWith(Infer1("ArgMax", {F32({2, 0})}, {{"axis", AttrValue::Int(1)}}), "ArgMax",
                        "axis 1 of input shape [2,0] is empty"));
  EXPECT_TRUE(FailsWith(Infer1("ArgMax", {F32({2})}, {{"select_last_index", AttrValue::Int(2)}}), "ArgMax",
                        "attribute 'select_last_index' is 2 but must be 0 or 1"));
  EXPECT_TRUE(FailsWith(Infer1("ArgMax", {F32({2})}, {{"axis", AttrValue::Ints({0})}}), "ArgMax",
                        "attribute 'axis' has type ints but int is required"));
  EXPECT_TRUE(
      FailsWith(Infer1("ArgMax", {F32({2})}, {{"axes", AttrValue::Ints({0})}}), "ArgMax", "unknown attribute 'axes'"));
  EXPECT_TRUE(FailsWith(Infer1("ArgMax", {T(DType::kBool, {2})}), "ArgMax", "has dtype bool"));
  EXPECT_TRUE(FailsWith(Infer1("ArgMax", {F32({2}), I64({1})}), "ArgMax", "has 2 inputs but 1 expected"));
}

TEST(ArgMaxTest, OneComparisonPerInputElement) {
  EXPECT_EQ(Flops("ArgMax", {F32({N, 3, 4})}, {{"axis", AttrValue::Int(2)}}), 12);
}

}  // namespace
}  // namespace tsr

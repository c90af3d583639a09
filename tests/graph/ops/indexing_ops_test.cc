// Shape/dtype inference and FLOP estimates of the indexing ops (graph/ops/indexing_ops.cc).
#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

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

constexpr int64_t N = kBatchDim;

TensorType I32(Shape s) { return TensorType(DType::kI32, std::move(s)); }

AttrMap Axis(int64_t axis) { return {{"axis", AttrValue::Int(axis)}}; }

// ---------------------------------------------------------------- Gather

TEST(GatherTest, OutputIsDataPrefixIndicesDataSuffix) {
  EXPECT_EQ(Str(Infer1("Gather", {F32({5, 4}), I64({3})})), "f32[3,4]");
  EXPECT_EQ(Str(Infer1("Gather", {F32({5, 4}), I32({2, 2})}, Axis(1))), "f32[5,2,2]");
  EXPECT_EQ(Str(Infer1("Gather", {F32({5, 4, 3}), I64({2, 6})}, Axis(-2))), "f32[5,2,6,3]");
  EXPECT_EQ(Str(Infer1("Gather", {F32({5, 4}), I64({})})), "f32[4]");  // scalar index drops the axis
  EXPECT_EQ(Str(Infer1("Gather", {F32({5}), I64({})})), "f32[]");
  EXPECT_EQ(Str(Infer1("Gather", {TensorType(DType::kBF16, {5, 4}), I64({0})})), "bf16[0,4]");
}

TEST(GatherTest, BatchDims) {
  // Embedding lookup: a vocabulary of 100 rows, a batch of sequences of 7 token ids.
  EXPECT_EQ(Str(Infer1("Gather", {F32({100, 16}), I64({N, 7})})), "f32[N,7,16]");
  EXPECT_EQ(Str(Infer1("Gather", {F32({N, 10}), I64({3})}, Axis(1))), "f32[N,3]");
  EXPECT_EQ(Str(Infer1("Gather", {F32({N, 10}), I64({3})})), "f32[3,10]");
}

TEST(GatherTest, Errors) {
  EXPECT_TRUE(
      FailsWith(Infer1("Gather", {F32({5, 4}), I64({3})}, Axis(2)), "Gather", "axis 2 is out of range for rank 2"));
  EXPECT_TRUE(FailsWith(Infer1("Gather", {F32({}), I64({3})}), "Gather", "'data' is a scalar"));
  EXPECT_TRUE(FailsWith(Infer1("Gather", {F32({5, 4}), F32({3})}), "Gather",
                        "input 1 ('indices') has dtype f32 but one of {i32, i64} is required"));
  EXPECT_TRUE(FailsWith(Infer1("Gather", {F32({5, 4}), TensorType(DType::kI8, {3})}), "Gather", "has dtype i8"));
  EXPECT_TRUE(FailsWith(Infer1("Gather", {F32({5, 4})}), "Gather", "has 1 inputs but 2 expected"));
  EXPECT_EQ(Flops("Gather", {F32({100, 16}), I64({N, 7})}), 7 * 16);
}

// ---------------------------------------------------------------- GatherElements

TEST(GatherElementsTest, OutputHasTheIndicesShape) {
  EXPECT_EQ(Str(Infer1("GatherElements", {F32({3, 4}), I64({3, 2})}, Axis(1))), "f32[3,2]");
  EXPECT_EQ(Str(Infer1("GatherElements", {F32({3, 4}), I32({5, 4})})), "f32[5,4]");  // axis 0 may grow
  EXPECT_EQ(Str(Infer1("GatherElements", {F32({3, 4}), I64({2, 2})}, Axis(-1))), "f32[2,2]");
  EXPECT_EQ(Str(Infer1("GatherElements", {F32({N, 5}), I64({N, 1})}, Axis(1))), "f32[N,1]");
  EXPECT_EQ(Str(Infer1("GatherElements", {TensorType(DType::kI32, {4}), I64({7})})), "i32[7]");
}

TEST(GatherElementsTest, Errors) {
  EXPECT_TRUE(FailsWith(Infer1("GatherElements", {F32({3, 4}), I64({3})}), "GatherElements",
                        "input 'indices' has shape [3] but must have the rank of 'data' [3,4]"));
  EXPECT_TRUE(FailsWith(Infer1("GatherElements", {F32({3, 4}), I64({3, 5})}), "GatherElements",
                        "off axis 0 indices dims must be <= data dims"));
  EXPECT_TRUE(FailsWith(Infer1("GatherElements", {F32({3, 4}), I64({3, 2})}, Axis(2)), "GatherElements",
                        "axis 2 is out of range for rank 2"));
  EXPECT_TRUE(FailsWith(Infer1("GatherElements", {F32({}), I64({})}), "GatherElements", "'data' is a scalar"));
  EXPECT_TRUE(FailsWith(Infer1("GatherElements", {F32({3, 4}), TensorType(DType::kBool, {3, 4})}), "GatherElements",
                        "('indices') has dtype bool"));
}

// ---------------------------------------------------------------- ScatterElements

TEST(ScatterElementsTest, OutputHasTheDataType) {
  EXPECT_EQ(Str(Infer1("ScatterElements", {F32({3, 4}), I64({2, 4}), F32({2, 4})})), "f32[3,4]");
  EXPECT_EQ(Str(Infer1("ScatterElements", {F32({N, 10}), I32({N, 1}), F32({N, 1})}, Axis(-1))), "f32[N,10]");
  for (const char* r : {"none", "add", "mul", "max", "min"}) {
    EXPECT_EQ(Str(Infer1("ScatterElements", {TensorType(DType::kI64, {5}), I64({2}), TensorType(DType::kI64, {2})},
                         {{"reduction", AttrValue::String(r)}})),
              "i64[5]")
        << r;
  }
  EXPECT_EQ(Flops("ScatterElements", {F32({N, 10}), I64({N, 2}), F32({N, 2})}, Axis(1)), 2);
}

TEST(ScatterElementsTest, Errors) {
  EXPECT_TRUE(FailsWith(Infer1("ScatterElements", {F32({3, 4}), I64({2, 4}), F32({2, 3})}), "ScatterElements",
                        "input 'updates' has shape [2,3] but must have the shape of 'indices' [2,4]"));
  EXPECT_TRUE(FailsWith(Infer1("ScatterElements", {F32({3, 4}), I64({2, 4}), TensorType(DType::kF64, {2, 4})}),
                        "ScatterElements", "input 2 ('updates') has dtype f64 but input 0 has f32"));
  EXPECT_TRUE(FailsWith(
      Infer1("ScatterElements", {F32({3, 4}), I64({2, 4}), F32({2, 4})}, {{"reduction", AttrValue::String("sum")}}),
      "ScatterElements", "unknown reduction 'sum' (known: none, add, mul, max, min)"));
  EXPECT_TRUE(FailsWith(Infer1("ScatterElements", {F32({3, 4}), I64({4}), F32({4})}), "ScatterElements",
                        "must have the rank of 'data'"));
  EXPECT_TRUE(FailsWith(Infer1("ScatterElements", {F32({3, 4}), I64({2, 4}), F32({2, 4})}, Axis(-3)), "ScatterElements",
                        "axis -3 is out of range for rank 2"));
  EXPECT_TRUE(FailsWith(Infer1("ScatterElements", {F32({3, 4}), I64({2, 8}), F32({2, 8})}), "ScatterElements",
                        "indices dims must be <= data dims"));
  EXPECT_TRUE(FailsWith(Infer1("ScatterElements", {F32({3, 4}), F32({2, 4}), F32({2, 4})}), "ScatterElements",
                        "('indices') has dtype f32"));
}

// ---------------------------------------------------------------- OneHot

// OneHot of `indices` with a constant depth and f32 values.
absl::StatusOr<TensorType> OneHot(TensorType indices, const Tensor& depth, AttrMap attrs = {},
                                  TensorType values = F32({2})) {
  return Infer1("OneHot", {std::move(indices), depth.type(), std::move(values)}, std::move(attrs),
                {nullptr, &depth, nullptr});
}

TEST(OneHotTest, InsertsDepthAtAxis) {
  const Tensor ten = Tensor::Scalar<int64_t>(10);
  EXPECT_EQ(Str(OneHot(I64({N}), ten)), "f32[N,10]");
  EXPECT_EQ(Str(OneHot(I64({N}), ten, Axis(0))), "f32[10,N]");
  EXPECT_EQ(Str(OneHot(I32({2, 3}), ten, Axis(1))), "f32[2,10,3]");
  EXPECT_EQ(Str(OneHot(I32({2, 3}), ten, Axis(-2))), "f32[2,10,3]");
  EXPECT_EQ(Str(OneHot(I64({}), ten)), "f32[10]");
  // The output has the values' dtype; indices may be any numeric type.
  EXPECT_EQ(Str(OneHot(F32({4}), ten, {}, TensorType(DType::kI32, {2}))), "i32[4,10]");
  // A one-element 1-D depth and a float depth (truncated) are accepted, as in ONNX.
  EXPECT_EQ(Str(OneHot(I64({4}), Tensor::FromVector<int64_t>(Shape{1}, {3}))), "f32[4,3]");
  EXPECT_EQ(Str(OneHot(I64({4}), Tensor::Scalar<float>(3.7f))), "f32[4,3]");
  EXPECT_EQ(Flops("OneHot", {I64({N}), I64({}), F32({2})}, {}, {nullptr, &ten, nullptr}), 10);
}

TEST(OneHotTest, Errors) {
  const Tensor ten = Tensor::Scalar<int64_t>(10);
  EXPECT_TRUE(FailsWith(Infer1("OneHot", {I64({4}), I64({}), F32({2})}), "OneHot",
                        "input 'depth' must be a constant (e.g. produced by a Constant node)"));
  EXPECT_TRUE(FailsWith(OneHot(I64({4}), Tensor::Scalar<int64_t>(0)), "OneHot", "must be in [1, 2^40]"));
  EXPECT_TRUE(
      FailsWith(OneHot(I64({4}), Tensor::Scalar<int64_t>(-3)), "OneHot", "depth is -3 but must be in [1, 2^40]"));
  EXPECT_TRUE(FailsWith(OneHot(I64({4}), Tensor::Scalar<float>(0.5f)), "OneHot", "must be in [1, 2^40]"));
  EXPECT_TRUE(FailsWith(OneHot(I64({4}), Tensor::Scalar<double>(std::nan(""))), "OneHot", "must be in [1, 2^40]"));
  EXPECT_TRUE(FailsWith(OneHot(I64({4}), Tensor::FromVector<int64_t>(Shape{2}, {3, 4})), "OneHot",
                        "input 'depth' must be a scalar (or hold one element) but has shape [2]"));
  EXPECT_TRUE(FailsWith(OneHot(I64({4}), ten, {}, F32({3})), "OneHot",
                        "input 'values' must have shape [2] ([off_value, on_value]) but has shape [3]"));
  EXPECT_TRUE(FailsWith(OneHot(I64({4}), ten, {}, F32({})), "OneHot", "but has shape []"));
  EXPECT_TRUE(FailsWith(OneHot(I64({4}), ten, Axis(2)), "OneHot", "axis 2 is out of range for rank 2"));
  EXPECT_TRUE(FailsWith(OneHot(I64({4}), ten, Axis(-3)), "OneHot", "out of range"));
  EXPECT_TRUE(FailsWith(OneHot(TensorType(DType::kBool, {4}), ten), "OneHot", "('indices') has dtype bool"));
  EXPECT_TRUE(FailsWith(OneHot(I64({4}), Tensor::Scalar<bool>(true)), "OneHot", "('depth') has dtype bool"));
}

}  // namespace
}  // namespace tsr

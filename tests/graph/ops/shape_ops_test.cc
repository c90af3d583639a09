// Shape/dtype inference and FLOP estimates of the shape family: the shape ops
// (graph/ops/shape_ops.cc) and the layout ops (graph/ops/layout_ops.cc).
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
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
using ::tsr::testing::Infer;
using ::tsr::testing::Infer1;
using ::tsr::testing::Str;

constexpr int64_t N = kBatchDim;
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

// A constant 1-D i64 tensor.
Tensor Ints(const std::vector<int64_t>& v) {
  return Tensor::FromVector<int64_t>(Shape{static_cast<int64_t>(v.size())}, v);
}
Tensor Ints32(const std::vector<int32_t>& v) {
  return Tensor::FromVector<int32_t>(Shape{static_cast<int64_t>(v.size())}, v);
}

// The input types and values of a node reading `data` followed by constant inputs
// (std::nullopt: an absent input).
struct NodeInputs {
  std::vector<std::optional<TensorType>> types;
  std::vector<const Tensor*> values;
};
NodeInputs WithConstants(TensorType data, const std::vector<std::optional<Tensor>>& constants) {
  NodeInputs in = {{std::move(data)}, {nullptr}};
  for (const std::optional<Tensor>& c : constants) {
    in.types.push_back(c.has_value() ? std::optional<TensorType>(c->type()) : std::nullopt);
    in.values.push_back(c.has_value() ? &*c : nullptr);
  }
  return in;
}

// Runs `op` on `data` followed by constant inputs.
absl::StatusOr<std::vector<TensorType>> InferAll(absl::string_view op, TensorType data,
                                                 const std::vector<std::optional<Tensor>>& constants,
                                                 AttrMap attrs = {}) {
  NodeInputs in = WithConstants(std::move(data), constants);
  return Infer(op, std::move(in.types), std::move(attrs), std::move(in.values));
}

absl::StatusOr<TensorType> InferOne(absl::string_view op, TensorType data,
                                    const std::vector<std::optional<Tensor>>& constants, AttrMap attrs = {}) {
  absl::StatusOr<std::vector<TensorType>> out = InferAll(op, std::move(data), constants, std::move(attrs));
  if (!out.ok()) return out.status();
  EXPECT_EQ(out->size(), 1u);
  return out->at(0);
}

// FLOPs of `op` on `data` followed by constant inputs, after inference.
int64_t Flops(absl::string_view op, TensorType data, const std::vector<std::optional<Tensor>>& constants,
              AttrMap attrs = {}) {
  NodeInputs in = WithConstants(std::move(data), constants);
  return ::tsr::testing::Flops(op, std::move(in.types), std::move(attrs), std::move(in.values));
}

// ---------------------------------------------------------------- Reshape

TEST(ReshapeTest, StaticShapes) {
  EXPECT_EQ(Str(InferOne("Reshape", F32({2, 3, 4}), {Ints({6, 4})})), "f32[6,4]");
  EXPECT_EQ(Str(InferOne("Reshape", F32({2, 3, 4}), {Ints({-1, 4})})), "f32[6,4]");
  EXPECT_EQ(Str(InferOne("Reshape", F32({2, 3, 4}), {Ints({0, -1})})), "f32[2,12]");
  EXPECT_EQ(Str(InferOne("Reshape", F32({2, 3, 4}), {Ints({0, 0, 4})})), "f32[2,3,4]");
  EXPECT_EQ(Str(InferOne("Reshape", F32({2, 3, 4}), {Ints({-1})})), "f32[24]");
  EXPECT_EQ(Str(InferOne("Reshape", F32({1}), {Ints({})})), "f32[]");
  EXPECT_EQ(Str(InferOne("Reshape", TensorType(DType::kI32, {6}), {Ints({3, 2})})), "i32[3,2]");
}

TEST(ReshapeTest, BatchDimPropagates) {
  EXPECT_EQ(Str(InferOne("Reshape", F32({N, 1, 28, 28}), {Ints({-1, 784})})), "f32[N,784]");
  EXPECT_EQ(Str(InferOne("Reshape", F32({N, 28, 28}), {Ints({0, -1})})), "f32[N,784]");
  EXPECT_EQ(Str(InferOne("Reshape", F32({N, 784}), {Ints({0, 28, 28})})), "f32[N,28,28]");
  EXPECT_EQ(Str(InferOne("Reshape", F32({N, 784}), {Ints({-1, 28, 28})})), "f32[N,28,28]");
  EXPECT_EQ(Str(InferOne("Reshape", F32({4, N}), {Ints({2, 2, -1})})), "f32[2,2,N]");
  EXPECT_EQ(Str(InferOne("Reshape", F32({N, 3, 0}), {Ints({0, 5, 0})})), "f32[N,5,0]");
}

TEST(ReshapeTest, BatchDimErrors) {
  // 2*N and N^2 are not single dims.
  EXPECT_TRUE(FailsWith(InferOne("Reshape", F32({N, 4}), {Ints({2, -1})}), "Reshape", "would stand for 2*N"));
  EXPECT_TRUE(FailsWith(InferOne("Reshape", F32({N, N}), {Ints({-1})}), "Reshape", "would stand for N^2"));
  EXPECT_TRUE(FailsWith(InferOne("Reshape", F32({N, 4}), {Ints({4, 4})}), "Reshape",
                        "cannot reshape [N,4] (4*N elements) to [4,4] (16 elements)"));
  EXPECT_TRUE(FailsWith(InferOne("Reshape", F32({4}), {Ints({-1, 0})}), "Reshape", "copies input dim 1"));
  EXPECT_TRUE(FailsWith(InferOne("Reshape", F32({N, 4}), {Ints({-1, 8})}), "Reshape", "4 is not a multiple of 8"));
  EXPECT_TRUE(FailsWith(InferOne("Reshape", F32({N, N, 4}), {Ints({0, -1})}), "Reshape", "would stand for 4*N"));
}

TEST(ReshapeTest, ShapeErrors) {
  EXPECT_TRUE(FailsWith(InferOne("Reshape", F32({2, 3}), {Ints({4, 2})}), "Reshape",
                        "cannot reshape [2,3] (6 elements) to [4,2] (8 elements)"));
  EXPECT_TRUE(FailsWith(InferOne("Reshape", F32({2, 3}), {Ints({-1, -1})}), "Reshape", "more than one -1"));
  EXPECT_TRUE(FailsWith(InferOne("Reshape", F32({2, 3}), {Ints({-2, -3})}), "Reshape", "holds -2"));
  EXPECT_TRUE(FailsWith(InferOne("Reshape", F32({2, 3}), {Ints({4, -1})}), "Reshape", "6 is not a multiple of 4"));
  EXPECT_TRUE(FailsWith(InferOne("Reshape", F32({2, 3}), {Ints({int64_t{1} << 40, int64_t{1} << 40})}), "Reshape",
                        "more than 2^40 elements"));
}

TEST(ReshapeTest, ZeroSizedAndAllowZero) {
  EXPECT_EQ(Str(InferOne("Reshape", F32({0, 3}), {Ints({3, 0})}, {{"allowzero", AttrValue::Int(1)}})), "f32[3,0]");
  // Without allowzero, 0 copies the input dim.
  EXPECT_EQ(Str(InferOne("Reshape", F32({0, 3}), {Ints({0, 3})})), "f32[0,3]");
  EXPECT_EQ(Str(InferOne("Reshape", F32({0, 3}), {Ints({-1, 3})})), "f32[0,3]");
  EXPECT_EQ(Str(InferOne("Reshape", F32({2, 0}), {Ints({0, -1})})), "f32[2,0]");
  EXPECT_TRUE(FailsWith(InferOne("Reshape", F32({0, 3}), {Ints({0, -1})}, {{"allowzero", AttrValue::Int(1)}}),
                        "Reshape", "holds both 0 and -1"));
  EXPECT_TRUE(FailsWith(InferOne("Reshape", F32({2, 3}), {Ints({0, 6})}, {{"allowzero", AttrValue::Int(1)}}), "Reshape",
                        "(0 elements)"));
  EXPECT_TRUE(FailsWith(InferOne("Reshape", F32({2, 0}), {Ints({-1, 0})}), "Reshape", "hold no elements"));
}

TEST(ReshapeTest, ShapeInputMustBeA1DI64Constant) {
  EXPECT_TRUE(FailsWith(Infer1("Reshape", {F32({2, 3}), I64({2})}), "Reshape",
                        "input 'shape' must be a constant (e.g. produced by a Constant node)"));
  Tensor i32 = Ints32({3, 2});
  EXPECT_TRUE(FailsWith(Infer1("Reshape", {F32({2, 3}), i32.type()}, {}, {nullptr, &i32}), "Reshape",
                        "input 1 ('shape') has dtype i32 but one of {i64} is required"));
  Tensor two_d = Tensor::FromVector<int64_t>(Shape{1, 2}, {3, 2});
  EXPECT_TRUE(FailsWith(InferOne("Reshape", F32({2, 3}), {two_d}), "Reshape", "input 'shape' must be 1-D"));
  EXPECT_TRUE(FailsWith(Infer1("Reshape", {F32({2, 3})}), "Reshape", "has 1 inputs but 2 expected"));
}

TEST(ReshapeTest, CostsNoFlops) { EXPECT_EQ(Flops("Reshape", F32({N, 784}), {Ints({0, 28, 28})}), 0); }

// ---------------------------------------------------------------- Transpose

TEST(TransposeTest, DefaultReversesAxes) {
  EXPECT_EQ(Str(Infer1("Transpose", {F32({2, 3, 4})})), "f32[4,3,2]");
  EXPECT_EQ(Str(Infer1("Transpose", {F32({})})), "f32[]");
}

TEST(TransposeTest, PermAndBatch) {
  AttrMap perm = {{"perm", AttrValue::Ints({0, 2, 1})}};
  EXPECT_EQ(Str(Infer1("Transpose", {F32({N, 3, 4})}, perm)), "f32[N,4,3]");
  EXPECT_EQ(Str(Infer1("Transpose", {F32({N, 3})})), "f32[3,N]");
  EXPECT_EQ(Str(Infer1("Transpose", {TensorType(DType::kBool, {N, 3, 4})}, perm)), "bool[N,4,3]");
}

TEST(TransposeTest, BadPerm) {
  EXPECT_TRUE(FailsWith(Infer1("Transpose", {F32({2, 3, 4})}, {{"perm", AttrValue::Ints({0, 1})}}), "Transpose",
                        "perm [0,1] has 2 entries but the input [2,3,4] has rank 3"));
  EXPECT_TRUE(FailsWith(Infer1("Transpose", {F32({2, 3, 4})}, {{"perm", AttrValue::Ints({0, 1, 1})}}), "Transpose",
                        "repeats axis 1"));
  EXPECT_TRUE(FailsWith(Infer1("Transpose", {F32({2, 3, 4})}, {{"perm", AttrValue::Ints({0, 1, 3})}}), "Transpose",
                        "holds 3, outside [0, 3)"));
  EXPECT_TRUE(FailsWith(Infer1("Transpose", {F32({2, 3, 4})}, {{"perm", AttrValue::Ints({0, 1, -1})}}), "Transpose",
                        "holds -1"));
}

TEST(TransposeTest, FlopsCountCopiedElements) { EXPECT_EQ(Flops("Transpose", F32({N, 3, 4}), {}), 12); }

// ---------------------------------------------------------------- Flatten

TEST(FlattenTest, Axes) {
  EXPECT_EQ(Str(Infer1("Flatten", {F32({2, 3, 4})})), "f32[2,12]");
  EXPECT_EQ(Str(Infer1("Flatten", {F32({2, 3, 4})}, {{"axis", AttrValue::Int(0)}})), "f32[1,24]");
  EXPECT_EQ(Str(Infer1("Flatten", {F32({2, 3, 4})}, {{"axis", AttrValue::Int(3)}})), "f32[24,1]");
  EXPECT_EQ(Str(Infer1("Flatten", {F32({2, 3, 4})}, {{"axis", AttrValue::Int(-1)}})), "f32[6,4]");
  EXPECT_EQ(Str(Infer1("Flatten", {F32({2, 3, 4})}, {{"axis", AttrValue::Int(-3)}})), "f32[1,24]");
  EXPECT_EQ(Str(Infer1("Flatten", {F32({})}, {{"axis", AttrValue::Int(0)}})), "f32[1,1]");
  EXPECT_TRUE(FailsWith(Infer1("Flatten", {F32({2, 3, 4})}, {{"axis", AttrValue::Int(4)}}), "Flatten",
                        "axis 4 is out of range for rank 3 (expected [-3, 3])"));
  EXPECT_TRUE(
      FailsWith(Infer1("Flatten", {F32({2, 3, 4})}, {{"axis", AttrValue::Int(-4)}}), "Flatten", "out of range"));
}

TEST(FlattenTest, BatchInTheLeadingPart) {
  EXPECT_EQ(Str(Infer1("Flatten", {F32({N, 1, 28, 28})})), "f32[N,784]");
  EXPECT_EQ(Str(Infer1("Flatten", {F32({N, 1, 28, 28})}, {{"axis", AttrValue::Int(2)}})), "f32[N,784]");
  EXPECT_EQ(Str(Infer1("Flatten", {F32({3, N})}, {{"axis", AttrValue::Int(1)}})), "f32[3,N]");
  EXPECT_TRUE(FailsWith(Infer1("Flatten", {F32({N, 3, 4})}, {{"axis", AttrValue::Int(2)}}), "Flatten",
                        "a dimension of 3*N elements"));
  EXPECT_TRUE(FailsWith(Infer1("Flatten", {F32({N, 3})}, {{"axis", AttrValue::Int(0)}}), "Flatten",
                        "a dimension of 3*N elements"));
}

// ---------------------------------------------------------------- Squeeze

TEST(SqueezeTest, WithoutAxesSqueezesStaticOnes) {
  EXPECT_EQ(Str(InferOne("Squeeze", F32({1, 3, 1, 2}), {})), "f32[3,2]");
  EXPECT_EQ(Str(InferOne("Squeeze", F32({N, 1, 5}), {})), "f32[N,5]");
  EXPECT_EQ(Str(InferOne("Squeeze", F32({1, 1}), {})), "f32[]");
  EXPECT_EQ(Str(InferOne("Squeeze", F32({1, 3}), {std::nullopt})), "f32[3]");
}

TEST(SqueezeTest, Axes) {
  EXPECT_EQ(Str(InferOne("Squeeze", F32({1, 3, 1, 2}), {Ints({0, -2})})), "f32[3,2]");
  EXPECT_EQ(Str(InferOne("Squeeze", F32({1, 3, 1, 2}), {Ints({2})})), "f32[1,3,2]");
  EXPECT_EQ(Str(InferOne("Squeeze", F32({N, 1, 4}), {Ints({1})})), "f32[N,4]");
  EXPECT_TRUE(FailsWith(InferOne("Squeeze", F32({1, 3}), {Ints({1})}), "Squeeze",
                        "cannot squeeze axis 1 of [1,3]: its size is 3, not 1"));
  EXPECT_TRUE(FailsWith(InferOne("Squeeze", F32({N, 3}), {Ints({0})}), "Squeeze", "it is the batch dimension N"));
  EXPECT_TRUE(FailsWith(InferOne("Squeeze", F32({1, 3}), {Ints({2})}), "Squeeze", "axis 2 is out of range for rank 2"));
  EXPECT_TRUE(FailsWith(InferOne("Squeeze", F32({1, 1}), {Ints({0, -2})}), "Squeeze", "is repeated"));
  EXPECT_TRUE(FailsWith(Infer1("Squeeze", {F32({1, 3}), I64({1})}), "Squeeze",
                        "input 'axes' must be a constant (e.g. produced by a Constant node)"));
  Tensor i32 = Ints32({0});
  EXPECT_TRUE(FailsWith(InferOne("Squeeze", F32({1, 3}), {i32}), "Squeeze", "('axes') has dtype i32"));
}

// ---------------------------------------------------------------- Unsqueeze

TEST(UnsqueezeTest, AxesReferToTheOutput) {
  EXPECT_EQ(Str(InferOne("Unsqueeze", F32({3, 4}), {Ints({0, 3})})), "f32[1,3,4,1]");
  EXPECT_EQ(Str(InferOne("Unsqueeze", F32({3, 4}), {Ints({-1})})), "f32[3,4,1]");
  EXPECT_EQ(Str(InferOne("Unsqueeze", F32({3, 4}), {Ints({1, 2})})), "f32[3,1,1,4]");
  EXPECT_EQ(Str(InferOne("Unsqueeze", F32({}), {Ints({0})})), "f32[1]");
  EXPECT_EQ(Str(InferOne("Unsqueeze", F32({N, 784}), {Ints({1})})), "f32[N,1,784]");
  EXPECT_EQ(Str(InferOne("Unsqueeze", F32({N, 784}), {Ints({})})), "f32[N,784]");
}

TEST(UnsqueezeTest, Errors) {
  EXPECT_TRUE(FailsWith(InferOne("Unsqueeze", F32({3, 4}), {Ints({0, 0})}), "Unsqueeze", "axis 0 is repeated"));
  EXPECT_TRUE(
      FailsWith(InferOne("Unsqueeze", F32({3, 4}), {Ints({0, 4})}), "Unsqueeze", "axis 4 is out of range for rank 4"));
  EXPECT_TRUE(FailsWith(InferOne("Unsqueeze", F32({3, 4}), {Ints({-5})}), "Unsqueeze", "out of range"));
  EXPECT_TRUE(FailsWith(InferOne("Unsqueeze", F32({3, 4}), {Ints(std::vector<int64_t>(31, 0))}), "Unsqueeze",
                        "gives rank 33, above the limit of 32"));
  EXPECT_TRUE(FailsWith(Infer1("Unsqueeze", {F32({3, 4}), I64({1})}), "Unsqueeze",
                        "input 'axes' must be a constant (e.g. produced by a Constant node)"));
  EXPECT_TRUE(FailsWith(InferOne("Unsqueeze", F32({3, 4}), {std::nullopt}), "Unsqueeze", "is required but absent"));
}

// ---------------------------------------------------------------- Concat

TEST(ConcatTest, Shapes) {
  AttrMap axis0 = {{"axis", AttrValue::Int(0)}};
  AttrMap axis1 = {{"axis", AttrValue::Int(-1)}};
  EXPECT_EQ(Str(Infer1("Concat", {F32({2, 3}), F32({4, 3})}, axis0)), "f32[6,3]");
  EXPECT_EQ(Str(Infer1("Concat", {F32({2, 3}), F32({2, 1}), F32({2, 0})}, axis1)), "f32[2,4]");
  EXPECT_EQ(Str(Infer1("Concat", {F32({2, 3})}, axis0)), "f32[2,3]");
  EXPECT_EQ(Str(Infer1("Concat", {F32({N, 3}), F32({N, 5})}, axis1)), "f32[N,8]");
  EXPECT_EQ(Str(Infer1("Concat", {F32({N, 3}), F32({0, 3})}, axis0)), "f32[N,3]");
}

TEST(ConcatTest, Errors) {
  AttrMap axis0 = {{"axis", AttrValue::Int(0)}};
  EXPECT_TRUE(FailsWith(Infer1("Concat", {F32({2, 3}), F32({2, 4})}, axis0), "Concat",
                        "input 1 has shape [2,4] but input 0 has [2,3]; all dims but axis 0 must match"));
  EXPECT_TRUE(FailsWith(Infer1("Concat", {F32({N, 3}), F32({2, 3})}, {{"axis", AttrValue::Int(1)}}), "Concat",
                        "input 1 has shape [2,3] but input 0 has [N,3]"));
  EXPECT_TRUE(FailsWith(Infer1("Concat", {F32({2, 3}), F32({2, 3, 1})}, axis0), "Concat", "(rank 3)"));
  EXPECT_TRUE(FailsWith(Infer1("Concat", {F32({2, 3}), F32({2, 3})}, {{"axis", AttrValue::Int(2)}}), "Concat",
                        "axis 2 is out of range for rank 2"));
  EXPECT_TRUE(FailsWith(Infer1("Concat", {F32({N, 3}), F32({2, 3})}, axis0), "Concat", "N+2"));
  EXPECT_TRUE(FailsWith(Infer1("Concat", {F32({N, 3}), F32({N, 3})}, axis0), "Concat", "2*N"));
  EXPECT_TRUE(FailsWith(Infer1("Concat", {F32({}), F32({})}, axis0), "Concat", "cannot concatenate scalars"));
  EXPECT_TRUE(FailsWith(Infer1("Concat", {F32({2}), F32({2})}), "Concat", "required attribute 'axis'"));
  EXPECT_TRUE(FailsWith(Infer1("Concat", {F32({2}), I64({2})}, axis0), "Concat", "they must match"));
  EXPECT_TRUE(FailsWith(Infer1("Concat", {}, axis0), "Concat", "at least 1 expected"));
}

// ---------------------------------------------------------------- Split

TEST(SplitTest, SplitSizes) {
  EXPECT_EQ(Str(InferAll("Split", F32({6, 4}), {Ints({2, 4})})), "f32[2,4], f32[4,4]");
  EXPECT_EQ(Str(InferAll("Split", F32({N, 6}), {Ints({1, 0, 5})}, {{"axis", AttrValue::Int(-1)}})),
            "f32[N,1], f32[N,0], f32[N,5]");
  EXPECT_TRUE(FailsWith(InferAll("Split", F32({6, 4}), {Ints({2, 3})}), "Split",
                        "input 'split' [2,3] sums to 5 but axis 0 of [6,4] has size 6"));
  EXPECT_TRUE(FailsWith(InferAll("Split", F32({6, 4}), {Ints({7, -1})}), "Split", "holds the invalid size -1"));
  EXPECT_TRUE(FailsWith(InferAll("Split", F32({6, 4}), {Ints({})}), "Split", "input 'split' is empty"));
  const int64_t big = int64_t{1} << 40;
  EXPECT_TRUE(FailsWith(InferAll("Split", F32({6, 4}), {Ints({big, big})}), "Split", "sums to more than 2^40"));
  EXPECT_TRUE(FailsWith(InferAll("Split", F32({N, 4}), {Ints({2, 2})}), "Split", "cannot split the batch dimension N"));
  EXPECT_TRUE(FailsWith(Infer("Split", {F32({6}), I64({2})}), "Split",
                        "input 'split' must be a constant (e.g. produced by a Constant node)"));
  EXPECT_TRUE(FailsWith(InferAll("Split", F32({6}), {Ints32({3, 3})}), "Split", "('split') has dtype i32"));
  EXPECT_TRUE(FailsWith(InferAll("Split", F32({6}), {Ints({3, 3})}, {{"axis", AttrValue::Int(1)}}), "Split",
                        "axis 1 is out of range for rank 1"));
}

TEST(SplitTest, NumOutputsLikeOnnx18) {
  auto n = [](int64_t k) { return AttrMap{{"num_outputs", AttrValue::Int(k)}}; };
  EXPECT_EQ(Str(InferAll("Split", F32({6, 4}), {}, n(3))), "f32[2,4], f32[2,4], f32[2,4]");
  // Uneven: chunks of ceil(7/3) = 3, the last one smaller.
  EXPECT_EQ(Str(InferAll("Split", F32({7}), {}, n(3))), "f32[3], f32[3], f32[1]");
  EXPECT_EQ(Str(InferAll("Split", F32({4}), {}, n(3))), "f32[2], f32[2], f32[0]");
  EXPECT_EQ(Str(InferAll("Split", F32({N, 10}), {}, {{"num_outputs", AttrValue::Int(4)}, {"axis", AttrValue::Int(1)}})),
            "f32[N,3], f32[N,3], f32[N,3], f32[N,1]");
  EXPECT_EQ(Str(InferAll("Split", F32({N, 10}), {}, n(1))), "f32[N,10]");
  EXPECT_TRUE(FailsWith(InferAll("Split", F32({5}), {}, n(4)), "Split", "with a last chunk >= 0"));
  EXPECT_TRUE(FailsWith(InferAll("Split", F32({2}), {}, n(3)), "Split", "num_outputs 3 is larger than axis 0"));
  EXPECT_TRUE(FailsWith(InferAll("Split", F32({2}), {}, n(0)), "Split", "must be >= 1"));
  EXPECT_TRUE(FailsWith(InferAll("Split", F32({N, 4}), {}, n(2)), "Split", "cannot split the batch dimension N"));
  EXPECT_TRUE(FailsWith(InferAll("Split", F32({6}), {Ints({3, 3})}, n(2)), "Split", "not both"));
  EXPECT_TRUE(FailsWith(InferAll("Split", F32({6}), {}), "Split", "needs input 'split' or attribute 'num_outputs'"));
  EXPECT_TRUE(FailsWith(InferAll("Split", F32({}), {}, n(1)), "Split", "cannot split a scalar"));
}

TEST(SplitTest, FlopsCountAllOutputs) {
  EXPECT_EQ(Flops("Split", F32({N, 6}), {Ints({2, 4})}, {{"axis", AttrValue::Int(1)}}), 6);
}

// ---------------------------------------------------------------- Slice

// Slices [10] (or `data`) with the given per-axis values; empty axes/steps = absent.
absl::StatusOr<TensorType> Slice1(std::vector<int64_t> starts, std::vector<int64_t> ends,
                                  std::optional<std::vector<int64_t>> steps = std::nullopt,
                                  TensorType data = F32({10})) {
  std::vector<std::optional<Tensor>> inputs = {Ints(starts), Ints(ends)};
  if (steps.has_value()) {
    inputs.push_back(std::nullopt);
    inputs.push_back(Ints(*steps));
  }
  return InferOne("Slice", std::move(data), inputs);
}

TEST(SliceTest, BasicAndNegativeIndices) {
  EXPECT_EQ(Str(Slice1({2}, {5})), "f32[3]");
  EXPECT_EQ(Str(Slice1({-3}, {-1})), "f32[2]");
  EXPECT_EQ(Str(Slice1({0}, {-1})), "f32[9]");
  EXPECT_EQ(Str(Slice1({1}, {10}, {{3}})), "f32[3]");  // 1, 4, 7
  EXPECT_EQ(Str(Slice1({0}, {10}, {{3}})), "f32[4]");  // 0, 3, 6, 9
}

TEST(SliceTest, Clamping) {
  EXPECT_EQ(Str(Slice1({-100}, {100})), "f32[10]");
  EXPECT_EQ(Str(Slice1({0}, {kMax})), "f32[10]");
  EXPECT_EQ(Str(Slice1({kMin}, {kMax})), "f32[10]");
  EXPECT_EQ(Str(Slice1({0}, {kMax}, {{kMax}})), "f32[1]");
  EXPECT_EQ(Str(Slice1({12}, {20})), "f32[0]");
}

TEST(SliceTest, NegativeSteps) {
  EXPECT_EQ(Str(Slice1({-1}, {kMin}, {{-1}})), "f32[10]");  // the whole axis reversed
  EXPECT_EQ(Str(Slice1({kMax}, {kMin}, {{-1}})), "f32[10]");
  EXPECT_EQ(Str(Slice1({9}, {0}, {{-2}})), "f32[5]");     // 9, 7, 5, 3, 1
  EXPECT_EQ(Str(Slice1({8}, {-100}, {{-3}})), "f32[3]");  // 8, 5, 2
  EXPECT_EQ(Str(Slice1({5}, {5}, {{-1}})), "f32[0]");
  EXPECT_EQ(Str(Slice1({9}, {-1}, {{-1}})), "f32[0]");  // end -1 means index 9
  EXPECT_EQ(Str(Slice1({-1}, {kMin}, {{kMin}})), "f32[1]");
}

TEST(SliceTest, EmptyResults) {
  EXPECT_EQ(Str(Slice1({5}, {2})), "f32[0]");
  EXPECT_EQ(Str(Slice1({2}, {5}, {{-1}})), "f32[0]");
  EXPECT_EQ(Str(Slice1({0}, {5}, std::nullopt, F32({0}))), "f32[0]");
  EXPECT_EQ(Str(Slice1({0}, {5}, {{-1}}, F32({0}))), "f32[0]");
}

TEST(SliceTest, AxesAndMultipleAxes) {
  EXPECT_EQ(Str(InferOne("Slice", F32({4, 10}), {Ints({1}), Ints({3}), Ints({-1})})), "f32[4,2]");
  EXPECT_EQ(Str(InferOne("Slice", F32({4, 10, 5}), {Ints({0, 1}), Ints({1, 5}), Ints({2, 0}), Ints({1, 2})})),
            "f32[2,10,1]");
  // Axes given, steps absent.
  EXPECT_EQ(Str(InferOne("Slice", F32({4, 10}), {Ints({1}), Ints({3}), Ints({0}), std::nullopt})), "f32[2,10]");
  // i32 indices are allowed (all four the same type).
  EXPECT_EQ(Str(InferOne("Slice", F32({4, 10}), {Ints32({1}), Ints32({3}), Ints32({1}), Ints32({2})})), "f32[4,1]");
}

TEST(SliceTest, BatchDim) {
  EXPECT_EQ(Str(InferOne("Slice", F32({N, 10}), {Ints({2}), Ints({5}), Ints({1})})), "f32[N,3]");
  EXPECT_EQ(Str(Slice1({0}, {kMax}, std::nullopt, F32({N, 10}))), "f32[N,10]");
  EXPECT_EQ(Str(Slice1({-1}, {kMin}, {{-1}}, F32({N, 10}))), "f32[N,10]");
  EXPECT_TRUE(FailsWith(Slice1({0}, {-1}, std::nullopt, F32({N, 10})), "Slice",
                        "slicing the batch dimension N (axis 0 of [N,10]) with start 0, end -1, step 1"));
  EXPECT_TRUE(FailsWith(Slice1({0}, {kMax}, {{2}}, F32({N, 10})), "Slice", "only a full slice keeps it"));
  EXPECT_TRUE(FailsWith(Slice1({0}, {4}, std::nullopt, F32({N, 10})), "Slice", "depends on the batch"));
}

TEST(SliceTest, Errors) {
  EXPECT_TRUE(FailsWith(Slice1({0}, {5}, {{0}}), "Slice", "steps [0] holds 0"));
  EXPECT_TRUE(FailsWith(Slice1({0, 1}, {5}), "Slice", "same length but have 2, 1, 2 and 2"));
  EXPECT_TRUE(FailsWith(InferOne("Slice", F32({4, 10}), {Ints({0, 0}), Ints({1, 1}), Ints({1, -1})}), "Slice",
                        "input 'axes' [1,-1] repeats axis -1"));
  EXPECT_TRUE(FailsWith(InferOne("Slice", F32({4, 10}), {Ints({0}), Ints({1}), Ints({2})}), "Slice",
                        "input 'axes': axis 2 is out of range for rank 2"));
  EXPECT_TRUE(FailsWith(Slice1({0, 0}, {1, 1}), "Slice", "axis 1 is out of range for rank 1"));
  EXPECT_TRUE(FailsWith(Infer1("Slice", {F32({10}), I64({1}), I64({1})}), "Slice",
                        "input 'starts' must be a constant (e.g. produced by a Constant node)"));
  Tensor starts = Ints({0});
  EXPECT_TRUE(FailsWith(Infer1("Slice", {F32({10}), I64({1}), I64({1})}, {}, {nullptr, &starts}), "Slice",
                        "input 'ends' must be a constant"));
  EXPECT_TRUE(FailsWith(InferOne("Slice", F32({10}), {Ints({0}), Ints32({1})}), "Slice",
                        "input 2 ('ends') has dtype i32 but input 1 has i64"));
  Tensor f = Tensor::FromVector<float>(Shape{1}, {0});
  EXPECT_TRUE(
      FailsWith(InferOne("Slice", F32({10}), {f, f}), "Slice", "has dtype f32 but one of {i32, i64} is required"));
}

// ---------------------------------------------------------------- Expand

TEST(ExpandTest, BidirectionalBroadcast) {
  EXPECT_EQ(Str(InferOne("Expand", F32({3, 1}), {Ints({2, 1, 6})})), "f32[2,3,6]");
  EXPECT_EQ(Str(InferOne("Expand", F32({2, 3}), {Ints({3})})), "f32[2,3]");
  EXPECT_EQ(Str(InferOne("Expand", F32({2, 3}), {Ints({1, 1})})), "f32[2,3]");
  EXPECT_EQ(Str(InferOne("Expand", F32({N, 1}), {Ints({1, 5})})), "f32[N,5]");
  EXPECT_EQ(Str(InferOne("Expand", F32({1}), {Ints({0})})), "f32[0]");
  EXPECT_TRUE(FailsWith(InferOne("Expand", F32({2, 3}), {Ints({4})}), "Expand", "cannot be broadcast"));
  EXPECT_TRUE(FailsWith(InferOne("Expand", F32({2, 3}), {Ints({-1, 3})}), "Expand", "holds the negative dim -1"));
  EXPECT_TRUE(FailsWith(Infer1("Expand", {F32({2, 3}), I64({1})}), "Expand",
                        "input 'shape' must be a constant (e.g. produced by a Constant node)"));
  EXPECT_EQ(Flops("Expand", F32({N, 1}), {Ints({1, 5})}), 5);
}

// ---------------------------------------------------------------- Pad

absl::StatusOr<TensorType> Pad(TensorType data, std::vector<int64_t> pads, const std::string& mode = "constant",
                               std::optional<std::vector<int64_t>> axes = std::nullopt) {
  std::vector<std::optional<Tensor>> inputs = {Ints(pads)};
  if (axes.has_value()) {
    inputs.push_back(std::nullopt);
    inputs.push_back(Ints(*axes));
  }
  return InferOne("Pad", std::move(data), inputs, {{"mode", AttrValue::String(mode)}});
}

TEST(PadTest, ConstantAndNegativePads) {
  EXPECT_EQ(Str(Pad(F32({2, 3}), {1, 2, 1, 2})), "f32[4,7]");
  EXPECT_EQ(Str(Pad(F32({4, 5}), {0, -1, 0, -1})), "f32[4,3]");
  EXPECT_EQ(Str(Pad(F32({4, 5}), {-2, 0, -2, 0})), "f32[0,5]");
  EXPECT_TRUE(FailsWith(Pad(F32({4, 5}), {-3, 0, -2, 0}), "Pad", "give the negative size -1"));
  // Run with the default mode and a scalar constant_value.
  Tensor zero = Tensor::Scalar<float>(0);
  EXPECT_EQ(Str(InferOne("Pad", F32({2, 3}), {Ints({0, 1, 0, 1}), zero})), "f32[2,5]");
}

TEST(PadTest, Axes) {
  EXPECT_EQ(Str(Pad(F32({2, 3}), {1, 2}, "constant", {{1}})), "f32[2,6]");
  EXPECT_EQ(Str(Pad(F32({2, 3}), {1, 2}, "constant", {{-2}})), "f32[5,3]");
  EXPECT_TRUE(FailsWith(Pad(F32({2, 3}), {1, 2, 3}, "constant", {{1}}), "Pad",
                        "input 'pads' [1,2,3] has 3 entries but 1 padded axes need 2"));
  EXPECT_TRUE(FailsWith(Pad(F32({2, 3}), {1, 2}), "Pad", "2 padded axes need 4"));
  EXPECT_TRUE(FailsWith(Pad(F32({2, 3}), {1, 1, 1, 1}, "constant", {{1, -1}}), "Pad", "repeats axis -1"));
  EXPECT_TRUE(FailsWith(Pad(F32({2, 3}), {1, 1}, "constant", {{2}}), "Pad", "axis 2 is out of range"));
}

TEST(PadTest, Modes) {
  EXPECT_EQ(Str(Pad(F32({2, 3}), {1, 2, 1, 2}, "reflect")), "f32[4,7]");
  EXPECT_EQ(Str(Pad(F32({2, 3}), {1, 1, 0, 0}, "edge")), "f32[3,4]");
  EXPECT_EQ(Str(Pad(F32({2, 3}), {3, 5, 3, 5}, "wrap")), "f32[8,13]");
  EXPECT_TRUE(FailsWith(Pad(F32({2, 3}), {0, 3, 0, 0}, "reflect"), "Pad",
                        "reflect padding of 3 on axis 1 of [2,3] needs pads < the axis size 3"));
  EXPECT_TRUE(FailsWith(Pad(F32({0, 3}), {1, 0, 0, 0}, "edge"), "Pad", "edge padding needs a non-empty axis"));
  EXPECT_TRUE(FailsWith(Pad(F32({0, 3}), {1, 0, 0, 0}, "wrap"), "Pad", "wrap padding needs a non-empty axis"));
  // Cropping an empty axis by nothing and padding another one is fine in every mode.
  EXPECT_EQ(Str(Pad(F32({0, 3}), {0, 1, 0, 1}, "edge")), "f32[0,5]");
  EXPECT_TRUE(FailsWith(Pad(F32({2, 3}), {0, 0, 0, 0}, "symmetric"), "Pad",
                        "unknown mode 'symmetric' (known: constant, reflect, edge, wrap)"));
}

TEST(PadTest, BatchAndInputChecks) {
  EXPECT_EQ(Str(Pad(F32({N, 3}), {0, 1, 0, 1})), "f32[N,5]");
  EXPECT_EQ(Str(Pad(F32({N, 3}), {1, 1}, "reflect", {{1}})), "f32[N,5]");
  EXPECT_TRUE(FailsWith(Pad(F32({N, 3}), {1, 0, 0, 0}), "Pad", "cannot pad the batch dimension N"));
  EXPECT_TRUE(FailsWith(Infer1("Pad", {F32({2}), I64({2})}), "Pad",
                        "input 'pads' must be a constant (e.g. produced by a Constant node)"));
  EXPECT_TRUE(FailsWith(InferOne("Pad", F32({2}), {Ints32({1, 1})}), "Pad", "('pads') has dtype i32"));
  Tensor vec = Tensor::FromVector<float>(Shape{2}, {0, 0});
  EXPECT_TRUE(FailsWith(InferOne("Pad", F32({2}), {Ints({1, 1}), vec}), "Pad",
                        "input 'constant_value' must be a scalar but has shape [2]"));
  Tensor int_zero = Tensor::Scalar<int64_t>(0);
  EXPECT_TRUE(
      FailsWith(InferOne("Pad", F32({2}), {Ints({1, 1}), int_zero}), "Pad", "('constant_value') has dtype i64"));
  EXPECT_EQ(Flops("Pad", F32({N, 3}), {Ints({0, 1, 0, 1})}), 5);
}

// ---------------------------------------------------------------- Tile

TEST(TileTest, Repeats) {
  EXPECT_EQ(Str(InferOne("Tile", F32({2, 3}), {Ints({2, 3})})), "f32[4,9]");
  EXPECT_EQ(Str(InferOne("Tile", F32({2, 3}), {Ints({0, 1})})), "f32[0,3]");
  EXPECT_EQ(Str(InferOne("Tile", F32({N, 3}), {Ints({1, 4})})), "f32[N,12]");
  EXPECT_EQ(Str(InferOne("Tile", F32({N, 3}), {Ints({0, 4})})), "f32[0,12]");
  EXPECT_TRUE(FailsWith(InferOne("Tile", F32({N, 3}), {Ints({2, 1})}), "Tile", "the result would be 2*N"));
  EXPECT_TRUE(
      FailsWith(InferOne("Tile", F32({2, 3}), {Ints({2})}), "Tile", "has 1 entries but the input [2,3] has rank 2"));
  EXPECT_TRUE(FailsWith(InferOne("Tile", F32({2, 3}), {Ints({2, -1})}), "Tile", "holds the negative -1"));
  EXPECT_TRUE(
      FailsWith(InferOne("Tile", F32({2, 3}), {Ints({int64_t{1} << 40, 1})}), "Tile", "exceeds the size limit"));
  EXPECT_TRUE(FailsWith(Infer1("Tile", {F32({2}), I64({1})}), "Tile",
                        "input 'repeats' must be a constant (e.g. produced by a Constant node)"));
}

// ---------------------------------------------------------------- Shape

TEST(ShapeOpTest, StartAndEnd) {
  auto shape = [](AttrMap attrs) { return Str(Infer1("Shape", {F32({N, 3, 4})}, std::move(attrs))); };
  EXPECT_EQ(shape({}), "i64[3]");
  EXPECT_EQ(shape({{"start", AttrValue::Int(1)}}), "i64[2]");
  EXPECT_EQ(shape({{"start", AttrValue::Int(-1)}}), "i64[1]");
  EXPECT_EQ(shape({{"end", AttrValue::Int(-1)}}), "i64[2]");
  EXPECT_EQ(shape({{"start", AttrValue::Int(-10)}, {"end", AttrValue::Int(10)}}), "i64[3]");
  EXPECT_EQ(shape({{"start", AttrValue::Int(2)}, {"end", AttrValue::Int(1)}}), "i64[0]");
  EXPECT_EQ(Str(Infer1("Shape", {TensorType(DType::kBool, {})})), "i64[0]");
}

// ---------------------------------------------------------------- Range

template <typename T>
absl::StatusOr<TensorType> Range(T start, T limit, T delta) {
  Tensor s = Tensor::Scalar<T>(start), l = Tensor::Scalar<T>(limit), d = Tensor::Scalar<T>(delta);
  return Infer1("Range", {s.type(), l.type(), d.type()}, {}, {&s, &l, &d});
}

TEST(RangeTest, Lengths) {
  EXPECT_EQ(Str(Range<int64_t>(0, 10, 3)), "i64[4]");
  EXPECT_EQ(Str(Range<int64_t>(0, 9, 3)), "i64[3]");
  EXPECT_EQ(Str(Range<int32_t>(10, 4, -2)), "i32[3]");
  EXPECT_EQ(Str(Range<int64_t>(5, 0, 1)), "i64[0]");
  EXPECT_EQ(Str(Range<float>(1, 0, -0.3f)), "f32[4]");
  EXPECT_EQ(Str(Range<float>(0, 1, 0.1f)), "f32[10]");
  EXPECT_EQ(Str(Range<double>(0, 1, 0.25)), "f64[4]");

  Tensor start = Tensor::Scalar<int64_t>(0), limit = Tensor::Scalar<int64_t>(10), delta = Tensor::Scalar<int64_t>(3);
  EXPECT_EQ(Flops("Range", {I64({}), I64({}), I64({})}, {}, {&start, &limit, &delta}), 4);
}

TEST(RangeTest, Errors) {
  EXPECT_TRUE(FailsWith(Range<int64_t>(0, 10, 0), "Range", "delta is 0"));
  EXPECT_TRUE(FailsWith(Range<double>(0, std::nan(""), 1), "Range", "above the limit of one tensor"));
  EXPECT_EQ(Str(Range<double>(0, -HUGE_VAL, 1)), "f64[0]");
  EXPECT_TRUE(FailsWith(Range<int64_t>(kMin, kMax, kMax), "Range", "is too long"));
  EXPECT_TRUE(FailsWith(Range<int64_t>(0, kMax, 1), "Range", "above the limit of one tensor"));
  EXPECT_TRUE(FailsWith(Range<float>(0, 1, 1e-20f), "Range", "above the limit of one tensor"));
  EXPECT_TRUE(FailsWith(Infer1("Range", {I64({}), I64({}), I64({})}), "Range",
                        "input 'start' must be a constant (e.g. produced by a Constant node)"));
  Tensor one = Tensor::Scalar<int64_t>(1);
  Tensor vec = Ints({1});
  EXPECT_TRUE(FailsWith(Infer1("Range", {I64({}), I64({1}), I64({})}, {}, {&one, &vec, &one}), "Range",
                        "input 'limit' must be a scalar but has shape [1]"));
  Tensor f = Tensor::Scalar<float>(1);
  EXPECT_TRUE(
      FailsWith(Infer1("Range", {I64({}), F32({}), I64({})}, {}, {&one, &f, &one}), "Range", "they must match"));
  Tensor b = Tensor::Scalar<bool>(true);
  EXPECT_TRUE(FailsWith(Infer1("Range", {b.type(), b.type(), b.type()}, {}, {&b, &b, &b}), "Range", "has dtype bool"));
}

}  // namespace
}  // namespace tsr

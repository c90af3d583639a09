// Shape/dtype inference of the ONNX shape, layout, indexing, source and resize ops
// added beside the core set: ConstantOfShape, EyeLike, Size, Trilu, DepthToSpace,
// SpaceToDepth, ReverseSequence, GatherND, ScatterND, Compress, NonZero, Resize and
// ResizeGrad. Inputs whose values set an output shape must be constants; the tests
// check the error when they are not.
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
using ::tsr::testing::T;

constexpr int64_t N = kBatchDim;

Tensor Ints(const std::vector<int64_t>& v) {
  return Tensor::FromVector<int64_t>(Shape{static_cast<int64_t>(v.size())}, v);
}
Tensor Floats(const std::vector<float>& v) {
  return Tensor::FromVector<float>(Shape{static_cast<int64_t>(v.size())}, v);
}
Tensor Bools(const std::vector<bool>& v) {
  Tensor t(DType::kBool, Shape{static_cast<int64_t>(v.size())});
  for (size_t i = 0; i < v.size(); ++i) t.data<bool>()[i] = v[i];
  return t;
}

TEST(ConstantOfShapeTest, ShapeFromConstantAndDTypeFromValue) {
  const Tensor shape = Ints({2, 3});
  EXPECT_EQ(Str(Infer1("ConstantOfShape", {shape.type()}, {}, {&shape})), "f32[2,3]");
  AttrMap attrs = {{"value", AttrValue::FromTensor(Tensor::FromVector<int32_t>(Shape{1}, {7}))}};
  EXPECT_EQ(Str(Infer1("ConstantOfShape", {shape.type()}, attrs, {&shape})), "i32[2,3]");
  const Tensor empty = Ints({});
  EXPECT_EQ(Str(Infer1("ConstantOfShape", {empty.type()}, {}, {&empty})), "f32[]");
  const Tensor zero = Ints({0, 4});
  EXPECT_EQ(Str(Infer1("ConstantOfShape", {zero.type()}, {}, {&zero})), "f32[0,4]");
}

TEST(ConstantOfShapeTest, Errors) {
  EXPECT_TRUE(FailsWith(Infer1("ConstantOfShape", {I64({2})}), "ConstantOfShape", "must be a constant"));
  const Tensor negative = Ints({2, -1});
  EXPECT_TRUE(FailsWith(Infer1("ConstantOfShape", {negative.type()}, {}, {&negative}), "ConstantOfShape", "negative"));
  const Tensor shape = Ints({2});
  AttrMap two = {{"value", AttrValue::FromTensor(Floats({1, 2}))}};
  EXPECT_TRUE(FailsWith(Infer1("ConstantOfShape", {shape.type()}, two, {&shape}), "ConstantOfShape", "one element"));
}

TEST(EyeLikeTest, KeepsShapeAndTakesDType) {
  EXPECT_EQ(Str(Infer1("EyeLike", {F32({3, 4})})), "f32[3,4]");
  EXPECT_EQ(Str(Infer1("EyeLike", {F32({3, 4})}, {{"dtype", AttrValue::Type(DType::kI32)}, {"k", AttrValue::Int(9)}})),
            "i32[3,4]");
  EXPECT_TRUE(FailsWith(Infer1("EyeLike", {F32({3})}), "EyeLike", "2-D"));
}

TEST(SizeTest, I64Scalar) {
  EXPECT_EQ(Str(Infer1("Size", {F32({N, 3})})), "i64[]");
  EXPECT_EQ(Str(Infer1("Size", {T(DType::kBool, Shape{})})), "i64[]");
}

TEST(TriluTest, KeepsTypeAndChecksRank) {
  EXPECT_EQ(Str(Infer1("Trilu", {F32({N, 3, 4}), I64({})})), "f32[N,3,4]");
  EXPECT_TRUE(FailsWith(Infer1("Trilu", {F32({4})}), "Trilu", "rank >= 2"));
  EXPECT_TRUE(FailsWith(Infer1("Trilu", {F32({3, 4}), I64({2})}), "Trilu", "one value"));
  EXPECT_TRUE(FailsWith(Infer1("Trilu", {F32({3, 4})}, {{"upper", AttrValue::Int(2)}}), "Trilu", "upper"));
}

TEST(DepthToSpaceTest, ShapesBothWays) {
  AttrMap b2 = {{"blocksize", AttrValue::Int(2)}};
  EXPECT_EQ(Str(Infer1("DepthToSpace", {F32({N, 8, 2, 3})}, b2)), "f32[N,2,4,6]");
  AttrMap crd = {{"blocksize", AttrValue::Int(2)}, {"mode", AttrValue::String("CRD")}};
  EXPECT_EQ(Str(Infer1("DepthToSpace", {F32({1, 4, 2, 3})}, crd)), "f32[1,1,4,6]");
  EXPECT_EQ(Str(Infer1("SpaceToDepth", {F32({N, 2, 4, 6})}, b2)), "f32[N,8,2,3]");
  EXPECT_TRUE(FailsWith(Infer1("DepthToSpace", {F32({1, 6, 2, 3})}, b2), "DepthToSpace", "multiple of blocksize^2"));
  EXPECT_TRUE(FailsWith(Infer1("SpaceToDepth", {F32({1, 2, 3, 4})}, b2), "SpaceToDepth", "multiples of blocksize"));
  EXPECT_TRUE(FailsWith(Infer1("DepthToSpace", {F32({4, 2, 3})}, b2), "DepthToSpace", "4-D"));
  AttrMap bad = {{"blocksize", AttrValue::Int(2)}, {"mode", AttrValue::String("XYZ")}};
  EXPECT_TRUE(FailsWith(Infer1("DepthToSpace", {F32({1, 4, 2, 3})}, bad), "DepthToSpace", "unknown mode"));
  EXPECT_TRUE(FailsWith(Infer1("SpaceToDepth", {F32({1, 2, 4, 4})}, {{"blocksize", AttrValue::Int(0)}}), "SpaceToDepth",
                        "blocksize is 0"));
}

TEST(ReverseSequenceTest, LensMatchBatchAxis) {
  EXPECT_EQ(Str(Infer1("ReverseSequence", {F32({5, 3, 2}), I64({3})})), "f32[5,3,2]");
  AttrMap swapped = {{"time_axis", AttrValue::Int(1)}, {"batch_axis", AttrValue::Int(0)}};
  EXPECT_EQ(Str(Infer1("ReverseSequence", {F32({N, 4}), I64({N})}, swapped)), "f32[N,4]");
  EXPECT_TRUE(FailsWith(Infer1("ReverseSequence", {F32({5, 3}), I64({5})}), "ReverseSequence", "sequence_lens"));
  AttrMap same = {{"time_axis", AttrValue::Int(1)}, {"batch_axis", AttrValue::Int(1)}};
  EXPECT_TRUE(FailsWith(Infer1("ReverseSequence", {F32({5, 3}), I64({3})}, same), "ReverseSequence", "0 and 1"));
}

TEST(GatherNDTest, Shapes) {
  EXPECT_EQ(Str(Infer1("GatherND", {F32({2, 3, 4}), I64({5, 2})})), "f32[5,4]");
  EXPECT_EQ(Str(Infer1("GatherND", {F32({2, 3, 4}), I64({5, 3})})), "f32[5]");
  EXPECT_EQ(Str(Infer1("GatherND", {F32({N, 3, 4}), I64({N, 1})}, {{"batch_dims", AttrValue::Int(1)}})), "f32[N,4]");
  EXPECT_TRUE(FailsWith(Infer1("GatherND", {F32({2, 3}), I64({5, 3})}), "GatherND", "index length"));
  EXPECT_TRUE(FailsWith(Infer1("GatherND", {F32({2, 3}), I64({3, 1})}, {{"batch_dims", AttrValue::Int(1)}}), "GatherND",
                        "must match"));
  EXPECT_EQ(Flops("GatherND", {F32({2, 3, 4}), I64({5, 2})}), 20);
}

TEST(ScatterNDTest, UpdatesShapeAndReduction) {
  EXPECT_EQ(Str(Infer1("ScatterND", {F32({4, 3}), I64({2, 1}), F32({2, 3})})), "f32[4,3]");
  EXPECT_TRUE(FailsWith(Infer1("ScatterND", {F32({4, 3}), I64({2, 1}), F32({2, 4})}), "ScatterND", "[2,3]"));
  EXPECT_TRUE(
      FailsWith(Infer1("ScatterND", {F32({4, 3}), I64({2, 1}), F32({2, 3})}, {{"reduction", AttrValue::String("avg")}}),
                "ScatterND", "unknown reduction"));
  EXPECT_EQ(Flops("ScatterND", {F32({4, 3}), I64({2, 1}), F32({2, 3})}), 6);
}

TEST(CompressTest, ConditionMustBeConstant) {
  const Tensor cond = Bools({false, true, true});
  EXPECT_EQ(Str(Infer1("Compress", {F32({N, 3}), cond.type()}, {{"axis", AttrValue::Int(1)}}, {nullptr, &cond})),
            "f32[N,2]");
  EXPECT_EQ(Str(Infer1("Compress", {F32({2, 2}), cond.type()}, {}, {nullptr, &cond})), "f32[2]");
  EXPECT_TRUE(FailsWith(Infer1("Compress", {F32({2, 3}), cond.type()}, {{"axis", AttrValue::Int(1)}}), "Compress",
                        "must be a constant"));
  EXPECT_TRUE(FailsWith(Infer1("Compress", {F32({2, 2}), cond.type()}, {{"axis", AttrValue::Int(0)}}, {nullptr, &cond}),
                        "Compress", "only 2"));
  EXPECT_TRUE(
      FailsWith(Infer1("Compress", {F32({N, 3}), cond.type()}, {}, {nullptr, &cond}), "Compress", "batch dimension"));
}

TEST(NonZeroTest, CountsTheConstant) {
  const Tensor x = Tensor::FromVector<float>(Shape{2, 2}, {1, 0, 0, 3});
  EXPECT_EQ(Str(Infer1("NonZero", {x.type()}, {}, {&x})), "i64[2,2]");
  EXPECT_TRUE(FailsWith(Infer1("NonZero", {F32({2, 2})}), "NonZero", "must be a constant"));
}

// Resize with constant scales (input 2) or sizes (input 3).
absl::StatusOr<TensorType> InferResize(TensorType x, std::optional<Tensor> scales, std::optional<Tensor> sizes,
                                       AttrMap attrs = {}) {
  std::vector<std::optional<TensorType>> types = {x, std::nullopt, std::nullopt, std::nullopt};
  std::vector<const Tensor*> values = {nullptr, nullptr, nullptr, nullptr};
  if (scales) {
    types[2] = scales->type();
    values[2] = &*scales;
  }
  if (sizes) {
    types[3] = sizes->type();
    values[3] = &*sizes;
  }
  return Infer1("Resize", types, attrs, values);
}

TEST(ResizeTest, ScalesFloorAndSizes) {
  EXPECT_EQ(Str(InferResize(F32({1, 1, 2, 4}), Floats({1, 1, 0.6f, 0.6f}), std::nullopt)), "f32[1,1,1,2]");
  EXPECT_EQ(Str(InferResize(F32({N, 3, 2, 2}), Floats({1, 1, 2, 3}), std::nullopt)), "f32[N,3,4,6]");
  EXPECT_EQ(Str(InferResize(F32({1, 1, 4, 4}), std::nullopt, Ints({1, 1, 3, 2}))), "f32[1,1,3,2]");
  // The opset-11 form passes an empty scales placeholder beside the sizes.
  EXPECT_EQ(Str(InferResize(F32({1, 1, 4, 4}), Floats({}), Ints({1, 1, 7, 8}))), "f32[1,1,7,8]");
}

TEST(ResizeTest, Errors) {
  EXPECT_TRUE(FailsWith(Infer1("Resize", {F32({1, 4}), std::nullopt, F32({2})}), "Resize", "must be a constant"));
  EXPECT_TRUE(FailsWith(InferResize(F32({1, 4}), std::nullopt, std::nullopt), "Resize", "exactly one"));
  EXPECT_TRUE(FailsWith(InferResize(F32({1, 4}), Floats({1, 2}), Ints({1, 8})), "Resize", "exactly one"));
  EXPECT_TRUE(FailsWith(InferResize(F32({1, 4}), Floats({2}), std::nullopt), "Resize", "rank 2"));
  EXPECT_TRUE(FailsWith(InferResize(F32({N, 4}), Floats({2, 2}), std::nullopt), "Resize", "batch dimension"));
  EXPECT_TRUE(FailsWith(InferResize(F32({1, 4}), Floats({1, 0}), std::nullopt), "Resize", "must be > 0"));
  EXPECT_TRUE(FailsWith(InferResize(F32({1, 4}), Floats({1, 2}), std::nullopt, {{"mode", AttrValue::String("area")}}),
                        "Resize", "unknown mode"));
  EXPECT_TRUE(FailsWith(InferResize(F32({1, 4}), Floats({1, 2}), std::nullopt,
                                    {{"coordinate_transformation_mode", AttrValue::String("tf_crop_and_resize")}}),
                        "Resize", "roi"));
  EXPECT_TRUE(
      FailsWith(InferResize(F32({1, 4}), Floats({1, 2}), std::nullopt, {{"nearest_mode", AttrValue::String("round")}}),
                "Resize", "unknown nearest_mode"));
}

TEST(ResizeTest, Flops) {
  const Tensor scales = Floats({1, 1, 2, 2});
  const std::vector<std::optional<TensorType>> in = {F32({1, 1, 2, 2}), std::nullopt, scales.type()};
  EXPECT_EQ(Flops("Resize", in, {}, {nullptr, nullptr, &scales}), 16);
  EXPECT_EQ(Flops("Resize", in, {{"mode", AttrValue::String("linear")}}, {nullptr, nullptr, &scales}), 16 * 8);
  EXPECT_EQ(Flops("Resize", in, {{"mode", AttrValue::String("cubic")}}, {nullptr, nullptr, &scales}), 16 * 32);
}

TEST(ResizeGradTest, GivesXsType) {
  const Tensor scales = Floats({1, 2});
  EXPECT_EQ(Str(Infer1("ResizeGrad", {F32({3, 8}), F32({3, 4}), std::nullopt, scales.type()}, {},
                       {nullptr, nullptr, nullptr, &scales})),
            "f32[3,4]");
  EXPECT_TRUE(FailsWith(Infer1("ResizeGrad", {F32({3, 7}), F32({3, 4}), std::nullopt, scales.type()}, {},
                               {nullptr, nullptr, nullptr, &scales}),
                        "ResizeGrad", "dY"));
}

}  // namespace
}  // namespace tsr

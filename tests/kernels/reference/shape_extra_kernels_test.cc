// Tests of the reference kernels of ConstantOfShape, EyeLike, Size, Trilu,
// DepthToSpace, SpaceToDepth, ReverseSequence, GatherND, ScatterND, Compress, NonZero,
// Resize and ResizeGrad: hand-computed outputs on tiny inputs, every dtype for the ops
// that only move data, and the edge cases (k beyond the matrix, repeated scatter
// indices, empty dims, extrapolation).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "graph/dtype.h"
#include "graph/shape.h"
#include "graph/tensor.h"
#include "gtest/gtest.h"
#include "kernels/run_op.h"
#include "tests/kernels/kernel_test_util.h"

namespace tsr {
namespace {

using ::testing::ElementsAreArray;
using ::tsr::testing::ExpectNear;
using ::tsr::testing::Make;
using ::tsr::testing::RunOne;
using ::tsr::testing::Values;

Tensor I64(Shape shape, std::vector<int64_t> v) { return Tensor::FromVector<int64_t>(std::move(shape), v); }
Tensor I64(std::vector<int64_t> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return I64(Shape{n}, std::move(v));
}
Tensor F32(Shape shape, std::vector<float> v) { return Tensor::FromVector<float>(std::move(shape), v); }
Tensor Bools(std::vector<int> v) {
  std::vector<double> d(v.begin(), v.end());
  return Make(DType::kBool, Shape{static_cast<int64_t>(v.size())}, d);
}

// Element i holds i + 1 (i % 2 for bool): distinct in every non-bool dtype (< 127 elements).
Tensor Iota(DType dtype, Shape shape) {
  std::vector<double> v(static_cast<size_t>(shape.num_elements()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = dtype == DType::kBool ? static_cast<double>(i % 2) : i + 1.0;
  return Make(dtype, std::move(shape), v);
}

// out has `shape`, in's dtype, and out[i] == in[source[i]] (or 0 where source is -1).
void ExpectTaken(const Tensor& out, const Tensor& in, const Shape& shape, const std::vector<int64_t>& source) {
  EXPECT_EQ(out.dtype(), in.dtype());
  EXPECT_EQ(out.shape(), shape);
  std::vector<double> expected;
  for (int64_t s : source) expected.push_back(s < 0 ? 0.0 : in.GetAsDouble(s));
  EXPECT_THAT(Values(out), ElementsAreArray(expected));
}

class ShapeExtraAllDTypes : public ::testing::TestWithParam<DType> {};

TEST_P(ShapeExtraAllDTypes, ConstantOfShapeFillsWithValue) {
  const Tensor value = Make(GetParam(), Shape{1}, {1});
  const Tensor out = RunOne("ConstantOfShape", {I64({2, 3})}, {{"value", AttrValue::FromTensor(value)}});
  EXPECT_EQ(out.type(), TensorType(GetParam(), Shape{2, 3}));
  EXPECT_THAT(Values(out), ElementsAreArray(std::vector<double>(6, 1.0)));
}

TEST_P(ShapeExtraAllDTypes, EyeLikeWritesTheOutputDType) {
  const Tensor x = Iota(DType::kF32, Shape{2, 3});
  const Tensor up = RunOne("EyeLike", {x}, {{"dtype", AttrValue::Type(GetParam())}, {"k", AttrValue::Int(1)}});
  EXPECT_EQ(up.dtype(), GetParam());
  EXPECT_THAT(Values(up), ElementsAreArray({0, 1, 0, 0, 0, 1}));
  const Tensor xs = Iota(GetParam(), Shape{2, 3});
  EXPECT_THAT(Values(RunOne("EyeLike", {xs}, {{"k", AttrValue::Int(-1)}})), ElementsAreArray({0, 0, 0, 1, 0, 0}));
  // k beyond the matrix: all zeros.
  EXPECT_THAT(Values(RunOne("EyeLike", {xs}, {{"k", AttrValue::Int(3)}})), ElementsAreArray({0, 0, 0, 0, 0, 0}));
}

TEST_P(ShapeExtraAllDTypes, SizeCountsElements) {
  EXPECT_EQ(RunOne("Size", {Iota(GetParam(), Shape{2, 3})}).GetAsInt64(0), 6);
  EXPECT_EQ(RunOne("Size", {Iota(GetParam(), Shape{0, 5})}).GetAsInt64(0), 0);
}

TEST_P(ShapeExtraAllDTypes, TriluMasksTheTriangle) {
  const Tensor x = Iota(GetParam(), Shape{3, 4});
  // upper, k = 0: j >= i.
  ExpectTaken(RunOne("Trilu", {x}), x, Shape{3, 4}, {0, 1, 2, 3, -1, 5, 6, 7, -1, -1, 10, 11});
  // lower, k = 1: j <= i + 1.
  ExpectTaken(RunOne("Trilu", {x, I64(Shape{}, {1})}, {{"upper", AttrValue::Int(0)}}), x, Shape{3, 4},
              {0, 1, -1, -1, 4, 5, 6, -1, 8, 9, 10, 11});
  // k beyond the matrix either way.
  ExpectTaken(RunOne("Trilu", {x, I64(Shape{}, {5})}), x, Shape{3, 4}, std::vector<int64_t>(12, -1));
  ExpectTaken(RunOne("Trilu", {x, I64(Shape{}, {-5})}), x, Shape{3, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  ExpectTaken(RunOne("Trilu", {x, I64(Shape{}, {5})}, {{"upper", AttrValue::Int(0)}}), x, Shape{3, 4},
              {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  // A batch of two 2x2 matrices, and an empty one.
  const Tensor b = Iota(GetParam(), Shape{2, 2, 2});
  ExpectTaken(RunOne("Trilu", {b}, {{"upper", AttrValue::Int(0)}}), b, Shape{2, 2, 2}, {0, -1, 2, 3, 4, -1, 6, 7});
  EXPECT_EQ(RunOne("Trilu", {Iota(GetParam(), Shape{0, 3})}).shape(), (Shape{0, 3}));
}

TEST_P(ShapeExtraAllDTypes, DepthToSpaceModesAndSpaceToDepthInverse) {
  const Tensor x = Iota(GetParam(), Shape{1, 8, 1, 1});
  const Tensor dcr = RunOne("DepthToSpace", {x}, {{"blocksize", AttrValue::Int(2)}});
  ExpectTaken(dcr, x, Shape{1, 2, 2, 2}, {0, 2, 4, 6, 1, 3, 5, 7});
  ExpectTaken(RunOne("DepthToSpace", {x}, {{"blocksize", AttrValue::Int(2)}, {"mode", AttrValue::String("CRD")}}), x,
              Shape{1, 2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  ExpectTaken(RunOne("SpaceToDepth", {dcr}, {{"blocksize", AttrValue::Int(2)}}), x, Shape{1, 8, 1, 1},
              {0, 1, 2, 3, 4, 5, 6, 7});
  // Spatial extent > 1: x[0, c, 0, w] with c*2 + w.
  const Tensor y = Iota(GetParam(), Shape{1, 4, 1, 2});
  ExpectTaken(RunOne("DepthToSpace", {y}, {{"blocksize", AttrValue::Int(2)}}), y, Shape{1, 1, 2, 4},
              {0, 2, 1, 3, 4, 6, 5, 7});
  // SpaceToDepth of a 2x4 image: out[(i*2 + j), h, w] = in[h*2 + i, w*2 + j].
  const Tensor z = Iota(GetParam(), Shape{1, 1, 2, 4});
  ExpectTaken(RunOne("SpaceToDepth", {z}, {{"blocksize", AttrValue::Int(2)}}), z, Shape{1, 4, 1, 2},
              {0, 2, 1, 3, 4, 6, 5, 7});
}

TEST_P(ShapeExtraAllDTypes, ReverseSequenceReversesThePrefix) {
  const Tensor x = Iota(GetParam(), Shape{4, 4});
  ExpectTaken(RunOne("ReverseSequence", {x, I64({4, 3, 2, 1})}), x, Shape{4, 4},
              {12, 9, 6, 3, 8, 5, 2, 7, 4, 1, 10, 11, 0, 13, 14, 15});
  AttrMap batch_major = {{"time_axis", AttrValue::Int(1)}, {"batch_axis", AttrValue::Int(0)}};
  ExpectTaken(RunOne("ReverseSequence", {x, I64({1, 2, 3, 4})}, batch_major), x, Shape{4, 4},
              {0, 1, 2, 3, 5, 4, 6, 7, 10, 9, 8, 11, 15, 14, 13, 12});
}

TEST_P(ShapeExtraAllDTypes, GatherNDAndScatterNDMoveSlices) {
  const Tensor x = Iota(GetParam(), Shape{2, 2, 2});
  ExpectTaken(RunOne("GatherND", {x, I64(Shape{2, 2}, {0, 1, 1, 0})}), x, Shape{2, 2}, {2, 3, 4, 5});
  ExpectTaken(RunOne("GatherND", {x, I64(Shape{2, 3}, {0, 1, 1, -1, 0, 1})}), x, Shape{2}, {3, 5});
  ExpectTaken(RunOne("GatherND", {x, I64(Shape{2, 1}, {1, 0})}, {{"batch_dims", AttrValue::Int(1)}}), x, Shape{2, 2},
              {2, 3, 4, 5});
  EXPECT_EQ(RunOne("GatherND", {x, I64(Shape{0, 1}, {})}).shape(), (Shape{0, 2, 2}));
  // Scatter two rows into a 3x2 tensor; 'updates' values are 1..4 of the same dtype.
  const Tensor data = Make(GetParam(), Shape{3, 2}, {0, 0, 0, 0, 0, 0});
  const Tensor upd = Iota(GetParam(), Shape{2, 2});
  ExpectTaken(RunOne("ScatterND", {data, I64(Shape{2, 1}, {2, 0}), upd}), upd, Shape{3, 2}, {2, 3, -1, -1, 0, 1});
}

TEST_P(ShapeExtraAllDTypes, CompressAndNonZero) {
  const Tensor x = Iota(GetParam(), Shape{3, 2});
  ExpectTaken(RunOne("Compress", {x, Bools({0, 1, 1})}, {{"axis", AttrValue::Int(0)}}), x, Shape{2, 2}, {2, 3, 4, 5});
  ExpectTaken(RunOne("Compress", {x, Bools({0, 1})}, {{"axis", AttrValue::Int(-1)}}), x, Shape{3, 1}, {1, 3, 5});
  // Without an axis, on the flattened input, with a condition shorter than it.
  ExpectTaken(RunOne("Compress", {x, Bools({0, 1, 0, 0, 1})}), x, Shape{2}, {1, 4});
  const Tensor nz = RunOne("NonZero", {Make(GetParam(), Shape{2, 2}, {1, 0, 1, 1})});
  EXPECT_EQ(nz.shape(), (Shape{2, 3}));
  EXPECT_THAT(Values(nz), ElementsAreArray({0, 1, 1, 0, 0, 1}));
}

INSTANTIATE_TEST_SUITE_P(ShapeExtraKernels, ShapeExtraAllDTypes, ::testing::ValuesIn(kAllDTypes),
                         [](const ::testing::TestParamInfo<DType>& info) {
                           return std::string(DTypeName(info.param));
                         });

TEST(ScatterNDTest, RepeatedIndicesCombineInOrder) {
  const Tensor data = F32(Shape{4}, {1, 2, 3, 4});
  const Tensor idx = I64(Shape{3, 1}, {1, 1, 3});
  const Tensor upd = F32(Shape{3}, {10, 20, 30});
  EXPECT_THAT(Values(RunOne("ScatterND", {data, idx, upd}, {{"reduction", AttrValue::String("add")}})),
              ElementsAreArray({1, 32, 3, 34}));
  EXPECT_THAT(Values(RunOne("ScatterND", {data, idx, upd}, {{"reduction", AttrValue::String("mul")}})),
              ElementsAreArray({1, 400, 3, 120}));
  EXPECT_THAT(Values(RunOne("ScatterND", {data, idx, upd}, {{"reduction", AttrValue::String("max")}})),
              ElementsAreArray({1, 20, 3, 30}));
  EXPECT_THAT(Values(RunOne("ScatterND", {data, idx, upd})), ElementsAreArray({1, 20, 3, 30}));
}

TEST(IndexingExtraTest, OutOfRangeIndexIsAnError) {
  const Tensor x = F32(Shape{2, 2}, {1, 2, 3, 4});
  absl::StatusOr<std::vector<Tensor>> out = RunOp("GatherND", {x, I64(Shape{1, 2}, {0, 2})}, {});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(std::string(out.status().message()), ::testing::HasSubstr("out of range for axis 1"));
}

// Resize of a [rows, cols] f32 tensor by `scales`.
Tensor ResizeScales(const Tensor& x, std::vector<float> scales, AttrMap attrs) {
  const int64_t n = static_cast<int64_t>(scales.size());
  return RunOne("Resize", {x, std::nullopt, F32(Shape{n}, scales)}, attrs);
}
Tensor ResizeSizes(const Tensor& x, std::vector<int64_t> sizes, AttrMap attrs) {
  return RunOne("Resize", {x, std::nullopt, std::nullopt, I64(std::move(sizes))}, attrs);
}
AttrValue S(const char* s) { return AttrValue::String(s); }

TEST(ResizeTest, NearestHalfPixel) {
  const Tensor x = F32(Shape{2, 2}, {1, 2, 3, 4});
  // Rows (0.5 -> -0.25, 0.25, 0.75, 1.25) round to 0,0,1,1; columns by 3 to 0,0,0,1,1,1.
  const Tensor up = ResizeScales(x, {2, 3}, {});
  EXPECT_EQ(up.shape(), (Shape{4, 6}));
  EXPECT_THAT(Values(up), ElementsAreArray({1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4}));
  // Downsampling by 0.6 gives floor(2.4) = 2 columns from source 0.33 and 2.0.
  const Tensor y = F32(Shape{2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  const Tensor down = ResizeScales(y, {0.6f, 0.6f}, {});
  EXPECT_EQ(down.shape(), (Shape{1, 2}));
  EXPECT_THAT(Values(down), ElementsAreArray({1, 3}));
}

TEST(ResizeTest, NearestModesOnTies) {
  const Tensor x = F32(Shape{1, 3}, {10, 20, 30});
  // asymmetric, scale 2: sources 0, 0.5, 1, 1.5, 2, 2.5.
  auto run = [&](const char* mode) {
    return Values(
        ResizeSizes(x, {1, 6}, {{"coordinate_transformation_mode", S("asymmetric")}, {"nearest_mode", S(mode)}}));
  };
  EXPECT_THAT(run("round_prefer_floor"), ElementsAreArray({10, 10, 20, 20, 30, 30}));
  EXPECT_THAT(run("round_prefer_ceil"), ElementsAreArray({10, 20, 20, 30, 30, 30}));
  EXPECT_THAT(run("floor"), ElementsAreArray({10, 10, 20, 20, 30, 30}));
  EXPECT_THAT(run("ceil"), ElementsAreArray({10, 20, 20, 30, 30, 30}));
}

TEST(ResizeTest, LinearCoordinateModes) {
  const Tensor x = F32(Shape{2, 2}, {1, 2, 3, 4});
  AttrMap linear = {{"mode", S("linear")}};
  ExpectNear(ResizeScales(x, {2, 2}, linear),
             {1, 1.25, 1.75, 2, 1.5, 1.75, 2.25, 2.5, 2.5, 2.75, 3.25, 3.5, 3, 3.25, 3.75, 4}, 1e-6);
  AttrMap corners = {{"mode", S("linear")}, {"coordinate_transformation_mode", S("align_corners")}};
  const Tensor row = F32(Shape{1, 2}, {1, 2});
  ExpectNear(ResizeScales(row, {1, 2}, corners), {1, 4.0 / 3, 5.0 / 3, 2}, 1e-6);
  // pytorch_half_pixel with one output column reads source -0.5: the edge.
  AttrMap pytorch = {{"mode", S("linear")}, {"coordinate_transformation_mode", S("pytorch_half_pixel")}};
  ExpectNear(ResizeSizes(row, {1, 1}, pytorch), {1}, 1e-6);
  // align_corners uses the width scale * in (2.4 for 0.6 * 4), not the floored size.
  const Tensor y = F32(Shape{1, 4}, {1, 2, 3, 4});
  ExpectNear(ResizeScales(y, {1, 0.6f}, corners), {1, 1 + 3 / (0.6f * 4.0 - 1)}, 1e-6);
}

TEST(ResizeTest, CubicAsymmetricAndExcludeOutside) {
  const Tensor x = F32(Shape{1, 4}, {1, 2, 4, 8});
  AttrMap cubic = {{"mode", S("cubic")}, {"coordinate_transformation_mode", S("asymmetric")}};
  // Source 0.5 with A = -0.75: weights -0.09375, 0.59375, 0.59375, -0.09375 on x[-1..2]
  // (x[-1] is the edge x[0]).
  const Tensor out = ResizeScales(x, {1, 2}, cubic);
  ASSERT_EQ(out.shape(), (Shape{1, 8}));
  const std::vector<double> v = Values(out);
  EXPECT_NEAR(v[0], 1, 1e-6);
  EXPECT_NEAR(v[1], 1.3125, 1e-6);
  EXPECT_NEAR(v[2], 2, 1e-6);
  EXPECT_NEAR(v[3], 2.71875, 1e-6);
  // A = -0.5 and exclude_outside: x[-1]'s weight is dropped and the rest renormalized.
  cubic["cubic_coeff_a"] = AttrValue::Float(-0.5);
  cubic["exclude_outside"] = AttrValue::Int(1);
  EXPECT_NEAR(Values(ResizeScales(x, {1, 2}, cubic))[1], 1.4375 / 1.0625, 1e-6);
}

TEST(ResizeTest, TfCropAndResizeExtrapolates) {
  const Tensor x = F32(Shape{1, 4}, {1, 2, 3, 4});
  // Columns: source 1.5 * o + 1.5 -> 1.5, 3, 4.5 (outside: extrapolated).
  const Tensor roi = F32(Shape{4}, {0, 0.5f, 1, 1.5f});
  const Tensor out = RunOne("Resize", {x, roi, std::nullopt, I64({1, 3})},
                            {{"mode", S("linear")},
                             {"coordinate_transformation_mode", S("tf_crop_and_resize")},
                             {"extrapolation_value", AttrValue::Float(-1)}});
  ExpectNear(out, {2.5, 4, -1}, 1e-6);
}

TEST(ResizeTest, IntegerAndHalfDTypesAndEmptyOutput) {
  const Tensor x = Make(DType::kI32, Shape{1, 2}, {3, 7});
  EXPECT_THAT(Values(ResizeScales(x, {1, 2}, {})), ElementsAreArray({3, 3, 7, 7}));
  const Tensor h = Make(DType::kF16, Shape{1, 2}, {1, 2});
  EXPECT_THAT(Values(ResizeScales(h, {1, 2}, {{"mode", S("linear")}})),
              ElementsAreArray(std::vector<double>{1, 1.25, 1.75, 2}));
  EXPECT_EQ(ResizeScales(F32(Shape{1, 2}, {1, 2}), {1, 0.4f}, {}).shape(), (Shape{1, 0}));
}

TEST(ResizeGradTest, ScattersWithTheForwardWeights) {
  // Linear half_pixel 2 -> 4 along columns: output column weights on (x0, x1) are
  // (1, 0), (0.75, 0.25), (0.25, 0.75), (0, 1); dY = [1, 2, 3, 4].
  const Tensor x = F32(Shape{1, 2}, {5, 6});
  const Tensor dy = F32(Shape{1, 4}, {1, 2, 3, 4});
  const Tensor dx = RunOne("ResizeGrad", {dy, x, std::nullopt, F32(Shape{2}, {1, 2})}, {{"mode", S("linear")}});
  ExpectNear(dx, {1 + 1.5 + 0.75, 0.5 + 2.25 + 4}, 1e-6);
  // Extrapolated outputs send nothing back.
  const Tensor crop = RunOne("ResizeGrad",
                             {F32(Shape{1, 3}, {1, 1, 1}), F32(Shape{1, 4}, {0, 0, 0, 0}),
                              F32(Shape{4}, {0, 0.5f, 1, 1.5f}), std::nullopt, I64({1, 3})},
                             {{"mode", S("linear")}, {"coordinate_transformation_mode", S("tf_crop_and_resize")}});
  ExpectNear(crop, {0, 0.5, 0.5, 1}, 1e-6);
}

}  // namespace
}  // namespace tsr

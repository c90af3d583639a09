// Tests of the reference shape and layout kernels (kernels/reference/shape_kernels.cc,
// layout_kernels.cc): hand-computed outputs, for every dtype where the kernel only
// moves data. Expected outputs are given as the flat input positions each output
// element comes from, so one expectation checks all dtypes.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <vector>

#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "graph/attribute.h"
#include "graph/dtype.h"
#include "graph/float16.h"
#include "graph/op_registry.h"
#include "graph/shape.h"
#include "graph/tensor.h"
#include "gtest/gtest.h"
#include "kernels/kernel.h"
#include "kernels/run_op.h"
#include "tests/kernels/kernel_test_util.h"

namespace tsr {
namespace {

using ::tsr::testing::RunOne;
using ::tsr::testing::Values;

using ::testing::ElementsAreArray;

Tensor I64(std::vector<int64_t> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return Tensor::FromVector<int64_t>(Shape{n}, v);
}
Tensor I32(std::vector<int32_t> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return Tensor::FromVector<int32_t>(Shape{n}, v);
}

// Element i holds i + 1 (i % 2 for bool); every test tensor has < 127 elements so all
// values are distinct and exact in every non-bool dtype.
Tensor Iota(DType dtype, Shape shape) {
  Tensor t(dtype, std::move(shape));
  VisitDType(dtype, [&](auto tag) {
    using T = decltype(tag);
    T* p = t.data<T>();
    for (int64_t i = 0; i < t.num_elements(); ++i) {
      if constexpr (std::is_same_v<T, bool>) {
        p[i] = i % 2 == 1;
      } else if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
        p[i] = T::FromFloat(static_cast<float>(i + 1));
      } else {
        p[i] = static_cast<T>(i + 1);
      }
    }
  });
  return t;
}

// `out` has `shape`, `in`'s dtype, and out[i] == in[source[i]].
void ExpectTaken(const Tensor& out, const Tensor& in, const Shape& shape, const std::vector<int64_t>& source) {
  EXPECT_EQ(out.dtype(), in.dtype());
  EXPECT_EQ(out.shape(), shape);
  std::vector<double> expected;
  for (int64_t s : source) expected.push_back(in.GetAsDouble(s));
  EXPECT_THAT(Values(out), ElementsAreArray(expected));
}

std::vector<int64_t> Identity(int64_t n) {
  std::vector<int64_t> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(i);
  return v;
}

class AllDTypes : public ::testing::TestWithParam<DType> {};

TEST_P(AllDTypes, ReshapeFlattenSqueezeUnsqueezeKeepTheElements) {
  const Tensor x = Iota(GetParam(), Shape{2, 3});
  ExpectTaken(RunOne("Reshape", {x, I64({3, -1})}), x, Shape{3, 2}, Identity(6));
  const Tensor y = Iota(GetParam(), Shape{2, 3, 2});
  ExpectTaken(RunOne("Flatten", {y}, {{"axis", AttrValue::Int(2)}}), y, Shape{6, 2}, Identity(12));
  const Tensor z = Iota(GetParam(), Shape{1, 3, 1});
  ExpectTaken(RunOne("Squeeze", {z, I64({0})}), z, Shape{3, 1}, Identity(3));
  ExpectTaken(RunOne("Squeeze", {z, std::nullopt}), z, Shape{3}, Identity(3));
  const Tensor w = Iota(GetParam(), Shape{3});
  ExpectTaken(RunOne("Unsqueeze", {w, I64({0, 2})}), w, Shape{1, 3, 1}, Identity(3));
}

TEST_P(AllDTypes, ExpandBroadcastsBothWays) {
  const Tensor x = Iota(GetParam(), Shape{3, 1});
  // [3,1] with [2,1,4] -> [2,3,4]; element (b, i, j) comes from x[i].
  std::vector<int64_t> source;
  for (int b = 0; b < 2; ++b) {
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 4; ++j) source.push_back(i);
    }
  }
  ExpectTaken(RunOne("Expand", {x, I64({2, 1, 4})}), x, Shape{2, 3, 4}, source);
}

TEST_P(AllDTypes, TransposeRank4MatchesIndexArithmetic) {
  const Tensor x = Iota(GetParam(), Shape{2, 3, 4, 5});
  const std::vector<int64_t> perm = {2, 0, 3, 1};
  const Tensor out = RunOne("Transpose", {x}, {{"perm", AttrValue::Ints(perm)}});
  // out[a][b][c][d] = x[j] with j[perm[k]] = (a, b, c, d)[k].
  const int64_t in_dims[4] = {2, 3, 4, 5};
  const int64_t in_strides[4] = {60, 20, 5, 1};
  std::vector<int64_t> source;
  for (int64_t a = 0; a < in_dims[perm[0]]; ++a) {
    for (int64_t b = 0; b < in_dims[perm[1]]; ++b) {
      for (int64_t c = 0; c < in_dims[perm[2]]; ++c) {
        for (int64_t d = 0; d < in_dims[perm[3]]; ++d) {
          const int64_t o[4] = {a, b, c, d};
          int64_t offset = 0;
          for (int k = 0; k < 4; ++k) offset += o[k] * in_strides[perm[k]];
          source.push_back(offset);
        }
      }
    }
  }
  ExpectTaken(out, x, Shape{4, 2, 5, 3}, source);
}

TEST_P(AllDTypes, SliceWithNegativeStep) {
  const Tensor x = Iota(GetParam(), Shape{3, 4});
  ExpectTaken(RunOne("Slice", {x, I64({3}), I64({0}), I64({1}), I64({-2})}), x, Shape{3, 2}, {3, 1, 7, 5, 11, 9});
}

TEST_P(AllDTypes, PadEdge) {
  const Tensor x = Iota(GetParam(), Shape{2, 2});
  // Rows padded (1, 0), columns (0, 2), edge mode.
  ExpectTaken(RunOne("Pad", {x, I64({1, 0, 0, 2})}, {{"mode", AttrValue::String("edge")}}), x, Shape{3, 4},
              {0, 1, 1, 1, 0, 1, 1, 1, 2, 3, 3, 3});
}

TEST_P(AllDTypes, ConcatSplitAndTile) {
  const Tensor x = Iota(GetParam(), Shape{2, 3});
  ExpectTaken(RunOne("Tile", {x, I64({1, 2})}), x, Shape{2, 6}, {0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5});
  // Split [2,3] on axis 1 into [2,1] and [2,2], then concat them back.
  absl::StatusOr<std::vector<Tensor>> parts = RunOp("Split", {x, I64({1, 2})}, {{"axis", AttrValue::Int(1)}});
  ASSERT_TRUE(parts.ok()) << parts.status();
  ASSERT_EQ(parts->size(), 2u);
  ExpectTaken((*parts)[0], x, Shape{2, 1}, {0, 3});
  ExpectTaken((*parts)[1], x, Shape{2, 2}, {1, 2, 4, 5});
  ExpectTaken(RunOne("Concat", {(*parts)[1], (*parts)[0]}, {{"axis", AttrValue::Int(-1)}}), x, Shape{2, 3},
              {1, 2, 0, 4, 5, 3});
}

TEST_P(AllDTypes, ShapeOfAnyDType) {
  const Tensor x(GetParam(), Shape{2, 3, 4, 5});
  EXPECT_THAT(RunOne("Shape", {x}).ToInt64Vector(), ElementsAreArray({2, 3, 4, 5}));
  EXPECT_THAT(RunOne("Shape", {x}, {{"start", AttrValue::Int(1)}, {"end", AttrValue::Int(-1)}}).ToInt64Vector(),
              ElementsAreArray({3, 4}));
}

INSTANTIATE_TEST_SUITE_P(ShapeKernels, AllDTypes, ::testing::ValuesIn(kAllDTypes),
                         [](const ::testing::TestParamInfo<DType>& info) {
                           return std::string(DTypeName(info.param));
                         });

TEST(TransposeKernel, DefaultPermReversesAxes) {
  const Tensor x = Tensor::FromVector<float>(Shape{2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor out = RunOne("Transpose", {x});
  EXPECT_EQ(out.shape(), (Shape{3, 2}));
  EXPECT_THAT(out.flat<float>(), ElementsAreArray({1, 4, 2, 5, 3, 6}));
}

TEST(TransposeKernel, ZeroSizeDim) {
  const Tensor x(DType::kI64, Shape{2, 0, 3});
  const Tensor out = RunOne("Transpose", {x}, {{"perm", AttrValue::Ints({1, 2, 0})}});
  EXPECT_EQ(out.shape(), (Shape{0, 3, 2}));
}

TEST(ReshapeKernel, ZeroSize) {
  const Tensor x(DType::kF32, Shape{0, 3});
  EXPECT_EQ(RunOne("Reshape", {x, I64({3, 0})}, {{"allowzero", AttrValue::Int(1)}}).shape(), (Shape{3, 0}));
}

TEST(ExpandKernel, ToZeroSize) {
  const Tensor x = Tensor::FromVector<float>(Shape{1, 3}, {1, 2, 3});
  EXPECT_EQ(RunOne("Expand", {x, I64({0, 3})}).shape(), (Shape{0, 3}));
}

TEST(ConcatKernel, SkipsEmptyInputs) {
  const Tensor a = Tensor::FromVector<int64_t>(Shape{2, 1}, {1, 2});
  const Tensor empty(DType::kI64, Shape{2, 0});
  const Tensor b = Tensor::FromVector<int64_t>(Shape{2, 2}, {3, 4, 5, 6});
  const Tensor out = RunOne("Concat", {a, empty, b}, {{"axis", AttrValue::Int(1)}});
  EXPECT_EQ(out.shape(), (Shape{2, 3}));
  EXPECT_THAT(out.flat<int64_t>(), ElementsAreArray({1, 3, 4, 2, 5, 6}));
  const Tensor rows = RunOne("Concat", {b, b}, {{"axis", AttrValue::Int(0)}});
  EXPECT_THAT(rows.flat<int64_t>(), ElementsAreArray({3, 4, 5, 6, 3, 4, 5, 6}));
}

TEST(SplitKernel, NumOutputsAndEmptyPieces) {
  const Tensor x = Tensor::FromVector<float>(Shape{7}, {0, 1, 2, 3, 4, 5, 6});
  absl::StatusOr<std::vector<Tensor>> parts = RunOp("Split", {x, std::nullopt}, {{"num_outputs", AttrValue::Int(3)}});
  ASSERT_TRUE(parts.ok()) << parts.status();
  ASSERT_EQ(parts->size(), 3u);
  EXPECT_THAT((*parts)[0].flat<float>(), ElementsAreArray({0, 1, 2}));
  EXPECT_THAT((*parts)[1].flat<float>(), ElementsAreArray({3, 4, 5}));
  EXPECT_THAT((*parts)[2].flat<float>(), ElementsAreArray({6}));
  parts = RunOp("Split", {x, I64({2, 0, 5})});
  ASSERT_TRUE(parts.ok()) << parts.status();
  EXPECT_EQ((*parts)[1].shape(), (Shape{0}));
  EXPECT_THAT((*parts)[2].flat<float>(), ElementsAreArray({2, 3, 4, 5, 6}));
}

// Slice corner cases on x = f32[3,4] holding 1..12.
class SliceKernel : public ::testing::Test {
 protected:
  const Tensor x_ = Iota(DType::kF32, Shape{3, 4});
  Tensor Slice(std::vector<int64_t> starts, std::vector<int64_t> ends, std::vector<int64_t> axes,
               std::vector<int64_t> steps) {
    return RunOne("Slice", {x_, I64(starts), I64(ends), I64(axes), I64(steps)});
  }
};

TEST_F(SliceKernel, StartsAndEndsOnTwoAxes) {
  ExpectTaken(RunOne("Slice", {x_, I64({0, 1}), I64({2, 3})}), x_, Shape{2, 2}, {1, 2, 5, 6});
}

TEST_F(SliceKernel, I32IndicesAndNegativeAxis) {
  ExpectTaken(RunOne("Slice", {x_, I32({1}), I32({3}), I32({-1}), std::nullopt}), x_, Shape{3, 2}, {1, 2, 5, 6, 9, 10});
}

TEST_F(SliceKernel, ReverseWholeAxis) {
  ExpectTaken(Slice({-1}, {std::numeric_limits<int64_t>::min()}, {1}, {-1}), x_, Shape{3, 4},
              {3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8});
}

TEST_F(SliceKernel, ClampsOutOfRangeBounds) {
  ExpectTaken(Slice({-100}, {100}, {0}, {1}), x_, Shape{3, 4}, Identity(12));
  // Negative step: start 100 clamps to 2, end -100 to -1 (before the first row).
  ExpectTaken(Slice({100}, {-100}, {0}, {-2}), x_, Shape{2, 4}, {8, 9, 10, 11, 0, 1, 2, 3});
  // A step larger than the axis takes one element.
  ExpectTaken(Slice({1}, {std::numeric_limits<int64_t>::max()}, {1}, {std::numeric_limits<int64_t>::max()}), x_,
              Shape{3, 1}, {1, 5, 9});
  ExpectTaken(Slice({2}, {0}, {1}, {std::numeric_limits<int64_t>::min()}), x_, Shape{3, 1}, {2, 6, 10});
}

TEST_F(SliceKernel, EmptyResults) {
  EXPECT_EQ(Slice({2}, {1}, {0}, {1}).shape(), (Shape{0, 4}));
  EXPECT_EQ(Slice({1}, {2}, {0}, {-1}).shape(), (Shape{0, 4}));
  EXPECT_EQ(Slice({5}, {9}, {1}, {1}).shape(), (Shape{3, 0}));
}

// The elements ONNX Slice takes from an axis of size d, by walking from the clamped
// start, independently of the kernel's closed-form count.
std::vector<int64_t> SlicedIndices(int64_t d, int64_t start, int64_t end, int64_t step) {
  std::vector<int64_t> out;
  if (d == 0) return out;
  if (start < 0) start += d;
  if (end < 0) end += d;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, d);
    end = std::clamp<int64_t>(end, 0, d);
    for (int64_t i = start; i < end; i += step) out.push_back(i);
  } else {
    start = std::clamp<int64_t>(start, 0, d - 1);
    end = std::clamp<int64_t>(end, -1, d - 1);
    for (int64_t i = start; i > end; i += step) out.push_back(i);
  }
  return out;
}

TEST(SliceKernelRandomized, MatchesElementWalk) {
  const uint32_t seed = 20261130;
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int64_t> dim(0, 6), bound(-9, 9), step(-3, 3);
  for (int trial = 0; trial < 300; ++trial) {
    const int64_t d = dim(rng);
    const int64_t s = bound(rng);
    const int64_t e = bound(rng);
    int64_t k = step(rng);
    if (k == 0) k = 1;
    SCOPED_TRACE(::testing::Message() << "d=" << d << " start=" << s << " end=" << e << " step=" << k);
    const Tensor x = Iota(DType::kI32, Shape{2, d});
    const std::vector<int64_t> taken = SlicedIndices(d, s, e, k);
    std::vector<int64_t> source;
    for (int64_t r = 0; r < 2; ++r) {
      for (int64_t i : taken) source.push_back(r * d + i);
    }
    ExpectTaken(RunOne("Slice", {x, I64({s}), I64({e}), I64({1}), I64({k})}), x,
                Shape{2, static_cast<int64_t>(taken.size())}, source);
  }
}

// Called directly with an output whose shape disagrees with its inputs, a kernel
// reports the mismatch rather than writing out of bounds.
TEST(LayoutKernels, ReportOutputShapeMismatch) {
  const OpDef* def = *OpRegistry::Global().Lookup("Slice");
  const KernelFn* fn = *KernelRegistry::Global().Lookup("Slice", kReferenceDevice, DType::kF32);
  const Tensor x = Iota(DType::kF32, Shape{4});
  const Tensor starts = I64({0});
  const Tensor ends = I64({3});
  Tensor out(DType::kF32, Shape{2});
  KernelContext ctx(*def, "s", {}, {&x, &starts, &ends, nullptr, nullptr}, {&out});
  const absl::Status status = (*fn)(ctx);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), ::testing::HasSubstr("f32[2]"));
  EXPECT_THAT(status.message(), ::testing::HasSubstr("f32[3]"));
}

TEST(SliceKernelZeroSize, SlicesAnEmptyAxis) {
  const Tensor x(DType::kBool, Shape{0, 2});
  EXPECT_EQ(RunOne("Slice", {x, I64({0}), I64({1}), I64({0}), I64({-1})}).shape(), (Shape{0, 2}));
}

TEST(PadKernel, ConstantWithValue) {
  const Tensor x = Tensor::FromVector<float>(Shape{4}, {1, 2, 3, 4});
  const Tensor out = RunOne("Pad", {x, I64({2, 1}), Tensor::Scalar<float>(9)});
  EXPECT_THAT(out.flat<float>(), ElementsAreArray({9, 9, 1, 2, 3, 4, 9}));
  EXPECT_THAT(RunOne("Pad", {x, I64({1, 1})}).flat<float>(), ElementsAreArray({0, 1, 2, 3, 4, 0}));
}

TEST(PadKernel, Reflect) {
  const Tensor x = Tensor::FromVector<int64_t>(Shape{4}, {1, 2, 3, 4});
  const Tensor out = RunOne("Pad", {x, I64({2, 3})}, {{"mode", AttrValue::String("reflect")}});
  EXPECT_THAT(out.flat<int64_t>(), ElementsAreArray({3, 2, 1, 2, 3, 4, 3, 2, 1}));
}

TEST(PadKernel, Edge) {
  const Tensor x = Tensor::FromVector<int64_t>(Shape{4}, {1, 2, 3, 4});
  const Tensor out = RunOne("Pad", {x, I64({2, 1})}, {{"mode", AttrValue::String("edge")}});
  EXPECT_THAT(out.flat<int64_t>(), ElementsAreArray({1, 1, 1, 2, 3, 4, 4}));
}

TEST(PadKernel, Wrap) {
  const Tensor x = Tensor::FromVector<int64_t>(Shape{4}, {1, 2, 3, 4});
  const Tensor out = RunOne("Pad", {x, I64({2, 5})}, {{"mode", AttrValue::String("wrap")}});
  EXPECT_THAT(out.flat<int64_t>(), ElementsAreArray({3, 4, 1, 2, 3, 4, 1, 2, 3, 4, 1}));
}

TEST(PadKernel, NegativePadsCrop) {
  const Tensor x = Tensor::FromVector<int64_t>(Shape{4}, {1, 2, 3, 4});
  EXPECT_THAT(RunOne("Pad", {x, I64({-1, 2})}).flat<int64_t>(), ElementsAreArray({2, 3, 4, 0, 0}));
  EXPECT_THAT(RunOne("Pad", {x, I64({-1, -2})}).flat<int64_t>(), ElementsAreArray({2}));
  // Padding and cropping are relative to the original input: edge repeats x[3].
  EXPECT_THAT(RunOne("Pad", {x, I64({-3, 1})}, {{"mode", AttrValue::String("edge")}}).flat<int64_t>(),
              ElementsAreArray({4, 4}));
}

TEST(PadKernel, SelectedAxesF16AndBoolValues) {
  const Tensor x = Tensor::FromVector<Float16>(
      Shape{2, 2}, {Float16::FromFloat(1), Float16::FromFloat(2), Float16::FromFloat(3), Float16::FromFloat(4)});
  const Tensor out = RunOne("Pad", {x, I64({1, 0}), Tensor::Scalar<Float16>(Float16::FromFloat(-0.5f)), I64({-1})});
  EXPECT_EQ(out.shape(), (Shape{2, 3}));
  EXPECT_THAT(Values(out), ElementsAreArray({-0.5, 1.0, 2.0, -0.5, 3.0, 4.0}));
  const Tensor b = Tensor::FromVector<bool>(Shape{2}, {false, false});
  EXPECT_THAT(Values(RunOne("Pad", {b, I64({1, 1}), Tensor::Scalar<bool>(true)})), ElementsAreArray({1, 0, 0, 1}));
}

TEST(PadKernel, ZeroSizeInputConstant) {
  const Tensor x(DType::kI32, Shape{0});
  const Tensor out = RunOne("Pad", {x, I64({1, 2}), Tensor::Scalar<int32_t>(5)});
  EXPECT_THAT(out.flat<int32_t>(), ElementsAreArray({5, 5, 5}));
}

TEST(TileKernel, ZeroRepeats) {
  const Tensor x = Tensor::FromVector<float>(Shape{2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(RunOne("Tile", {x, I64({0, 2})}).shape(), (Shape{0, 6}));
  const Tensor out = RunOne("Tile", {x, I64({2, 1})});
  EXPECT_THAT(out.flat<float>(), ElementsAreArray({1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6}));
}

TEST(RangeKernel, Integers) {
  EXPECT_THAT(RunOne("Range", {Tensor::Scalar<int64_t>(2), Tensor::Scalar<int64_t>(11), Tensor::Scalar<int64_t>(3)})
                  .flat<int64_t>(),
              ElementsAreArray({2, 5, 8}));
  EXPECT_THAT(RunOne("Range", {Tensor::Scalar<int32_t>(5), Tensor::Scalar<int32_t>(0), Tensor::Scalar<int32_t>(-2)})
                  .flat<int32_t>(),
              ElementsAreArray({5, 3, 1}));
  EXPECT_EQ(RunOne("Range", {Tensor::Scalar<int64_t>(3), Tensor::Scalar<int64_t>(3), Tensor::Scalar<int64_t>(1)})
                .num_elements(),
            0);
}

TEST(RangeKernel, FloatsAreStartPlusIDelta) {
  const Tensor out =
      RunOne("Range", {Tensor::Scalar<float>(1.0f), Tensor::Scalar<float>(2.0f), Tensor::Scalar<float>(0.25f)});
  EXPECT_THAT(out.flat<float>(), ElementsAreArray({1.0f, 1.25f, 1.5f, 1.75f}));
  // Not accumulated: element i is exactly start + i * delta in double.
  const Tensor d =
      RunOne("Range", {Tensor::Scalar<double>(0.1), Tensor::Scalar<double>(1.0), Tensor::Scalar<double>(0.1)});
  ASSERT_EQ(d.num_elements(), 9);
  for (int i = 0; i < 9; ++i) EXPECT_EQ(d.flat<double>()[i], 0.1 + i * 0.1) << i;
}

}  // namespace
}  // namespace tsr

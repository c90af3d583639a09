// Tests of the reference indexing kernels (kernels/reference/indexing_kernels.cc):
// Gather, GatherElements, ScatterElements, OneHot — hand-computed outputs (ONNX's
// own examples where it gives them), several dtypes, negative indices and the
// errors for out-of-range ones.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "graph/attribute.h"
#include "graph/dtype.h"
#include "graph/float16.h"
#include "graph/shape.h"
#include "graph/tensor.h"
#include "gtest/gtest.h"
#include "kernels/run_op.h"
#include "tests/kernels/kernel_test_util.h"

namespace tsr {
namespace {

using ::tsr::testing::Make;
using ::tsr::testing::RunOne;
using ::tsr::testing::Values;

using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

AttrMap Axis(int64_t axis) { return {{"axis", AttrValue::Int(axis)}}; }

class DataDTypes : public ::testing::TestWithParam<DType> {};

TEST_P(DataDTypes, GatherRowsWithNegativeIndex) {
  const Tensor data = Make(GetParam(), Shape{3, 2}, {1, 2, 3, 4, 5, 6});
  const Tensor out = RunOne("Gather", {data, Tensor::FromVector<int64_t>(Shape{2, 2}, {2, -3, 1, 2})});
  EXPECT_EQ(out.dtype(), GetParam());
  EXPECT_EQ(out.shape(), (Shape{2, 2, 2}));
  EXPECT_EQ(Values(out), Values(Make(GetParam(), Shape{8}, {5, 6, 1, 2, 3, 4, 5, 6})));
}

TEST_P(DataDTypes, GatherInnerAxis) {
  const Tensor data = Make(GetParam(), Shape{2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor out = RunOne("Gather", {data, Tensor::FromVector<int32_t>(Shape{2}, {2, -1})}, Axis(1));
  EXPECT_EQ(out.shape(), (Shape{2, 2}));
  EXPECT_EQ(Values(out), Values(Make(GetParam(), Shape{4}, {3, 3, 6, 6})));
}

TEST_P(DataDTypes, GatherElementsOnnxExample) {
  const Tensor data = Make(GetParam(), Shape{3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  const Tensor indices = Tensor::FromVector<int64_t>(Shape{2, 3}, {1, 2, 0, 2, 0, -3});
  const Tensor out = RunOne("GatherElements", {data, indices}, Axis(0));
  EXPECT_EQ(out.shape(), (Shape{2, 3}));
  EXPECT_EQ(Values(out), Values(Make(GetParam(), Shape{6}, {4, 8, 3, 7, 2, 3})));
}

TEST_P(DataDTypes, ScatterElementsOnnxExample) {
  const Tensor data = Make(GetParam(), Shape{3, 3}, {0, 0, 0, 0, 0, 0, 0, 0, 0});
  const Tensor indices = Tensor::FromVector<int64_t>(Shape{2, 3}, {1, 0, 2, 0, 2, 1});
  const Tensor updates = Make(GetParam(), Shape{2, 3}, {1, 3, 4, 2, 5, 6});
  const Tensor out = RunOne("ScatterElements", {data, indices, updates}, Axis(0));
  EXPECT_EQ(out.shape(), (Shape{3, 3}));
  EXPECT_EQ(Values(out), Values(Make(GetParam(), Shape{9}, {2, 3, 0, 1, 0, 6, 0, 5, 4})));
}

INSTANTIATE_TEST_SUITE_P(IndexingKernels, DataDTypes, ::testing::ValuesIn(kAllDTypes),
                         [](const ::testing::TestParamInfo<DType>& info) {
                           return std::string(DTypeName(info.param));
                         });

TEST(GatherKernel, OutOfRangeIndexIsAnError) {
  const Tensor data = Tensor::FromVector<float>(Shape{3, 2}, {1, 2, 3, 4, 5, 6});
  absl::StatusOr<std::vector<Tensor>> out = RunOp("Gather", {data, Tensor::FromVector<int64_t>(Shape{2}, {0, 3})});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(), HasSubstr("index 3"));
  EXPECT_THAT(out.status().message(), HasSubstr("axis 0 of size 3"));
  out = RunOp("Gather", {data, Tensor::FromVector<int32_t>(Shape{1}, {-3})}, Axis(1));
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("index -3"));
  EXPECT_THAT(out.status().message(), HasSubstr("axis 1 of size 2"));
}

TEST(GatherKernel, ZeroSize) {
  const Tensor data = Tensor::FromVector<float>(Shape{3, 2}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(RunOne("Gather", {data, Tensor(DType::kI64, Shape{0})}).shape(), (Shape{0, 2}));
  const Tensor empty_rows(DType::kF32, Shape{3, 0});
  EXPECT_EQ(RunOne("Gather", {empty_rows, Tensor::FromVector<int64_t>(Shape{2}, {0, 2})}).shape(), (Shape{2, 0}));
  // An empty axis has no valid index.
  const Tensor empty_axis(DType::kF32, Shape{0, 2});
  EXPECT_FALSE(RunOp("Gather", {empty_axis, Tensor::FromVector<int64_t>(Shape{1}, {0})}).ok());
}

TEST(GatherElementsKernel, InnerAxisOnnxExample) {
  const Tensor data = Tensor::FromVector<int64_t>(Shape{2, 2}, {1, 2, 3, 4});
  const Tensor out = RunOne("GatherElements", {data, Tensor::FromVector<int32_t>(Shape{2, 2}, {0, 0, 1, 0})}, Axis(-1));
  EXPECT_THAT(out.flat<int64_t>(), ElementsAreArray({1, 1, 4, 3}));
}

TEST(GatherElementsKernel, SmallerIndicesAndOutOfRange) {
  const Tensor data = Tensor::FromVector<float>(Shape{2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor out = RunOne("GatherElements", {data, Tensor::FromVector<int64_t>(Shape{1, 2}, {1, 0})}, Axis(0));
  EXPECT_THAT(out.flat<float>(), ElementsAreArray({4, 2}));
  absl::StatusOr<std::vector<Tensor>> bad =
      RunOp("GatherElements", {data, Tensor::FromVector<int64_t>(Shape{1, 2}, {0, 2})}, Axis(0));
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("index 2"));
  EXPECT_THAT(bad.status().message(), HasSubstr("size 2"));
}

class ScatterReduction : public ::testing::Test {
 protected:
  // data [[1, 2, 3, 4, 5]], updates 1.5 and 2.5 both at column 1 (one via -4).
  std::vector<double> Scatter(const std::string& reduction) {
    const Tensor data = Tensor::FromVector<float>(Shape{1, 5}, {1, 2, 3, 4, 5});
    const Tensor indices = Tensor::FromVector<int64_t>(Shape{1, 2}, {1, -4});
    const Tensor updates = Tensor::FromVector<float>(Shape{1, 2}, {1.5f, 2.5f});
    return Values(RunOne("ScatterElements", {data, indices, updates},
                         {{"axis", AttrValue::Int(1)}, {"reduction", AttrValue::String(reduction)}}));
  }
};

TEST_F(ScatterReduction, None) { EXPECT_THAT(Scatter("none"), ElementsAreArray({1.0, 2.5, 3.0, 4.0, 5.0})); }
TEST_F(ScatterReduction, Add) { EXPECT_THAT(Scatter("add"), ElementsAreArray({1.0, 6.0, 3.0, 4.0, 5.0})); }
TEST_F(ScatterReduction, Mul) { EXPECT_THAT(Scatter("mul"), ElementsAreArray({1.0, 7.5, 3.0, 4.0, 5.0})); }
TEST_F(ScatterReduction, Max) { EXPECT_THAT(Scatter("max"), ElementsAreArray({1.0, 2.5, 3.0, 4.0, 5.0})); }
TEST_F(ScatterReduction, Min) { EXPECT_THAT(Scatter("min"), ElementsAreArray({1.0, 1.5, 3.0, 4.0, 5.0})); }

TEST(ScatterElementsKernel, ReductionsOnIntegersF16AndBool) {
  const Tensor indices = Tensor::FromVector<int64_t>(Shape{3}, {0, 0, 2});
  const AttrMap add = {{"reduction", AttrValue::String("add")}};
  const Tensor i64 = RunOne("ScatterElements",
                            {Tensor::FromVector<int64_t>(Shape{3}, {10, 20, 30}), indices,
                             Tensor::FromVector<int64_t>(Shape{3}, {1, 2, -40})},
                            add);
  EXPECT_THAT(i64.flat<int64_t>(), ElementsAreArray({13, 20, -10}));
  const Tensor f16 = RunOne(
      "ScatterElements", {Make(DType::kF16, Shape{3}, {1, 2, 3}), indices, Make(DType::kF16, Shape{3}, {0.5, 4, -1})},
      {{"reduction", AttrValue::String("max")}});
  EXPECT_THAT(Values(f16), ElementsAreArray({4.0, 2.0, 3.0}));
  const Tensor b = RunOne("ScatterElements",
                          {Tensor::FromVector<bool>(Shape{3}, {false, false, true}), indices,
                           Tensor::FromVector<bool>(Shape{3}, {false, true, false})},
                          add);
  EXPECT_THAT(b.flat<bool>(), ElementsAreArray({true, false, true}));
  const Tensor i8 = RunOne("ScatterElements",
                           {Make(DType::kI8, Shape{3}, {5, 6, 7}), indices, Make(DType::kI8, Shape{3}, {-3, 2, 9})},
                           {{"reduction", AttrValue::String("min")}});
  EXPECT_THAT(Values(i8), ElementsAreArray({-3.0, 6.0, 7.0}));
}

TEST(ScatterElementsKernel, OutOfRangeIndexIsAnError) {
  absl::StatusOr<std::vector<Tensor>> out =
      RunOp("ScatterElements",
            {Tensor::FromVector<float>(Shape{2, 2}, {1, 2, 3, 4}), Tensor::FromVector<int32_t>(Shape{1, 1}, {-5}),
             Tensor::FromVector<float>(Shape{1, 1}, {9})},
            Axis(1));
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("index -5"));
  EXPECT_THAT(out.status().message(), HasSubstr("axis 1 of size 2"));
}

TEST(OneHotKernel, LastAxisWithNegativeAndOutOfRangeIndices) {
  const Tensor indices = Tensor::FromVector<int64_t>(Shape{4}, {0, -1, 5, 2});
  const Tensor out =
      RunOne("OneHot", {indices, Tensor::Scalar<int64_t>(3), Tensor::FromVector<float>(Shape{2}, {0.5f, 7.0f})});
  EXPECT_EQ(out.shape(), (Shape{4, 3}));
  EXPECT_THAT(out.flat<float>(), ElementsAreArray({7.0f, .5f, .5f, .5f, .5f, 7.0f, .5f, .5f, .5f, .5f, .5f, 7.0f}));
}

TEST(OneHotKernel, AxisZeroBoolValuesFloatIndicesAndDepth) {
  // Float indices truncate toward zero; -3.0 wraps to 0; depth 3.0.
  const Tensor indices = Tensor::FromVector<float>(Shape{2, 2}, {1.7f, -3.0f, 2.0f, -4.0f});
  const Tensor out = RunOne(
      "OneHot", {indices, Tensor::Scalar<float>(3.0f), Tensor::FromVector<bool>(Shape{2}, {false, true})}, Axis(0));
  EXPECT_EQ(out.dtype(), DType::kBool);
  EXPECT_EQ(out.shape(), (Shape{3, 2, 2}));
  // out[k][i][j] = (indices[i][j] == k).
  EXPECT_THAT(out.flat<bool>(), ElementsAreArray({false, true, false, false,  // k = 0
                                                  true, false, false, false,  // k = 1
                                                  false, false, true, false}));
}

TEST(OneHotKernel, MiddleAxisI64Values) {
  const Tensor indices = Tensor::FromVector<int32_t>(Shape{2, 2}, {0, 1, 1, 0});
  const Tensor out =
      RunOne("OneHot", {indices, Tensor::Scalar<int32_t>(2), Tensor::FromVector<int64_t>(Shape{2}, {0, 9})}, Axis(1));
  EXPECT_EQ(out.shape(), (Shape{2, 2, 2}));
  // out[i][k][j] = indices[i][j] == k.
  EXPECT_THAT(out.flat<int64_t>(), ElementsAreArray({9, 0, 0, 9, 0, 9, 9, 0}));
}

}  // namespace
}  // namespace tsr

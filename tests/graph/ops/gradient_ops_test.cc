// Shape/dtype inference of the backward ops autodiff emits (graph/ops/gradient_ops.cc):
// what each produces, the symbolic batch passing through, and the errors for
// operands that do not fit the forward op they differentiate.
#include <vector>

#include "gmock/gmock.h"
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
using ::tsr::testing::Ints;
using ::tsr::testing::T;
using ::tsr::testing::Yields;
using ::tsr::testing::YieldsAll;

constexpr int64_t kN = kBatchDim;

TEST(ConvGradFilterTest, ProducesTheWeightShape) {
  EXPECT_THAT(Infer1("ConvGradFilter", {F32({kN, 4, 7, 7}), F32({kN, 6, 3, 3})},
                     {{"kernel_shape", Ints({3, 3})}, {"strides", Ints({2, 2})}, {"group", AttrValue::Int(2)}}),
              Yields(F32({6, 2, 3, 3})));
  EXPECT_THAT(Infer1("ConvGradFilter", {F32({1, 3, 5, 6}), F32({1, 3, 3, 3})},
                     {{"kernel_shape", Ints({3, 3})},
                      {"strides", Ints({2, 2})},
                      {"auto_pad", AttrValue::String("SAME_UPPER")},
                      {"group", AttrValue::Int(3)}}),
              Yields(F32({3, 1, 3, 3})));
  EXPECT_THAT(Infer1("ConvGradFilter", {T(DType::kF64, {2, 1, 9}), T(DType::kF64, {2, 2, 3})},
                     {{"kernel_shape", Ints({3})}, {"pads", Ints({1, 1})}, {"dilations", Ints({4})}}),
              Yields(T(DType::kF64, {2, 1, 3})));
}

TEST(GradientOpsTest, Flops) {
  // 2 flops per (dY element, weight it meets), the batch counted as 1: 2 * (6*3*3) * (2*3*3).
  EXPECT_EQ(Flops("ConvGradFilter", {F32({kN, 4, 7, 7}), F32({kN, 6, 3, 3})},
                  {{"kernel_shape", Ints({3, 3})}, {"strides", Ints({2, 2})}, {"group", AttrValue::Int(2)}}),
            2 * 54 * 18);
  // One scatter per (dY element, tap), the batch counted as 1.
  EXPECT_EQ(Flops("MaxPoolGrad", {F32({kN, 3, 6, 6}), F32({kN, 3, 3, 3})},
                  {{"kernel_shape", Ints({2, 2})}, {"strides", Ints({2, 2})}}),
            27 * 4);
  EXPECT_EQ(Flops("BatchNormalizationGrad", {F32({kN, 3, 4, 4}), F32({kN, 3, 4, 4})}), 8 * 48);
}

TEST(ConvGradFilterTest, Errors) {
  const AttrMap k3 = {{"kernel_shape", Ints({3, 3})}};
  EXPECT_TRUE(FailsWith(Infer1("ConvGradFilter", {F32({1, 2, 5}), F32({1, 2, 3})}, {{"kernel_shape", Ints({3, 3})}}),
                        "ConvGradFilter", "kernel_shape [3,3] has 2 entries"));
  EXPECT_TRUE(FailsWith(Infer1("ConvGradFilter", {F32({1, 2, 5, 5}), F32({1, 2, 2, 3})}, k3), "ConvGradFilter",
                        "input 1 ('dY') has shape [1,2,2,3] but the forward output"));
  EXPECT_TRUE(FailsWith(Infer1("ConvGradFilter", {F32({1, 2, 5, 5}), F32({1, 2, 3})}, k3), "ConvGradFilter", "rank 4"));
  EXPECT_TRUE(FailsWith(Infer1("ConvGradFilter", {F32({1, 3, 5, 5}), F32({1, 4, 3, 3})},
                               {{"kernel_shape", Ints({3, 3})}, {"group", AttrValue::Int(2)}}),
                        "ConvGradFilter", "group=2 must divide"));
  EXPECT_TRUE(FailsWith(Infer1("ConvGradFilter", {F32({1, 2, 5, 5}), F32({1, 2, 3, 3})},
                               {{"kernel_shape", Ints({3, 3})}, {"strides", Ints({0, 1})}}),
                        "ConvGradFilter", "stride"));
  EXPECT_TRUE(FailsWith(Infer1("ConvGradFilter", {F32({1, 2}), F32({1, 2})}, k3), "ConvGradFilter",
                        "at least one spatial dimension"));
  // The batch must agree: a symbolic dY for a static X is not the forward output.
  EXPECT_TRUE(
      FailsWith(Infer1("ConvGradFilter", {F32({2, 2, 5, 5}), F32({kN, 2, 3, 3})}, k3), "ConvGradFilter", "'dY'"));
  EXPECT_FALSE(Infer1("ConvGradFilter", {F32({1, 2, 5, 5}), F32({1, 2, 3, 3})}).ok());  // kernel_shape required
}

TEST(PoolGradTest, ProducesXShape) {
  const AttrMap window = {{"kernel_shape", Ints({3, 3})}, {"strides", Ints({2, 2})}, {"ceil_mode", AttrValue::Int(1)}};
  EXPECT_THAT(Infer1("MaxPoolGrad", {F32({kN, 3, 6, 6}), F32({kN, 3, 3, 3})}, window), Yields(F32({kN, 3, 6, 6})));
  AttrMap average = window;
  average["count_include_pad"] = AttrValue::Int(1);
  EXPECT_THAT(Infer1("AveragePoolGrad", {F32({2, kN, 6, 6}), F32({2, kN, 3, 3})}, average), Yields(F32({2, kN, 6, 6})));
}

TEST(PoolGradTest, Errors) {
  const AttrMap window = {{"kernel_shape", Ints({2, 2})}, {"strides", Ints({2, 2})}};
  for (const char* op : {"MaxPoolGrad", "AveragePoolGrad"}) {
    EXPECT_TRUE(FailsWith(Infer1(op, {F32({1, 3, 6, 6}), F32({1, 3, 2, 3})}, window), op,
                          "has shape [1,3,2,3] but the forward output it is the gradient of has shape [1,3,3,3]"));
    EXPECT_TRUE(FailsWith(Infer1(op, {F32({1, 3}), F32({1, 3})}, window), op, "at least one spatial dimension"));
    AttrMap bad_ceil = window;
    bad_ceil["ceil_mode"] = AttrValue::Int(2);
    EXPECT_TRUE(FailsWith(Infer1(op, {F32({1, 3, 6, 6}), F32({1, 3, 3, 3})}, bad_ceil), op, "ceil_mode"));
    EXPECT_TRUE(
        FailsWith(Infer1(op, {F32({1, 3, 6, 6}), F32({1, 3, 3, 3})}, {{"kernel_shape", Ints({2})}}), op, "kernel"));
  }
  EXPECT_TRUE(FailsWith(
      Infer1("AveragePoolGrad", {F32({1, 3, 6, 6}), F32({1, 3, 3, 3})},
             {{"kernel_shape", Ints({2, 2})}, {"strides", Ints({2, 2})}, {"count_include_pad", AttrValue::Int(3)}}),
      "AveragePoolGrad", "count_include_pad"));
}

TEST(NormalizationGradTest, ProducesGradientAndNormalized) {
  EXPECT_THAT(Infer("BatchNormalizationGrad", {F32({kN, 3, 4, 4}), F32({kN, 3, 4, 4})}),
              YieldsAll(std::vector<TensorType>{F32({kN, 3, 4, 4}), F32({kN, 3, 4, 4})}));
  EXPECT_THAT(Infer("LayerNormalizationGrad", {T(DType::kF64, {kN, 5}), T(DType::kF64, {kN, 5})},
                    {{"axis", AttrValue::Int(1)}}),
              YieldsAll(std::vector<TensorType>{T(DType::kF64, {kN, 5}), T(DType::kF64, {kN, 5})}));
}

TEST(NormalizationGradTest, Errors) {
  for (const char* op : {"BatchNormalizationGrad", "LayerNormalizationGrad"}) {
    EXPECT_TRUE(FailsWith(Infer(op, {F32({2, 3}), F32({2, 4})}), op,
                          "input 1 ('G') has shape [2,4] but the shape of input 0 ('X') [2,3] is required"));
    EXPECT_TRUE(
        FailsWith(Infer(op, {F32({2, 3}), F32({2, 3})}, {{"epsilon", AttrValue::Float(-1)}}), op, "epsilon is -1"));
  }
  EXPECT_TRUE(FailsWith(Infer("BatchNormalizationGrad", {F32({}), F32({})}), "BatchNormalizationGrad", "scalar"));
  EXPECT_TRUE(FailsWith(Infer("BatchNormalizationGrad", {F32({2, kN}), F32({2, kN})}), "BatchNormalizationGrad",
                        "symbolic channel"));
  EXPECT_TRUE(FailsWith(Infer("LayerNormalizationGrad", {F32({2, 3}), F32({2, 3})}, {{"axis", AttrValue::Int(2)}}),
                        "LayerNormalizationGrad", "axis"));
  EXPECT_FALSE(Infer("BatchNormalizationGrad", {F32({2, 3}), T(DType::kF64, {2, 3})}).ok());  // one dtype T
}

TEST(GatherGradTest, ProducesDataShape) {
  EXPECT_THAT(Infer1("GatherGrad", {F32({kN, 2, 3, 4}), I64({2, 3}), F32({kN, 5, 4})}, {{"axis", AttrValue::Int(1)}}),
              Yields(F32({kN, 5, 4})));
  EXPECT_THAT(Infer1("GatherGrad", {F32({3}), T(DType::kI32, {}), F32({5, 3})}), Yields(F32({5, 3})));
}

TEST(GatherGradTest, Errors) {
  EXPECT_TRUE(FailsWith(Infer1("GatherGrad", {F32({2, 4}), I64({2}), F32({5, 3})}), "GatherGrad",
                        "input 0 ('dY') has shape [2,4] but the forward output it is the gradient of has shape [2,3]"));
  EXPECT_TRUE(FailsWith(Infer1("GatherGrad", {F32({2}), I64({2}), F32({})}), "GatherGrad", "scalar"));
  EXPECT_TRUE(FailsWith(Infer1("GatherGrad", {F32({2, 3}), I64({2}), F32({5, 3})}, {{"axis", AttrValue::Int(2)}}),
                        "GatherGrad", "axis"));
  EXPECT_TRUE(FailsWith(Infer1("GatherGrad", {F32({2, 3}), I64({2}), F32({kN, 3})}), "GatherGrad", "must be static"));
  EXPECT_FALSE(Infer1("GatherGrad", {F32({2, 3}), F32({2}), F32({5, 3})}).ok());  // float indices
}

TEST(SliceGradTest, ProducesDataShape) {
  const Tensor starts = Tensor::FromVector<int64_t>(Shape({2}), {1, 0});
  const Tensor ends = Tensor::FromVector<int64_t>(Shape({2}), {6, 100});
  const Tensor axes = Tensor::FromVector<int64_t>(Shape({2}), {-1, 0});
  const Tensor steps = Tensor::FromVector<int64_t>(Shape({2}), {2, 4});
  // axes pair with starts in the given order: axis 1 takes 1, 3, 5; axis 0 takes 0, 4.
  EXPECT_THAT(Infer1("SliceGrad", {F32({2, 3}), F32({7, 7}), I64({2}), I64({2}), I64({2}), I64({2})}, {},
                     {nullptr, nullptr, &starts, &ends, &axes, &steps}),
              Yields(F32({7, 7})));
  const Tensor s1 = Tensor::FromVector<int64_t>(Shape({1}), {1});
  const Tensor e1 = Tensor::FromVector<int64_t>(Shape({1}), {3});
  const Tensor a1 = Tensor::FromVector<int64_t>(Shape({1}), {1});
  EXPECT_THAT(Infer1("SliceGrad", {F32({kN, 2}), F32({kN, 5}), I64({1}), I64({1}), I64({1}), std::nullopt}, {},
                     {nullptr, nullptr, &s1, &e1, &a1}),
              Yields(F32({kN, 5})));
}

TEST(SliceGradTest, Errors) {
  const Tensor s1 = Tensor::FromVector<int64_t>(Shape({1}), {1});
  const Tensor e1 = Tensor::FromVector<int64_t>(Shape({1}), {3});
  const Tensor zero = Tensor::FromVector<int64_t>(Shape({1}), {0});
  const Tensor two = Tensor::FromVector<int64_t>(Shape({2}), {0, 1});
  EXPECT_TRUE(FailsWith(Infer1("SliceGrad", {F32({3}), F32({5}), I64({1}), I64({1})}, {}, {nullptr, nullptr, &s1, &e1}),
                        "SliceGrad", "input 0 ('dY') has shape [3] but the forward output"));
  EXPECT_TRUE(FailsWith(Infer1("SliceGrad", {F32({2}), F32({5}), I64({1}), I64({1})}, {}, {nullptr, nullptr, &s1}),
                        "SliceGrad", "constant"));
  EXPECT_TRUE(FailsWith(Infer1("SliceGrad", {F32({2}), F32({5}), I64({1}), I64({1}), std::nullopt, I64({1})}, {},
                               {nullptr, nullptr, &s1, &e1, nullptr, &zero}),
                        "SliceGrad", "holds 0"));
  EXPECT_TRUE(
      FailsWith(Infer1("SliceGrad", {F32({2}), F32({5}), I64({1}), I64({2})}, {}, {nullptr, nullptr, &s1, &two}),
                "SliceGrad", "same length"));
  const Tensor repeated = Tensor::FromVector<int64_t>(Shape({2}), {0, -1});
  EXPECT_TRUE(FailsWith(Infer1("SliceGrad", {F32({2}), F32({5}), I64({2}), I64({2}), I64({2})}, {},
                               {nullptr, nullptr, &two, &two, &repeated}),
                        "SliceGrad", "repeats axis 0"));
}

TEST(PadGradTest, ProducesDataShapeAndChecksDY) {
  const Tensor pads = Tensor::FromVector<int64_t>(Shape({4}), {2, 1, 0, 3});
  const AttrMap reflect = {{"mode", AttrValue::String("reflect")}};
  EXPECT_THAT(Infer1("PadGrad", {F32({5, 8}), F32({3, 4}), I64({4})}, reflect, {nullptr, nullptr, &pads}),
              Yields(F32({3, 4})));
  const Tensor last = Tensor::FromVector<int64_t>(Shape({2}), {1, 1});
  const Tensor axis = Tensor::FromVector<int64_t>(Shape({1}), {-1});
  EXPECT_THAT(
      Infer1("PadGrad", {F32({kN, 6}), F32({kN, 4}), I64({2}), I64({1})}, reflect, {nullptr, nullptr, &last, &axis}),
      Yields(F32({kN, 4})));
  EXPECT_TRUE(FailsWith(Infer1("PadGrad", {F32({6, 6}), F32({3, 4}), I64({4})}, reflect, {nullptr, nullptr, &pads}),
                        "PadGrad", "input 0 ('dY') has shape [6,6]"));
  EXPECT_TRUE(FailsWith(Infer1("PadGrad", {F32({5, 8}), F32({3, 4}), I64({4})}, {{"mode", AttrValue::String("mirror")}},
                               {nullptr, nullptr, &pads}),
                        "PadGrad", "unknown mode 'mirror'"));
  EXPECT_TRUE(FailsWith(Infer1("PadGrad", {F32({6, 7}), F32({3, 4}), I64({2})}, reflect, {nullptr, nullptr, &last}),
                        "PadGrad", "padded axes need 4"));
}

}  // namespace
}  // namespace tsr

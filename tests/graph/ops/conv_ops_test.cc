// Shape/dtype inference and FLOP estimates of Conv and ConvTranspose.
#include <optional>
#include <vector>

#include "gmock/gmock.h"
#include "graph/op_def.h"
#include "gtest/gtest.h"
#include "tests/graph/ops/op_test_util.h"

namespace tsr {
namespace {

using ::tsr::testing::F32;
using ::tsr::testing::Flops;
using ::tsr::testing::Infer1;
using ::tsr::testing::Ints;
using ::tsr::testing::IsInvalidWith;
using ::tsr::testing::Yields;

constexpr int64_t kN = kBatchDim;

TEST(ConvTest, LeNetLayerPropagatesTheBatchDim) {
  EXPECT_THAT(Infer1("Conv", {F32({kN, 1, 28, 28}), F32({6, 1, 5, 5})}), Yields(F32({kN, 6, 24, 24})));
  EXPECT_THAT(Infer1("Conv", {F32({kN, 1, 28, 28}), F32({6, 1, 5, 5}), F32({6})}), Yields(F32({kN, 6, 24, 24})));
  EXPECT_THAT(Infer1("Conv", {F32({kN, 1, 28, 28}), F32({6, 1, 5, 5}), std::nullopt}), Yields(F32({kN, 6, 24, 24})));
}

TEST(ConvTest, StridesAndPads) {
  EXPECT_THAT(Infer1("Conv", {F32({1, 3, 224, 224}), F32({64, 3, 7, 7})},
                     {{"strides", Ints({2, 2})}, {"pads", Ints({3, 3, 3, 3})}}),
              Yields(F32({1, 64, 112, 112})));
  // Asymmetric pads: floor((10 + 0 + 2 - 3) / 1) + 1 = 10 and floor((10 + 1 + 0 - 3) / 2) + 1 = 5.
  EXPECT_THAT(Infer1("Conv", {F32({1, 1, 10, 10}), F32({1, 1, 3, 3})},
                     {{"strides", Ints({1, 2})}, {"pads", Ints({0, 1, 2, 0})}}),
              Yields(F32({1, 1, 10, 5})));
}

TEST(ConvTest, Dilations) {
  EXPECT_THAT(Infer1("Conv", {F32({1, 1, 10, 10}), F32({1, 1, 3, 3})}, {{"dilations", Ints({2, 3})}}),
              Yields(F32({1, 1, 6, 4})));
}

TEST(ConvTest, AutoPad) {
  for (const char* mode : {"SAME_UPPER", "SAME_LOWER"}) {
    // ceil(7 / 2) = 4 and ceil(8 / 2) = 4, whichever side takes the odd padding unit.
    EXPECT_THAT(Infer1("Conv", {F32({kN, 2, 7, 8}), F32({4, 2, 3, 3})},
                       {{"auto_pad", AttrValue::String(mode)}, {"strides", Ints({2, 2})}}),
                Yields(F32({kN, 4, 4, 4})))
        << mode;
  }
  EXPECT_THAT(Infer1("Conv", {F32({1, 2, 7, 8}), F32({4, 2, 3, 3})},
                     {{"auto_pad", AttrValue::String("VALID")}, {"strides", Ints({2, 2})}}),
              Yields(F32({1, 4, 3, 3})));
  EXPECT_THAT(Infer1("Conv", {F32({1, 2, 7, 8}), F32({4, 2, 3, 3})}, {{"auto_pad", AttrValue::String("SAME")}}),
              IsInvalidWith("auto_pad is 'SAME' but one of NOTSET, SAME_UPPER, SAME_LOWER, VALID is required"));
  EXPECT_THAT(Infer1("Conv", {F32({1, 2, 7, 8}), F32({4, 2, 3, 3})},
                     {{"auto_pad", AttrValue::String("SAME_UPPER")}, {"pads", Ints({1, 1, 1, 1})}}),
              IsInvalidWith("cannot be combined with auto_pad=SAME_UPPER"));
}

TEST(ConvTest, GroupedAndDepthwise) {
  EXPECT_THAT(Infer1("Conv", {F32({1, 8, 5, 5}), F32({16, 2, 3, 3})}, {{"group", AttrValue::Int(4)}}),
              Yields(F32({1, 16, 3, 3})));
  EXPECT_THAT(Infer1("Conv", {F32({kN, 8, 5, 5}), F32({8, 1, 3, 3})}, {{"group", AttrValue::Int(8)}}),
              Yields(F32({kN, 8, 3, 3})));
}

TEST(ConvTest, OneAndThreeSpatialDims) {
  EXPECT_THAT(Infer1("Conv", {F32({kN, 4, 100}), F32({8, 4, 5})}, {{"strides", Ints({5})}}), Yields(F32({kN, 8, 20})));
  EXPECT_THAT(Infer1("Conv", {F32({2, 1, 8, 8, 8}), F32({3, 1, 3, 3, 3})}, {{"pads", Ints({1, 1, 1, 1, 1, 1})}}),
              Yields(F32({2, 3, 8, 8, 8})));
}

TEST(ConvTest, KernelShapeMustMatchTheWeight) {
  EXPECT_THAT(Infer1("Conv", {F32({1, 1, 8, 8}), F32({2, 1, 3, 3})}, {{"kernel_shape", Ints({3, 3})}}),
              Yields(F32({1, 2, 6, 6})));
  EXPECT_THAT(Infer1("Conv", {F32({1, 1, 8, 8}), F32({2, 1, 3, 3})}, {{"kernel_shape", Ints({5, 5})}}),
              IsInvalidWith("kernel_shape [5,5] does not match the weight [2,1,3,3] (kernel [3,3])"));
}

TEST(ConvTest, OperandErrors) {
  EXPECT_THAT(Infer1("Conv", {F32({1, 3, 8, 8}), F32({64, 3, 3})}),
              IsInvalidWith("node 'n' (Conv): input 1 ('W') has shape [64,3,3] but a rank-4 weight is required"));
  EXPECT_THAT(Infer1("Conv", {F32({3, 8}), F32({4, 3})}),
              IsInvalidWith("input 0 ('X') has shape [3,8] but [N,C,D1,...] with at least one spatial dimension"));
  EXPECT_THAT(
      Infer1("Conv", {F32({1, 3, 8, 8}), F32({4, 2, 3, 3})}),
      IsInvalidWith("takes 2 input channels per group but input 0 ('X') [1,3,8,8] has 3 (3 channels, group=1)"));
  EXPECT_THAT(Infer1("Conv", {F32({1, 6, 8, 8}), F32({4, 2, 3, 3})}, {{"group", AttrValue::Int(4)}}),
              IsInvalidWith("has 6 channels, which group=4 does not divide"));
  EXPECT_THAT(Infer1("Conv", {F32({1, 6, 8, 8}), F32({4, 2, 3, 3})}, {{"group", AttrValue::Int(3)}}),
              IsInvalidWith("has 4 output channels, which group=3 does not divide"));
  EXPECT_THAT(Infer1("Conv", {F32({1, 6, 8, 8}), F32({4, 2, 3, 3})}, {{"group", AttrValue::Int(0)}}),
              IsInvalidWith("group is 0 but must be in [1, 6]"));
  EXPECT_THAT(
      Infer1("Conv", {F32({1, 6, 8, 8}), F32({4, 2, 3, 3})}, {{"group", AttrValue::Int(int64_t{1} << 62)}}),
      IsInvalidWith("group is 4611686018427387904 but must be in [1, 6] (input 0 ('X') [1,6,8,8] has 6 channels)"));
  EXPECT_THAT(Infer1("Conv", {F32({1, 3, 8, 8}), F32({4, 3, 3, 3}), F32({3})}),
              IsInvalidWith("input 2 ('B') has shape [3] but [4] (one bias per output channel) is required"));
  EXPECT_THAT(Infer1("Conv", {TensorType(DType::kI32, Shape{1, 3, 8, 8}), TensorType(DType::kI32, Shape{4, 3, 3, 3})}),
              IsInvalidWith("input 0 ('X') has dtype i32"));
  EXPECT_THAT(Infer1("Conv", {F32({1, 3, 8, 8}), TensorType(DType::kF16, Shape{4, 3, 3, 3})}),
              IsInvalidWith("they must match"));
}

TEST(ConvTest, WindowErrors) {
  EXPECT_THAT(Infer1("Conv", {F32({1, 1, 8, 8}), F32({1, 1, 3, 3})}, {{"pads", Ints({1, 1})}}),
              IsInvalidWith("pads has 2 values [1,1] but 4 (begin and end for each of 2 spatial dimensions)"));
  EXPECT_THAT(Infer1("Conv", {F32({1, 1, 4, 4}), F32({1, 1, 5, 5})}),
              IsInvalidWith("spatial dimension 0: the window spans 5 (kernel 5, dilation 1) but the padded input "
                            "has only 4 positions"));
  EXPECT_THAT(Infer1("Conv", {F32({1, 1, 5, 5}), F32({1, 1, 3, 3})}, {{"dilations", Ints({3, 1})}}),
              IsInvalidWith("the window spans 7 (kernel 3, dilation 3)"));
  EXPECT_THAT(Infer1("Conv", {F32({1, 1, 8, 8}), F32({1, 1, 3, 3})}, {{"strides", Ints({0, 1})}}),
              IsInvalidWith("strides[0] is 0 but must be >= 1"));
  EXPECT_THAT(Infer1("Conv", {F32({1, 1, 8, 8}), F32({1, 1, 3, 3})}, {{"strides", Ints({1, 1, 1})}}),
              IsInvalidWith("strides has 3 values [1,1,1] but the input has 2 spatial dimensions"));
}

TEST(ConvTest, SymbolicChannelsAndSpatialDimsAreErrors) {
  EXPECT_THAT(Infer1("Conv", {F32({1, kN, 8, 8}), F32({4, 3, 3, 3})}),
              IsInvalidWith("input 0 ('X') has shape [1,N,8,8] with a symbolic channel dimension"));
  EXPECT_THAT(Infer1("Conv", {F32({1, 3, kN, 8}), F32({4, 3, 3, 3})}),
              IsInvalidWith("spatial dimension 0 is the symbolic batch dimension N"));
  EXPECT_THAT(Infer1("Conv", {F32({kN, 3, 8, 8}), F32({kN, 3, 3, 3})}),
              IsInvalidWith("input 1 ('W') has shape [N,3,3,3] but a weight must be static"));
}

TEST(ConvTest, FlopsAreTwoPerMultiplyAdd) {
  // 6x24x24 outputs, each 1x5x5 multiply-adds; the batch counts as 1.
  EXPECT_EQ(Flops("Conv", {F32({kN, 1, 28, 28}), F32({6, 1, 5, 5}), F32({6})}), 2 * 6 * 24 * 24 * 25);
  // Grouped: each of the 16x3x3 outputs reads C/group = 2 channels x 3x3.
  EXPECT_EQ(Flops("Conv", {F32({1, 8, 5, 5}), F32({16, 2, 3, 3})}, {{"group", AttrValue::Int(4)}}),
            2 * 16 * 3 * 3 * 2 * 9);
  EXPECT_EQ(Flops("Conv", {F32({4, 3, 224, 224}), F32({64, 3, 7, 7})},
                  {{"strides", Ints({2, 2})}, {"pads", Ints({3, 3, 3, 3})}}),
            int64_t{2} * 4 * 64 * 112 * 112 * 3 * 49);
}

TEST(ConvTransposeTest, UpsamplingLayer) {
  // 2 * (7 - 1) + 4 - 1 - 1 = 14.
  EXPECT_THAT(Infer1("ConvTranspose", {F32({kN, 16, 7, 7}), F32({16, 8, 4, 4}), F32({8})},
                     {{"strides", Ints({2, 2})}, {"pads", Ints({1, 1, 1, 1})}}),
              Yields(F32({kN, 8, 14, 14})));
}

TEST(ConvTransposeTest, GroupsMultiplyTheOutputChannels) {
  EXPECT_THAT(Infer1("ConvTranspose", {F32({1, 4, 3, 3}), F32({4, 3, 3, 3}), F32({6})}, {{"group", AttrValue::Int(2)}}),
              Yields(F32({1, 6, 5, 5})));
}

TEST(ConvTransposeTest, OutputPaddingAndOutputShape) {
  EXPECT_THAT(Infer1("ConvTranspose", {F32({1, 1, 3, 3}), F32({1, 1, 3, 3})},
                     {{"strides", Ints({2, 2})}, {"output_padding", Ints({1, 0})}}),
              Yields(F32({1, 1, 8, 7})));
  EXPECT_THAT(Infer1("ConvTranspose", {F32({1, 1, 3, 3}), F32({1, 1, 3, 3})},
                     {{"strides", Ints({2, 2})}, {"output_shape", Ints({6, 10})}}),
              Yields(F32({1, 1, 6, 10})));
  EXPECT_THAT(Infer1("ConvTranspose", {F32({1, 1, 3, 3}), F32({1, 1, 3, 3})},
                     {{"strides", Ints({2, 2})}, {"output_padding", Ints({2, 0})}}),
              IsInvalidWith("output_padding[0] is 2 but must be smaller than stride 2 or dilation 1"));
  EXPECT_THAT(Infer1("ConvTranspose", {F32({1, 1, 3, 3}), F32({1, 1, 3, 3})}, {{"output_shape", Ints({6})}}),
              IsInvalidWith("output_shape has 1 values [6] but the input has 2 spatial dimensions"));
}

TEST(ConvTransposeTest, SameAutoPadMultipliesByTheStride) {
  for (const char* mode : {"SAME_UPPER", "SAME_LOWER"}) {
    EXPECT_THAT(Infer1("ConvTranspose", {F32({kN, 2, 5, 3}), F32({2, 2, 3, 3})},
                       {{"auto_pad", AttrValue::String(mode)}, {"strides", Ints({2, 3})}}),
                Yields(F32({kN, 2, 10, 9})))
        << mode;
  }
}

TEST(ConvTransposeTest, Errors) {
  EXPECT_THAT(Infer1("ConvTranspose", {F32({1, 4, 3, 3}), F32({3, 4, 3, 3})}),
              IsInvalidWith("is laid out [C, M/group, k...] with C=3 but input 0 ('X') [1,4,3,3] has 4 channels"));
  EXPECT_THAT(Infer1("ConvTranspose", {F32({1, 4, 3, 3}), F32({4, 3, 3, 3}), F32({3})}, {{"group", AttrValue::Int(2)}}),
              IsInvalidWith("input 2 ('B') has shape [3] but [6]"));
  EXPECT_THAT(Infer1("ConvTranspose", {F32({1, 1, 2, 2}), F32({1, 1, 1, 1})}, {{"pads", Ints({1, 0, 1, 0})}}),
              IsInvalidWith("spatial dimension 0 of size 2 gives an output of size 0"));
  EXPECT_THAT(Infer1("ConvTranspose", {F32({1, 3, 2, 2}), F32({3, 1, 1, 1})}, {{"group", AttrValue::Int(2)}}),
              IsInvalidWith("has 3 channels, which group=2 does not divide"));
  EXPECT_THAT(Infer1("ConvTranspose", {F32({1, 1, 2, 2}), F32({1, 1, 1})}),
              IsInvalidWith("input 1 ('W') has shape [1,1,1] but a rank-4 weight is required"));
  EXPECT_THAT(Infer1("ConvTranspose", {F32({1, 1, 2, 2}), F32({1, 1, 1, 1})}, {{"ceil_mode", AttrValue::Int(1)}}),
              IsInvalidWith("unknown attribute 'ceil_mode'"));
}

TEST(ConvTransposeTest, FlopsScatterEachInputThroughItsWeights) {
  // 4x3x3 inputs, each through M/group x 3x3 = 3x9 weights.
  EXPECT_EQ(Flops("ConvTranspose", {F32({kN, 4, 3, 3}), F32({4, 3, 3, 3})}, {{"group", AttrValue::Int(2)}}),
            2 * 4 * 9 * 3 * 9);
}

}  // namespace
}  // namespace tsr

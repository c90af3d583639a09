// Shape/dtype inference and FLOP estimates of MaxPool, AveragePool and
// GlobalAveragePool.
#include <vector>

#include "gmock/gmock.h"
#include "graph/op_def.h"
#include "gtest/gtest.h"
#include "tests/graph/ops/op_test_util.h"

namespace tsr {
namespace {

using ::tsr::testing::F32;
using ::tsr::testing::Flops;
using ::tsr::testing::I64;
using ::tsr::testing::Infer;
using ::tsr::testing::Infer1;
using ::tsr::testing::Ints;
using ::tsr::testing::IsInvalidWith;
using ::tsr::testing::Yields;
using ::tsr::testing::YieldsAll;

constexpr int64_t kN = kBatchDim;

AttrMap Window(std::vector<int64_t> kernel, std::vector<int64_t> strides = {}) {
  AttrMap attrs = {{"kernel_shape", Ints(std::move(kernel))}};
  if (!strides.empty()) attrs["strides"] = Ints(std::move(strides));
  return attrs;
}

AttrMap With(AttrMap attrs, const char* name, AttrValue value) {
  attrs[name] = std::move(value);
  return attrs;
}

TEST(MaxPoolTest, AlwaysProducesValuesAndInt64Indices) {
  EXPECT_THAT(Infer("MaxPool", {F32({kN, 3, 32, 32})}, Window({2, 2}, {2, 2})),
              YieldsAll(std::vector<TensorType>{F32({kN, 3, 16, 16}), I64({kN, 3, 16, 16})}));
  EXPECT_THAT(Infer("MaxPool", {TensorType(DType::kU8, Shape{1, 1, 4})}, Window({2})),
              YieldsAll(std::vector<TensorType>{TensorType(DType::kU8, Shape{1, 1, 3}), I64({1, 1, 3})}));
}

TEST(MaxPoolTest, CeilMode) {
  const AttrMap window = Window({3, 3}, {2, 2});
  EXPECT_THAT(Infer1("MaxPool", {F32({1, 1, 6, 7})}, window), Yields(F32({1, 1, 2, 3})));
  EXPECT_THAT(Infer1("MaxPool", {F32({1, 1, 6, 7})}, With(window, "ceil_mode", AttrValue::Int(1))),
              Yields(F32({1, 1, 3, 3})));
  // A last window that would start in the end padding is dropped: ceil((6 + 2 - 3) / 2) + 1 = 4 windows,
  // the 4th starting at position 6, past the input.
  EXPECT_THAT(Infer1("MaxPool", {F32({1, 1, 6, 6})},
                     With(With(window, "ceil_mode", AttrValue::Int(1)), "pads", Ints({0, 0, 2, 2}))),
              Yields(F32({1, 1, 3, 3})));
  EXPECT_THAT(Infer1("MaxPool", {F32({1, 1, 6, 6})}, With(window, "ceil_mode", AttrValue::Int(2))),
              IsInvalidWith("ceil_mode' is 2 but must be 0 or 1"));
}

TEST(MaxPoolTest, DilationsAndPads) {
  EXPECT_THAT(Infer1("MaxPool", {F32({1, 1, 8, 8})}, With(Window({2, 2}), "dilations", Ints({3, 1}))),
              Yields(F32({1, 1, 5, 7})));
  EXPECT_THAT(Infer1("MaxPool", {F32({1, 1, 8, 8})}, With(Window({3, 3}, {2, 2}), "pads", Ints({1, 1, 1, 1}))),
              Yields(F32({1, 1, 4, 4})));
}

TEST(MaxPoolTest, AutoPad) {
  for (const char* mode : {"SAME_UPPER", "SAME_LOWER"}) {
    // Kernel 2 on 5 positions needs one padding unit, placed at the end or the beginning.
    EXPECT_THAT(Infer1("MaxPool", {F32({kN, 2, 5, 5})}, With(Window({2, 2}), "auto_pad", AttrValue::String(mode))),
                Yields(F32({kN, 2, 5, 5})))
        << mode;
    EXPECT_THAT(
        Infer1("MaxPool", {F32({kN, 2, 5, 5})}, With(Window({3, 3}, {2, 2}), "auto_pad", AttrValue::String(mode))),
        Yields(F32({kN, 2, 3, 3})))
        << mode;
  }
  EXPECT_THAT(
      Infer1("MaxPool", {F32({1, 2, 5, 5})}, With(Window({3, 3}, {2, 2}), "auto_pad", AttrValue::String("VALID"))),
      Yields(F32({1, 2, 2, 2})));
  EXPECT_THAT(Infer1("MaxPool", {F32({1, 2, 5, 5})}, With(Window({2, 2}), "auto_pad", AttrValue::String("valid"))),
              IsInvalidWith("auto_pad is 'valid'"));
}

TEST(MaxPoolTest, ChannelsMayBeSymbolic) {
  EXPECT_THAT(Infer1("MaxPool", {F32({1, kN, 4, 4})}, Window({2, 2}, {2, 2})), Yields(F32({1, kN, 2, 2})));
}

TEST(MaxPoolTest, Errors) {
  EXPECT_THAT(Infer1("MaxPool", {F32({1, 1, 8, 8})}), IsInvalidWith("required attribute 'kernel_shape'"));
  EXPECT_THAT(Infer1("MaxPool", {F32({1, 1, 3, 8})}, Window({4, 4})),
              IsInvalidWith("spatial dimension 0: the window spans 4 (kernel 4, dilation 1) but the padded input has "
                            "only 3 positions"));
  EXPECT_THAT(Infer1("MaxPool", {F32({1, 1, 8, 8})}, Window({3})),
              IsInvalidWith("kernel_shape has 1 values [3] but the input has 2 spatial dimensions"));
  EXPECT_THAT(Infer1("MaxPool", {F32({1, 1, 8, 8})}, With(Window({2, 2}), "pads", Ints({1, 1, 1}))),
              IsInvalidWith("pads has 3 values"));
  EXPECT_THAT(Infer1("MaxPool", {F32({1, 1, 8, 8})}, With(Window({2, 2}), "pads", Ints({2, 0, 0, 0}))),
              IsInvalidWith("pads 2+0 of spatial dimension 0 must be smaller than the window span 2"));
  EXPECT_THAT(Infer1("MaxPool", {F32({1, 1, 8, 8})}, With(Window({2, 2}), "storage_order", AttrValue::Int(3))),
              IsInvalidWith("storage_order' is 3 but must be 0 or 1"));
  EXPECT_THAT(Infer1("MaxPool", {F32({1, 8})}, Window({2})),
              IsInvalidWith("input 0 ('X') has shape [1,8] but [N,C,D1,...]"));
  EXPECT_THAT(Infer1("MaxPool", {TensorType(DType::kBool, Shape{1, 1, 8})}, Window({2})),
              IsInvalidWith("has dtype bool"));
  EXPECT_THAT(Infer1("MaxPool", {F32({1, 1, kN, 8})}, Window({2, 2})),
              IsInvalidWith("spatial dimension 0 is the symbolic batch dimension N"));
}

TEST(MaxPoolTest, FlopsAreKernelTapsPerOutput) {
  EXPECT_EQ(Flops("MaxPool", {F32({kN, 3, 32, 32})}, Window({2, 2}, {2, 2})), 3 * 16 * 16 * 4);
}

TEST(AveragePoolTest, ShapesFollowTheSameWindowRules) {
  EXPECT_THAT(Infer("AveragePool", {F32({kN, 8, 7, 7})}, With(Window({3, 3}, {2, 2}), "pads", Ints({1, 1, 1, 1}))),
              YieldsAll(std::vector<TensorType>{F32({kN, 8, 4, 4})}));
  EXPECT_THAT(Infer1("AveragePool", {F32({1, 1, 6, 6})},
                     With(With(Window({3, 3}, {2, 2}), "ceil_mode", AttrValue::Int(1)), "count_include_pad",
                          AttrValue::Int(1))),
              Yields(F32({1, 1, 3, 3})));
  EXPECT_THAT(Infer1("AveragePool", {F32({1, 1, 9})}, With(Window({3}), "dilations", Ints({2}))),
              Yields(F32({1, 1, 5})));
  EXPECT_THAT(
      Infer1("AveragePool", {F32({1, 1, 7})}, With(Window({2}, {2}), "auto_pad", AttrValue::String("SAME_LOWER"))),
      Yields(F32({1, 1, 4})));
}

TEST(AveragePoolTest, Errors) {
  EXPECT_THAT(Infer1("AveragePool", {TensorType(DType::kI32, Shape{1, 1, 8})}, Window({2})),
              IsInvalidWith("input 0 ('X') has dtype i32"));
  EXPECT_THAT(Infer1("AveragePool", {F32({1, 1, 8})}, With(Window({2}), "count_include_pad", AttrValue::Int(-1))),
              IsInvalidWith("count_include_pad' is -1 but must be 0 or 1"));
  EXPECT_THAT(Infer1("AveragePool", {F32({1, 1, 8})}, With(Window({2}), "storage_order", AttrValue::Int(0))),
              IsInvalidWith("unknown attribute 'storage_order'"));
  EXPECT_THAT(Infer1("AveragePool", {F32({1, 1, 2})}, Window({3})), IsInvalidWith("the window spans 3"));
}

TEST(AveragePoolTest, FlopsAreKernelTapsPerOutput) {
  EXPECT_EQ(Flops("AveragePool", {F32({2, 4, 6, 6})}, Window({3, 3}, {3, 3})), 2 * 4 * 2 * 2 * 9);
}

TEST(GlobalAveragePoolTest, KeepsSpatialDimsAsOne) {
  EXPECT_THAT(Infer1("GlobalAveragePool", {F32({kN, 64, 7, 7})}), Yields(F32({kN, 64, 1, 1})));
  EXPECT_THAT(Infer1("GlobalAveragePool", {F32({2, 3, 4, 5, 6})}), Yields(F32({2, 3, 1, 1, 1})));
  EXPECT_THAT(Infer1("GlobalAveragePool", {F32({2, 3})}), IsInvalidWith("input 0 ('X') has shape [2,3]"));
  EXPECT_THAT(Infer1("GlobalAveragePool", {TensorType(DType::kI64, Shape{1, 1, 2})}), IsInvalidWith("has dtype i64"));
  EXPECT_EQ(Flops("GlobalAveragePool", {F32({kN, 64, 7, 7})}), 64 * 49);
}

}  // namespace
}  // namespace tsr

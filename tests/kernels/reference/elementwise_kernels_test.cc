// Tests of the reference elementwise kernels (kernels/reference/elementwise_kernels.cc)
// against hand-computed values.
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/attribute.h"
#include "graph/op_registry.h"
#include "gtest/gtest.h"
#include "kernels/kernel.h"
#include "kernels/reference/convert.h"
#include "kernels/run_op.h"
#include "tests/kernels/kernel_test_util.h"

namespace tsr {
namespace {

using ::tsr::testing::ExpectValues;
using ::tsr::testing::kInf;
using ::tsr::testing::kNaN;
using ::tsr::testing::Make;
using ::tsr::testing::RunOne;

TEST(ElementwiseKernelsTest, RegisteredForEveryAcceptedDType) {
  for (const char* op : {"Add", "Sub", "Mul", "Div", "Pow", "Neg", "Abs", "Exp", "Log", "Sqrt", "Rsqrt", "Reciprocal",
                         "Max", "Min", "Equal", "Less", "Greater", "Cast", "Clip"}) {
    SCOPED_TRACE(op);
    absl::StatusOr<const OpDef*> def = OpRegistry::Global().Lookup(op);
    ASSERT_TRUE(def.ok());
    const TypeConstraintDef* c = (*def)->FindTypeConstraint((*def)->inputs[0].type_var);
    ASSERT_NE(c, nullptr);
    std::vector<DType> expected;
    for (DType d : kAllDTypes) {
      if (Contains(c->allowed, d)) expected.push_back(d);
    }
    EXPECT_EQ(KernelRegistry::Global().DTypesFor(op, kReferenceDevice), expected);
  }
  // Where is keyed by its bool condition and serves every X dtype.
  EXPECT_EQ(KernelRegistry::Global().DTypesFor("Where", kReferenceDevice), std::vector<DType>{DType::kBool});
}

TEST(ElementwiseKernelsTest, AddBroadcastThreeOneFiveByFourOne) {
  std::vector<double> a(15), b(4);
  for (int i = 0; i < 15; ++i) a[i] = i;             // a[x][0][z] = 5x + z
  for (int i = 0; i < 4; ++i) b[i] = 100 * (i + 1);  // b[y][0] = 100(y + 1)
  for (DType dtype : {DType::kF32, DType::kF64, DType::kI32, DType::kI64}) {
    SCOPED_TRACE(DTypeName(dtype));
    Tensor out = RunOne("Add", {Make(dtype, Shape{3, 1, 5}, a), Make(dtype, Shape{4, 1}, b)});
    ASSERT_EQ(out.shape(), (Shape{3, 4, 5}));
    std::vector<double> expected;
    for (int x = 0; x < 3; ++x) {
      for (int y = 0; y < 4; ++y) {
        for (int z = 0; z < 5; ++z) expected.push_back(5 * x + z + 100 * (y + 1));
      }
    }
    ExpectValues(out, expected);
  }
}

TEST(ElementwiseKernelsTest, ArithmeticEveryDType) {
  for (DType dtype : kNumericDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    const Tensor a = Make(dtype, Shape{4}, {6, 9, 20, 7});
    const Tensor b = Make(dtype, Shape{4}, {3, 2, 5, 7});
    ExpectValues(RunOne("Add", {a, b}), {9, 11, 25, 14});
    ExpectValues(RunOne("Sub", {a, b}), {3, 7, 15, 0});
    ExpectValues(RunOne("Mul", {a, b}), {18, 18, 100, 49});
    if (IsInteger(dtype)) {
      ExpectValues(RunOne("Div", {a, b}), {2, 4, 4, 1});
    } else {
      ExpectValues(RunOne("Div", {a, b}), {2, 4.5, 4, 1});
    }
  }
}

TEST(ElementwiseKernelsTest, ScalarOperandAndZeroSize) {
  Tensor out = RunOne("Mul", {Tensor::FromVector<float>(Shape{2, 2}, {1, 2, 3, 4}), Tensor::Scalar<float>(0.5f)});
  ExpectValues(out, {0.5, 1, 1.5, 2});
  out = RunOne("Sub", {Tensor::Scalar<double>(10), Tensor::FromVector<double>(Shape{3}, {1, 2, 3})});
  ExpectValues(out, {9, 8, 7});
  out = RunOne("Add", {Tensor(DType::kF32, Shape{0, 3}), Tensor::FromVector<float>(Shape{3}, {1, 2, 3})});
  EXPECT_EQ(out.shape(), (Shape{0, 3}));
  out = RunOne("Div", {Tensor(DType::kI32, Shape{0}), Tensor(DType::kI32, Shape{1})});  // no element divides by zero
  EXPECT_EQ(out.num_elements(), 0);
}

TEST(ElementwiseKernelsTest, IntegerDivisionTruncatesAndRejectsZero) {
  ExpectValues(
      RunOne("Div", {Make(DType::kI32, Shape{4}, {7, -7, 7, -7}), Make(DType::kI32, Shape{4}, {2, 2, -2, -2})}),
      {3, -3, -3, 3});
  absl::StatusOr<std::vector<Tensor>> out =
      RunOp("Div", {Make(DType::kI64, Shape{2}, {1, 2}), Make(DType::kI64, Shape{2}, {1, 0})});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("division by zero"), std::string::npos) << out.status();
  EXPECT_NE(out.status().message().find("node 'Div'"), std::string::npos) << out.status();
  // min / -1 wraps instead of trapping.
  ExpectValues(
      RunOne("Div", {Tensor::Scalar<int32_t>(std::numeric_limits<int32_t>::min()), Tensor::Scalar<int32_t>(-1)}),
      {static_cast<double>(std::numeric_limits<int32_t>::min())});
}

TEST(ElementwiseKernelsTest, FloatDivisionByZeroIsIeee) {
  ExpectValues(RunOne("Div", {Make(DType::kF32, Shape{3}, {1, -1, 0}), Make(DType::kF32, Shape{3}, {0, 0, 0})}),
               {kInf, -kInf, kNaN});
}

TEST(ElementwiseKernelsTest, IntegerOverflowWraps) {
  ExpectValues(RunOne("Add", {Tensor::Scalar<int8_t>(127), Tensor::Scalar<int8_t>(1)}), {-128});
  ExpectValues(RunOne("Mul", {Tensor::Scalar<uint8_t>(16), Tensor::Scalar<uint8_t>(17)}), {16});  // 272 mod 256
  ExpectValues(RunOne("Sub", {Tensor::Scalar<uint8_t>(0), Tensor::Scalar<uint8_t>(1)}), {255});
  ExpectValues(RunOne("Neg", {Tensor::Scalar<int8_t>(-128)}), {-128});
}

TEST(ElementwiseKernelsTest, HalfPrecisionRoundsOnce) {
  // 1 + 2^-11 is a tie in f16 (10 mantissa bits): rounds to even, 1.
  ExpectValues(
      RunOne("Add", {Make(DType::kF16, Shape{2}, {1, 1}), Make(DType::kF16, Shape{2}, {std::ldexp(1, -11), 0.5})}),
      {1, 1.5});
  ExpectValues(RunOne("Mul", {Make(DType::kBF16, Shape{1}, {3}), Make(DType::kBF16, Shape{1}, {0.5})}), {1.5});
}

TEST(ElementwiseKernelsTest, Pow) {
  ExpectValues(RunOne("Pow", {Make(DType::kF32, Shape{3}, {2, 4, -8}), Make(DType::kF32, Shape{3}, {3, 0.5, 2})}),
               {8, 2, 64});
  // Exponent of another dtype, broadcast.
  ExpectValues(RunOne("Pow", {Make(DType::kF64, Shape{2}, {3, 1.5}), Tensor::Scalar<int64_t>(2)}), {9, 2.25});
  ExpectValues(
      RunOne("Pow", {Make(DType::kI32, Shape{4}, {2, -3, 1, -1}), Make(DType::kI64, Shape{4}, {10, 3, -5, -3})}),
      {1024, -27, 1, -1});
  ExpectValues(RunOne("Pow", {Make(DType::kI64, Shape{2}, {2, 9}), Make(DType::kF32, Shape{2}, {-1, 0.5})}), {0, 3});
  EXPECT_FALSE(RunOp("Pow", {Tensor::Scalar<int32_t>(0), Tensor::Scalar<int32_t>(-1)}).ok());
}

TEST(ElementwiseKernelsTest, UnaryMath) {
  ExpectValues(RunOne("Neg", {Make(DType::kF32, Shape{3}, {1.5, -2, 0})}), {-1.5, 2, 0});
  ExpectValues(RunOne("Neg", {Make(DType::kI64, Shape{2}, {5, -6})}), {-5, 6});
  ExpectValues(RunOne("Abs", {Make(DType::kBF16, Shape{3}, {-2.5, 3, kNaN})}), {2.5, 3, kNaN});
  ExpectValues(RunOne("Abs", {Make(DType::kI8, Shape{2}, {-7, 7})}), {7, 7});
  ExpectValues(RunOne("Abs", {Make(DType::kU8, Shape{1}, {200})}), {200});
  ExpectValues(RunOne("Exp", {Make(DType::kF64, Shape{3}, {0, 1, -kInf})}), {1, std::exp(1.0), 0});
  ExpectValues(RunOne("Log", {Make(DType::kF64, Shape{4}, {1, std::exp(2.0), 0, -1})}), {0, 2, -kInf, kNaN});
  ExpectValues(RunOne("Sqrt", {Make(DType::kF32, Shape{3}, {4, 2.25, -1})}), {2, 1.5, kNaN});
  ExpectValues(RunOne("Rsqrt", {Make(DType::kF16, Shape{3}, {4, 0.25, 0})}), {0.5, 2, kInf});
  ExpectValues(RunOne("Reciprocal", {Make(DType::kF64, Shape{3}, {4, -0.5, 0})}), {0.25, -2, kInf});
  Tensor exp32 = RunOne("Exp", {Tensor::Scalar<float>(1.0f)});
  EXPECT_EQ(exp32.data<float>()[0], static_cast<float>(std::exp(1.0)));
}

TEST(ElementwiseKernelsTest, VariadicMaxMinBroadcastAndPropagateNaN) {
  const Tensor a = Make(DType::kF32, Shape{2, 2}, {1, 5, kNaN, -1});
  const Tensor b = Make(DType::kF32, Shape{2}, {3, 2});
  const Tensor c = Tensor::Scalar<float>(0);
  ExpectValues(RunOne("Max", {a, b, c}), {3, 5, kNaN, 2});
  ExpectValues(RunOne("Min", {a, b, c}), {0, 0, kNaN, -1});
  ExpectValues(RunOne("Max", {a}), {1, 5, kNaN, -1});
  // NaN in a later operand propagates too.
  ExpectValues(RunOne("Min", {Make(DType::kF64, Shape{1}, {1}), Make(DType::kF64, Shape{1}, {kNaN})}), {kNaN});
  ExpectValues(RunOne("Max", {Make(DType::kI64, Shape{2}, {-(int64_t{1} << 60), 1}), Make(DType::kI64, Shape{1}, {0})}),
               {0, 1});
  ExpectValues(RunOne("Min", {Make(DType::kU8, Shape{2}, {200, 3}), Make(DType::kU8, Shape{2}, {100, 30})}), {100, 3});
}

TEST(ElementwiseKernelsTest, Comparisons) {
  const Tensor a = Make(DType::kF32, Shape{4}, {1, 2, kNaN, 3});
  const Tensor b = Make(DType::kF32, Shape{4}, {1, 3, kNaN, 2});
  ExpectValues(RunOne("Equal", {a, b}), {1, 0, 0, 0});
  ExpectValues(RunOne("Less", {a, b}), {0, 1, 0, 0});
  ExpectValues(RunOne("Greater", {a, b}), {0, 0, 0, 1});
  EXPECT_EQ(RunOne("Equal", {a, b}).dtype(), DType::kBool);
  ExpectValues(RunOne("Equal", {Make(DType::kBool, Shape{2}, {1, 0}), Make(DType::kBool, Shape{1}, {1})}), {1, 0});
  ExpectValues(RunOne("Less", {Make(DType::kI8, Shape{2, 1}, {-1, 5}), Make(DType::kI8, Shape{2}, {0, 5})}),
               {1, 1, 0, 0});
  ExpectValues(RunOne("Greater", {Make(DType::kU8, Shape{2}, {255, 0}), Make(DType::kU8, Shape{}, {1})}), {1, 0});
}

TEST(ElementwiseKernelsTest, WhereEveryDTypeBroadcast) {
  const Tensor cond = Make(DType::kBool, Shape{2, 1}, {1, 0});
  for (DType dtype : kAllDTypes) {
    SCOPED_TRACE(DTypeName(dtype));
    const Tensor x = Make(dtype, Shape{3}, {1, 0, 1});
    const Tensor y = Make(dtype, Shape{}, {0});
    Tensor out = RunOne("Where", {cond, x, y});
    ASSERT_EQ(out.shape(), (Shape{2, 3}));
    EXPECT_EQ(out.dtype(), dtype);
    ExpectValues(out, {1, 0, 1, 0, 0, 0});
  }
}

TEST(ElementwiseKernelsTest, CastAllDTypePairsOnSmallValues) {
  // 0, 1 and 5 exist in every type but bool; bool gets 0/1.
  for (DType from : kAllDTypes) {
    for (DType to : kAllDTypes) {
      SCOPED_TRACE(absl::StrCat(DTypeName(from), " -> ", DTypeName(to)));
      const bool boolish = from == DType::kBool;
      Tensor out = RunOne("Cast", {Make(from, Shape{3}, {0, 1, boolish ? 1.0 : 5.0})}, {{"to", AttrValue::Type(to)}});
      EXPECT_EQ(out.dtype(), to);
      ExpectValues(out, {0, 1, boolish || to == DType::kBool ? 1.0 : 5.0});
    }
  }
}

TEST(ElementwiseKernelsTest, CastFloatToIntTruncatesAndSaturates) {
  const Tensor in = Make(DType::kF32, Shape{7}, {2.9, -2.9, kNaN, 1e10, -1e10, kInf, -0.5});
  ExpectValues(RunOne("Cast", {in}, {{"to", AttrValue::Type(DType::kI32)}}),
               {2, -2, 0, 2147483647.0, -2147483648.0, 2147483647.0, 0});
  ExpectValues(RunOne("Cast", {in}, {{"to", AttrValue::Type(DType::kU8)}}), {2, 0, 0, 255, 0, 255, 0});
  ExpectValues(RunOne("Cast", {in}, {{"to", AttrValue::Type(DType::kI8)}}), {2, -2, 0, 127, -128, 127, 0});
  Tensor i64 = RunOne("Cast", {Make(DType::kF64, Shape{2}, {1e19, -1e19})}, {{"to", AttrValue::Type(DType::kI64)}});
  EXPECT_EQ(i64.data<int64_t>()[0], std::numeric_limits<int64_t>::max());
  EXPECT_EQ(i64.data<int64_t>()[1], std::numeric_limits<int64_t>::min());
  // Bool from nonzero: NaN and -0.5 are nonzero, -0 is zero.
  ExpectValues(
      RunOne("Cast", {Make(DType::kF32, Shape{4}, {kNaN, -0.5, -0.0, 0})}, {{"to", AttrValue::Type(DType::kBool)}}),
      {1, 1, 0, 0});
}

TEST(ElementwiseKernelsTest, CastIntegerNarrowingWraps) {
  ExpectValues(RunOne("Cast", {Make(DType::kI32, Shape{3}, {300, -1, 128})}, {{"to", AttrValue::Type(DType::kU8)}}),
               {44, 255, 128});
  ExpectValues(RunOne("Cast", {Make(DType::kI32, Shape{2}, {200, -129})}, {{"to", AttrValue::Type(DType::kI8)}}),
               {-56, 127});
}

TEST(ElementwiseKernelsTest, CastToHalfRoundsCorrectly) {
  // f64 -> f16 without double rounding: 1 + 2^-11 + 2^-30 is just above the tie
  // between 1 and 1 + 2^-10, so it rounds up (via f32 it would tie and round down).
  const double x = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -30);
  ExpectValues(RunOne("Cast", {Tensor::Scalar<double>(x)}, {{"to", AttrValue::Type(DType::kF16)}}),
               {1.0 + std::ldexp(1.0, -10)});
  // i64 -> bf16: 2^62 + 2^54 + 1 lies just above a tie (bf16 keeps 8 bits; via f64 it would tie).
  const int64_t v = (int64_t{1} << 62) + (int64_t{1} << 54) + 1;
  ExpectValues(RunOne("Cast", {Tensor::Scalar<int64_t>(v)}, {{"to", AttrValue::Type(DType::kBF16)}}),
               {std::ldexp(1.0, 62) + std::ldexp(1.0, 55)});
  ExpectValues(
      RunOne("Cast", {Make(DType::kF32, Shape{3}, {70000, -1e-9, kNaN})}, {{"to", AttrValue::Type(DType::kF16)}}),
      {kInf, -0.0, kNaN});
}

TEST(ElementwiseKernelsTest, Clip) {
  const Tensor x = Make(DType::kF32, Shape{5}, {-3, -1, 0.5, 2, kNaN});
  ExpectValues(RunOne("Clip", {x, Tensor::Scalar<float>(-1), Tensor::Scalar<float>(1)}), {-1, -1, 0.5, 1, kNaN});
  ExpectValues(RunOne("Clip", {x, std::nullopt, Make(DType::kF32, Shape{1}, {0})}), {-3, -1, 0, 0, kNaN});
  ExpectValues(RunOne("Clip", {x, Tensor::Scalar<float>(0)}), {0, 0, 0.5, 2, kNaN});
  ExpectValues(RunOne("Clip", {x}), {-3, -1, 0.5, 2, kNaN});
  // min > max: everything becomes max (ONNX).
  ExpectValues(RunOne("Clip", {x, Tensor::Scalar<float>(5), Tensor::Scalar<float>(4)}), {4, 4, 4, 4, kNaN});
  ExpectValues(RunOne("Clip", {Make(DType::kI64, Shape{3}, {-5, 5, 50}), Tensor::Scalar<int64_t>(0),
                               Tensor::Scalar<int64_t>(10)}),
               {0, 5, 10});
}

}  // namespace
}  // namespace tsr

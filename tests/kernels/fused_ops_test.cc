// Tests of the fused ops FusedConv and FusedMatMul (graph/ops/fused_ops.cc) and their
// reference kernels (kernels/reference/fused_kernels.cc): shape inference agrees with
// Conv / MatMul, every malformed node is rejected with a message naming it, the
// reference kernel equals the unfused composition run op by op through RunOp (Conv or
// MatMul, Add, the activation op) for every activation, with and without bias and
// residual, over groups, strides, pads and dilations, in f32 and f64, and small cases
// equal values written out by hand.
#include <cmath>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/attribute.h"
#include "graph/op_registry.h"
#include "graph/tensor.h"
#include "gtest/gtest.h"
#include "kernels/run_op.h"
#include "tests/graph/ops/op_test_util.h"
#include "tests/kernels/kernel_test_util.h"

namespace tsr {
namespace {

using testing::F32;
using testing::FailsWith;
using testing::Infer1;
using testing::Ints;
using testing::Make;
using testing::Str;
using testing::T;

constexpr const char* kActivations[] = {"None", "Relu", "LeakyRelu", "Clip", "Sigmoid", "Tanh", "Gelu"};

// ---------------------------------------------------------------------------------
// Shape inference

TEST(FusedConvInferenceTest, MatchesConv) {
  struct Case {
    Shape x, w;
    AttrMap attrs;
  };
  const std::vector<Case> cases = {
      {Shape{1, 3, 8, 8}, Shape{4, 3, 3, 3}, {}},
      {Shape{kBatchDim, 4, 9, 7}, Shape{6, 2, 3, 1}, {{"group", AttrValue::Int(2)}, {"strides", Ints({2, 1})}}},
      {Shape{2, 3, 5}, Shape{5, 3, 2}, {{"pads", Ints({1, 0})}, {"dilations", Ints({2})}}},
      {Shape{1, 2, 5, 6}, Shape{2, 2, 3, 3}, {{"auto_pad", AttrValue::String("SAME_UPPER")}}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(absl::StrCat(c.x.ToString(), " * ", c.w.ToString()));
    const absl::StatusOr<TensorType> conv = Infer1("Conv", {F32(c.x), F32(c.w)}, c.attrs);
    ASSERT_TRUE(conv.ok()) << conv.status();
    const TensorType y = *conv;
    const TensorType b = F32(Shape{c.w.dim(0)});
    for (const char* act : kActivations) {
      AttrMap attrs = c.attrs;
      attrs["activation"] = AttrValue::String(act);
      EXPECT_EQ(Str(Infer1("FusedConv", {F32(c.x), F32(c.w)}, attrs)), y.ToString()) << act;
      EXPECT_EQ(Str(Infer1("FusedConv", {F32(c.x), F32(c.w), b, y}, attrs)), y.ToString()) << act;
      EXPECT_EQ(Str(Infer1("FusedConv", {F32(c.x), F32(c.w), std::nullopt, y}, attrs)), y.ToString()) << act;
    }
    EXPECT_EQ(Str(Infer1("FusedConv", {T(DType::kF64, c.x), T(DType::kF64, c.w)}, c.attrs)),
              TensorType(DType::kF64, y.shape).ToString());
  }
}

TEST(FusedConvInferenceTest, Errors) {
  const TensorType x = F32(Shape{1, 4, 6, 6}), w = F32(Shape{8, 4, 3, 3});
  // Output [1,8,4,4].
  EXPECT_TRUE(FailsWith(Infer1("FusedConv", {x, w, F32(Shape{4})}), "FusedConv", "input 2 ('B') has shape [4]"));
  EXPECT_TRUE(FailsWith(Infer1("FusedConv", {x, w, std::nullopt, F32(Shape{1, 8, 4, 5})}), "FusedConv",
                        "input 3 ('Z', the residual) has shape [1,8,4,5] but must have exactly the output's shape "
                        "[1,8,4,4]"));
  // A broadcastable residual is still refused: Z is exactly the output's shape.
  EXPECT_TRUE(FailsWith(Infer1("FusedConv", {x, w, std::nullopt, F32(Shape{8, 1, 1})}), "FusedConv", "residual"));
  EXPECT_TRUE(FailsWith(Infer1("FusedConv", {x, w}, {{"activation", AttrValue::String("Swish")}}), "FusedConv",
                        "attribute 'activation' is \"Swish\" but one of \"None\", \"Relu\""));
  EXPECT_TRUE(FailsWith(Infer1("FusedConv", {x, w}, {{"activation", AttrValue::String("relu")}}), "FusedConv",
                        "attribute 'activation'"));
  // Conv's own checks, naming this op.
  EXPECT_TRUE(FailsWith(Infer1("FusedConv", {x, F32(Shape{8, 3, 3, 3})}), "FusedConv", "input channels per group"));
  EXPECT_TRUE(FailsWith(Infer1("FusedConv", {x, w}, {{"group", AttrValue::Int(3)}}), "FusedConv", "group"));
  // f32 and f64 only.
  EXPECT_FALSE(Infer1("FusedConv", {T(DType::kF16, x.shape), T(DType::kF16, w.shape)}).ok());
  EXPECT_FALSE(Infer1("FusedConv", {x, w}, {{"activation", AttrValue::Int(1)}}).ok());
}

TEST(FusedMatMulInferenceTest, Shapes) {
  const TensorType b = F32(Shape{4, 5}), bt = F32(Shape{5, 4});
  EXPECT_EQ(Str(Infer1("FusedMatMul", {F32(Shape{3, 4}), b})), "f32[3,5]");
  EXPECT_EQ(Str(Infer1("FusedMatMul", {F32(Shape{2, 3, 4}), b, F32(Shape{5}), F32(Shape{2, 3, 5})})), "f32[2,3,5]");
  EXPECT_EQ(Str(Infer1("FusedMatMul", {F32(Shape{kBatchDim, 7, 4}), bt, std::nullopt, F32(Shape{kBatchDim, 7, 5})},
                       {{"transpose_b", AttrValue::Int(1)}, {"activation", AttrValue::String("Gelu")}})),
            "f32[N,7,5]");
  EXPECT_EQ(Str(Infer1("FusedMatMul", {T(DType::kF64, Shape{3, 4}), T(DType::kF64, Shape{4, 5})})), "f64[3,5]");
  EXPECT_EQ(Str(Infer1("FusedMatMul", {F32(Shape{0, 4}), b})), "f32[0,5]");
}

TEST(FusedMatMulInferenceTest, Errors) {
  const TensorType a = F32(Shape{3, 4}), b = F32(Shape{4, 5});
  EXPECT_TRUE(FailsWith(Infer1("FusedMatMul", {F32(Shape{4}), b}), "FusedMatMul", "rank >= 2"));
  EXPECT_TRUE(FailsWith(Infer1("FusedMatMul", {a, F32(Shape{1, 4, 5})}), "FusedMatMul", "rank-2 matrix"));
  EXPECT_TRUE(FailsWith(Infer1("FusedMatMul", {a, F32(Shape{5, 4})}), "FusedMatMul",
                        "the contraction dimension is 4 in A but 5 in B"));
  EXPECT_TRUE(FailsWith(Infer1("FusedMatMul", {a, b}, {{"transpose_b", AttrValue::Int(1)}}), "FusedMatMul",
                        "contraction dimension"));
  EXPECT_TRUE(
      FailsWith(Infer1("FusedMatMul", {a, b}, {{"transpose_b", AttrValue::Int(2)}}), "FusedMatMul", "transpose_b"));
  EXPECT_TRUE(
      FailsWith(Infer1("FusedMatMul", {a, b, F32(Shape{3})}), "FusedMatMul", "input 2 ('bias') has shape [3] but [5]"));
  EXPECT_TRUE(FailsWith(Infer1("FusedMatMul", {a, b, F32(Shape{1, 5})}), "FusedMatMul", "input 2 ('bias')"));
  EXPECT_TRUE(FailsWith(Infer1("FusedMatMul", {a, b, std::nullopt, F32(Shape{1, 5})}), "FusedMatMul",
                        "input 3 ('Z', the residual) has shape [1,5] but must have exactly the output's shape [3,5]"));
  EXPECT_TRUE(FailsWith(Infer1("FusedMatMul", {a, b}, {{"activation", AttrValue::String("Silu")}}), "FusedMatMul",
                        "attribute 'activation' is \"Silu\""));
  EXPECT_FALSE(Infer1("FusedMatMul", {T(DType::kI32, a.shape), T(DType::kI32, b.shape)}).ok());
}

TEST(FusedOpsTest, FlopsCountTheProductAndTheEpilogue) {
  const TensorType x = F32(Shape{1, 4, 6, 6}), w = F32(Shape{8, 4, 3, 3}), y = F32(Shape{1, 8, 4, 4});
  const int64_t conv = testing::Flops("Conv", {x, w});
  EXPECT_EQ(conv, 2 * 8 * 16 * 36);
  EXPECT_EQ(testing::Flops("FusedConv", {x, w}), conv);
  // Bias, residual and Relu: three per output element.
  EXPECT_EQ(testing::Flops("FusedConv", {x, w, F32(Shape{8}), y}, {{"activation", AttrValue::String("Relu")}}),
            conv + 3 * 128);
  EXPECT_EQ(testing::Flops("FusedMatMul", {F32(Shape{3, 4}), F32(Shape{4, 5}), F32(Shape{5})}), 2 * 15 * 4 + 15);
}

TEST(FusedOpsTest, RegisteredAsExpected) {
  const OpDef* conv = OpRegistry::Global().Find("FusedConv");
  const OpDef* matmul = OpRegistry::Global().Find("FusedMatMul");
  ASSERT_NE(conv, nullptr);
  ASSERT_NE(matmul, nullptr);
  // Operand order the fusion pass relies on.
  std::vector<std::string> names;
  for (const ArgDef& arg : conv->inputs) names.push_back(arg.name);
  EXPECT_EQ(absl::StrJoin(names, ","), "X,W,B,Z");
  names.clear();
  for (const ArgDef& arg : matmul->inputs) names.push_back(arg.name);
  EXPECT_EQ(absl::StrJoin(names, ","), "A,B,bias,Z");
  // Every Conv attribute, same default.
  for (const AttrDef& attr : OpRegistry::Global().Find("Conv")->attrs) {
    const AttrDef* same = conv->FindAttr(attr.name);
    ASSERT_NE(same, nullptr) << attr.name;
    EXPECT_EQ(same->default_value.has_value(), attr.default_value.has_value()) << attr.name;
  }
  for (const OpDef* def : {conv, matmul}) {
    EXPECT_EQ(def->FindAttr("activation")->default_value->s(), "None");
    EXPECT_EQ(def->FindAttr("alpha")->default_value->f(), 0.01);
    EXPECT_EQ(def->FindAttr("min")->default_value->f(), -3.4028234663852886e38);
    EXPECT_EQ(def->FindAttr("max")->default_value->f(), 3.4028234663852886e38);
    EXPECT_FALSE(def->gradient) << def->name << ": produced by inference-time fusion only";
  }
  EXPECT_EQ(matmul->FindAttr("transpose_b")->default_value->i(), 0);
}

// ---------------------------------------------------------------------------------
// Reference kernels against the composition

// The activation attributes for `act`, with parameters that make each one matter.
AttrMap ActivationAttrs(absl::string_view act) {
  AttrMap attrs{{"activation", AttrValue::String(std::string(act))}};
  if (act == "LeakyRelu") attrs["alpha"] = AttrValue::Float(0.2);
  if (act == "Clip") {
    attrs["min"] = AttrValue::Float(-0.5);
    attrs["max"] = AttrValue::Float(0.75);
  }
  return attrs;
}

// act(value) run as its own op, as the unfused graph would.
Tensor ApplyActivation(absl::string_view act, const Tensor& value) {
  if (act == "None") return value;
  if (act == "LeakyRelu") return testing::RunOne("LeakyRelu", {value}, {{"alpha", AttrValue::Float(0.2)}});
  if (act == "Clip") {
    return testing::RunOne("Clip", {value, Make(value.dtype(), Shape{}, {-0.5}), Make(value.dtype(), Shape{}, {0.75})});
  }
  return testing::RunOne(act, {value});
}

Tensor RandomOf(DType dtype, const Shape& shape, std::mt19937& rng) {
  const Tensor d = testing::Random(shape, rng, 2.0);
  return testing::Make(dtype, shape, testing::Values(d));
}

struct ConvCase {
  std::vector<int64_t> x, w;
  AttrMap attrs;
};

TEST(FusedConvReferenceTest, EqualsConvAddActivation) {
  const std::vector<ConvCase> cases = {
      {{1, 3, 6, 5}, {4, 3, 3, 3}, {}},
      {{2, 4, 7, 6},
       {6, 2, 3, 2},
       {{"group", AttrValue::Int(2)}, {"strides", Ints({2, 1})}, {"pads", Ints({1, 0, 1, 1})}}},
      {{1, 4, 9}, {4, 1, 3}, {{"group", AttrValue::Int(4)}, {"dilations", Ints({2})}, {"pads", Ints({2, 1})}}},
      {{1, 2, 3, 4, 4}, {3, 2, 2, 1, 3}, {{"auto_pad", AttrValue::String("SAME_LOWER")}}},
  };
  uint32_t seed = 100;
  for (DType dtype : {DType::kF32, DType::kF64}) {
    for (const ConvCase& c : cases) {
      for (const char* act : kActivations) {
        for (int variant = 0; variant < 4; ++variant) {
          const bool with_bias = variant & 1, with_residual = variant & 2;
          SCOPED_TRACE(absl::StrCat("seed=", seed, " ", DTypeName(dtype), " x=[", absl::StrJoin(c.x, ","), "] w=[",
                                    absl::StrJoin(c.w, ","), "] act=", act, " bias=", with_bias,
                                    " residual=", with_residual));
          std::mt19937 rng(seed++);
          const Tensor x = RandomOf(dtype, Shape(c.x), rng), w = RandomOf(dtype, Shape(c.w), rng);
          std::vector<std::optional<Tensor>> conv_inputs = {x, w};
          if (with_bias) conv_inputs.push_back(RandomOf(dtype, Shape{c.w[0]}, rng));
          Tensor want = testing::RunOne("Conv", conv_inputs, c.attrs);
          ASSERT_TRUE(want.valid());
          std::vector<std::optional<Tensor>> fused_inputs = conv_inputs;
          fused_inputs.resize(3);
          if (with_residual) {
            const Tensor z = RandomOf(dtype, want.shape(), rng);
            fused_inputs.push_back(z);
            want = testing::RunOne("Add", {want, z});
          }
          want = ApplyActivation(act, want);
          AttrMap attrs = c.attrs;
          for (const auto& [name, value] : ActivationAttrs(act)) attrs[name] = value;
          const Tensor got = testing::RunOne("FusedConv", fused_inputs, attrs);
          ASSERT_TRUE(got.valid());
          ASSERT_EQ(got.type(), want.type());
          // The same reference kernels in the same order: the same floats.
          EXPECT_TRUE(got.BitwiseEquals(want)) << got.DebugString() << "\nwant " << want.DebugString();
        }
      }
    }
  }
}

TEST(FusedMatMulReferenceTest, EqualsMatMulAddActivation) {
  struct Case {
    std::vector<int64_t> a;
    int64_t n;
    bool transpose_b;
  };
  const std::vector<Case> cases = {
      {{3, 4}, 5, false}, {{2, 3, 7}, 2, true}, {{1, 1}, 1, false}, {{2, 0, 3}, 4, true}, {{3, 0}, 2, false}};
  uint32_t seed = 500;
  for (DType dtype : {DType::kF32, DType::kF64}) {
    for (const Case& c : cases) {
      for (const char* act : kActivations) {
        for (int variant = 0; variant < 4; ++variant) {
          const bool with_bias = variant & 1, with_residual = variant & 2;
          SCOPED_TRACE(absl::StrCat("seed=", seed, " ", DTypeName(dtype), " a=[", absl::StrJoin(c.a, ","), "] n=", c.n,
                                    " transpose_b=", c.transpose_b, " act=", act, " bias=", with_bias,
                                    " residual=", with_residual));
          std::mt19937 rng(seed++);
          const int64_t k = c.a.back();
          const Tensor a = RandomOf(dtype, Shape(c.a), rng);
          const Tensor b = RandomOf(dtype, c.transpose_b ? Shape{c.n, k} : Shape{k, c.n}, rng);
          const Tensor b_kn = c.transpose_b ? testing::RunOne("Transpose", {b}, {{"perm", Ints({1, 0})}}) : b;
          Tensor want = testing::RunOne("MatMul", {a, b_kn});
          ASSERT_TRUE(want.valid());
          std::vector<std::optional<Tensor>> inputs = {a, b, std::nullopt, std::nullopt};
          if (with_bias) {
            inputs[2] = RandomOf(dtype, Shape{c.n}, rng);
            want = testing::RunOne("Add", {want, inputs[2]});
          }
          if (with_residual) {
            inputs[3] = RandomOf(dtype, want.shape(), rng);
            want = testing::RunOne("Add", {want, inputs[3]});
          }
          want = ApplyActivation(act, want);
          AttrMap attrs = ActivationAttrs(act);
          attrs["transpose_b"] = AttrValue::Int(c.transpose_b ? 1 : 0);
          const Tensor got = testing::RunOne("FusedMatMul", inputs, attrs);
          ASSERT_TRUE(got.valid());
          ASSERT_EQ(got.type(), want.type());
          EXPECT_TRUE(got.BitwiseEquals(want)) << got.DebugString() << "\nwant " << want.DebugString();
        }
      }
    }
  }
}

// Values by hand, independent of the composition: a 1x1 convolution of one pixel.
// X = [1, -2] (two channels), W rows [1, 1] and [2, -1] (two outputs), B = [0.5, -1]:
// conv = [1 - 2 + 0.5, 2 + 2 - 1] = [-0.5, 3]; Z = [0.25, -4] gives [-0.25, -1].
TEST(FusedConvReferenceTest, HandComputedValues) {
  const double s = -0.25, t = -1.0;
  const auto gelu = [](double v) { return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))); };
  const auto sigmoid = [](double v) { return 1 / (1 + std::exp(-v)); };
  const std::vector<std::pair<const char*, std::vector<double>>> expected = {
      {"None", {s, t}},
      {"Relu", {0, 0}},
      {"LeakyRelu", {0.2 * s, 0.2 * t}},
      {"Clip", {s, -0.5}},
      {"Sigmoid", {sigmoid(s), sigmoid(t)}},
      {"Tanh", {std::tanh(s), std::tanh(t)}},
      {"Gelu", {gelu(s), gelu(t)}},
  };
  for (DType dtype : {DType::kF32, DType::kF64}) {
    const Tensor x = Make(dtype, Shape{1, 2, 1, 1}, {1, -2});
    const Tensor w = Make(dtype, Shape{2, 2, 1, 1}, {1, 1, 2, -1});
    const Tensor b = Make(dtype, Shape{2}, {0.5, -1});
    const Tensor z = Make(dtype, Shape{1, 2, 1, 1}, {0.25, -4});
    for (const auto& [act, values] : expected) {
      SCOPED_TRACE(absl::StrCat(DTypeName(dtype), " ", act));
      testing::ExpectValues(testing::RunOne("FusedConv", {x, w, b, z}, ActivationAttrs(act)), values,
                            dtype == DType::kF32 ? 1e-6 : 1e-14);
    }
    // Without Z: [-0.5, 3].
    testing::ExpectValues(testing::RunOne("FusedConv", {x, w, b}, ActivationAttrs("Relu")), {0, 3});
    testing::ExpectValues(testing::RunOne("FusedConv", {x, w}, ActivationAttrs("None")), {-1, 4});
  }
}

// A = [[1, 2]], B = [[1, -1], [2, 0.5]] (2x2): AB = [5, 0]; bias [-6, 0.5] -> [-1, 0.5];
// Z = [0.25, -1] -> [-0.75, -0.5].
TEST(FusedMatMulReferenceTest, HandComputedValues) {
  for (DType dtype : {DType::kF32, DType::kF64}) {
    const Tensor a = Make(dtype, Shape{1, 2}, {1, 2});
    const Tensor b = Make(dtype, Shape{2, 2}, {1, -1, 2, 0.5});
    const Tensor bt = Make(dtype, Shape{2, 2}, {1, 2, -1, 0.5});
    const Tensor bias = Make(dtype, Shape{2}, {-6, 0.5});
    const Tensor z = Make(dtype, Shape{1, 2}, {0.25, -1});
    testing::ExpectValues(testing::RunOne("FusedMatMul", {a, b}), {5, 0});
    testing::ExpectValues(testing::RunOne("FusedMatMul", {a, bt}, {{"transpose_b", AttrValue::Int(1)}}), {5, 0});
    testing::ExpectValues(testing::RunOne("FusedMatMul", {a, b, bias}, ActivationAttrs("Relu")), {0, 0.5});
    testing::ExpectValues(testing::RunOne("FusedMatMul", {a, b, bias, z}, ActivationAttrs("LeakyRelu")), {-0.15, -0.1},
                          1e-7);
    testing::ExpectValues(testing::RunOne("FusedMatMul", {a, b, std::nullopt, z}, ActivationAttrs("Clip")),
                          {0.75, -0.5});
  }
}

TEST(FusedOpsReferenceTest, KernelsForF32AndF64) {
  for (const char* op : {"FusedConv", "FusedMatMul"}) {
    EXPECT_EQ(KernelRegistry::Global().DTypesFor(op, kReferenceDevice), testing::AcceptedDTypes(op)) << op;
    EXPECT_EQ(testing::AcceptedDTypes(op), (std::vector<DType>{DType::kF32, DType::kF64})) << op;
  }
}

}  // namespace
}  // namespace tsr

// Every op with a gradient function, checked against central differences in f64 on
// randomized shapes (fixed, printed seeds): elementwise with broadcasting,
// activations, MatMul/Gemm in all their forms, reductions, shape ops, Softmax,
// LogSoftmax and SoftmaxCrossEntropyLoss.
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/graph/autodiff/gradient_check_util.h"

namespace tsr {
namespace {

using testing::ExpectGradientsMatchNumeric;
using testing::GradCheck;
using testing::RandomF64;

Tensor Ints(const Shape& shape, const std::vector<int64_t>& values) {
  return Tensor::FromVector<int64_t>(shape, values);
}

TEST(OpGradientsTest, BinaryArithmeticWithBroadcasting) {
  const std::vector<std::pair<Shape, Shape>> shapes = {{{3, 4}, {3, 4}}, {{3, 4}, {4}},    {{2, 1, 3}, {4, 1}},
                                                       {{}, {3}},        {{1, 5}, {2, 1}}, {{17}, {1}}};
  uint32_t seed = 1;
  for (const char* op : {"Add", "Sub", "Mul", "Div", "Max", "Min"}) {
    for (const auto& [sa, sb] : shapes) {
      std::mt19937 rng(seed);
      const bool div = std::string(op) == "Div";
      GradCheck c{op, {RandomF64(rng, sa), RandomF64(rng, sb, div ? 0.5 : -1, div ? 2 : 1)}, {}, {0, 1}};
      ExpectGradientsMatchNumeric(c, seed++);
    }
  }
}

TEST(OpGradientsTest, PowAndUnaryMath) {
  uint32_t seed = 100;
  {
    std::mt19937 rng(seed);
    ExpectGradientsMatchNumeric({"Pow", {RandomF64(rng, {3, 4}, 0.5, 2), RandomF64(rng, {4}, -2, 2)}, {}, {0, 1}},
                                seed++);
  }
  for (const char* op : {"Neg", "Abs", "Exp", "Log", "Sqrt", "Rsqrt", "Reciprocal", "Identity"}) {
    std::mt19937 rng(seed);
    const bool positive =
        std::string(op) == "Log" || std::string(op).find("qrt") != std::string::npos || std::string(op) == "Reciprocal";
    ExpectGradientsMatchNumeric({op, {RandomF64(rng, {2, 3, 5}, positive ? 0.3 : -2, 2)}, {}, {0}}, seed++);
  }
}

TEST(OpGradientsTest, Activations) {
  uint32_t seed = 200;
  for (const char* op : {"Relu", "Sigmoid", "Tanh", "Erf", "Softplus", "Silu", "Gelu"}) {
    std::mt19937 rng(seed);
    ExpectGradientsMatchNumeric({op, {RandomF64(rng, {4, 7}, -3, 3)}, {}, {0}}, seed++);
  }
  std::mt19937 rng(seed);
  ExpectGradientsMatchNumeric({"LeakyRelu", {RandomF64(rng, {4, 7}, -3, 3)}, {{"alpha", AttrValue::Float(0.2)}}, {0}},
                              seed++);
  ExpectGradientsMatchNumeric(
      {"Gelu", {RandomF64(rng, {4, 7}, -3, 3)}, {{"approximate", AttrValue::String("tanh")}}, {0}}, seed++);
}

TEST(OpGradientsTest, WhereClipAndVariadicExtrema) {
  uint32_t seed = 300;
  std::mt19937 rng(seed);
  Tensor cond = Tensor::FromVector<bool>(Shape({3, 1}), {true, false, true});
  ExpectGradientsMatchNumeric({"Where", {cond, RandomF64(rng, {3, 4}), RandomF64(rng, {4})}, {}, {1, 2}}, seed++);
  // Clip with constant bounds, then with differentiated bounds.
  ExpectGradientsMatchNumeric(
      {"Clip", {RandomF64(rng, {5, 6}, -2, 2), Tensor::Scalar<double>(-0.7), Tensor::Scalar<double>(0.9)}, {}, {0}},
      seed++);
  ExpectGradientsMatchNumeric(
      {"Clip",
       {RandomF64(rng, {5, 6}, -2, 2), Tensor::Scalar<double>(-0.7), Tensor::Scalar<double>(0.9)},
       {},
       {0, 1, 2}},
      seed++);
  ExpectGradientsMatchNumeric(
      {"Clip", {RandomF64(rng, {9}, -2, 2), std::nullopt, Tensor::Scalar<double>(0.3)}, {}, {0}}, seed++);
  ExpectGradientsMatchNumeric(
      {"Max", {RandomF64(rng, {3, 4}), RandomF64(rng, {4}), RandomF64(rng, {3, 1})}, {}, {0, 1, 2}}, seed++);
}

TEST(OpGradientsTest, MatMulAllRanks) {
  const std::vector<std::pair<Shape, Shape>> shapes = {
      {{3, 4}, {4, 5}},
      {{4}, {4, 5}},
      {{3, 4}, {4}},
      {{4}, {4}},
      {{2, 3, 4}, {4, 5}},
      {{3, 4}, {2, 4, 5}},
      {{2, 1, 3, 4}, {5, 4, 2}},
      {{4}, {2, 4, 3}},
      {{2, 3, 4}, {4}},
      {{1, 3}, {3, 1}},
  };
  uint32_t seed = 400;
  for (const auto& [sa, sb] : shapes) {
    std::mt19937 rng(seed);
    ExpectGradientsMatchNumeric({"MatMul", {RandomF64(rng, sa), RandomF64(rng, sb)}, {}, {0, 1}}, seed++);
  }
}

TEST(OpGradientsTest, GemmTransposesAlphaBetaAndC) {
  uint32_t seed = 500;
  for (int ta = 0; ta < 2; ++ta) {
    for (int tb = 0; tb < 2; ++tb) {
      for (const Shape& c_shape : {Shape({3, 5}), Shape({5}), Shape({3, 1}), Shape({})}) {
        std::mt19937 rng(seed);
        const Shape a = ta ? Shape({4, 3}) : Shape({3, 4});
        const Shape w = tb ? Shape({5, 4}) : Shape({4, 5});
        GradCheck c{"Gemm",
                    {RandomF64(rng, a), RandomF64(rng, w), RandomF64(rng, c_shape)},
                    {{"transA", AttrValue::Int(ta)},
                     {"transB", AttrValue::Int(tb)},
                     {"alpha", AttrValue::Float(1.5)},
                     {"beta", AttrValue::Float(-0.5)}},
                    {0, 1, 2}};
        ExpectGradientsMatchNumeric(c, seed++);
      }
    }
  }
}

TEST(OpGradientsTest, Reductions) {
  struct Case {
    std::vector<int64_t> axes;
    int keepdims;
  };
  const Case cases[] = {{{1}, 1}, {{1}, 0}, {{0, 2}, 0}, {{-1}, 1}, {{}, 0}, {{}, 1}};
  uint32_t seed = 600;
  for (const char* op : {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceL2", "ReduceProd"}) {
    for (const Case& rc : cases) {
      std::mt19937 rng(seed);
      std::vector<std::optional<Tensor>> inputs = {RandomF64(rng, {3, 4, 5})};
      if (!rc.axes.empty()) inputs.push_back(Ints(Shape({static_cast<int64_t>(rc.axes.size())}), rc.axes));
      ExpectGradientsMatchNumeric({op, inputs, {{"keepdims", AttrValue::Int(rc.keepdims)}}, {0}}, seed++);
    }
  }
  // ReduceProd with one zero in a reduced group (its gradient is the others'
  // product) and with two (all zero), which dividing the product by x gets wrong.
  {
    std::mt19937 rng(seed);
    Tensor x = RandomF64(rng, {3, 4});
    x.flat<double>()[1] = 0;                        // row 0: one zero
    x.flat<double>()[5] = x.flat<double>()[6] = 0;  // row 1: two zeros
    for (const std::vector<int64_t>& axes : {std::vector<int64_t>{1}, std::vector<int64_t>{0}}) {
      ExpectGradientsMatchNumeric({"ReduceProd", {x, Ints(Shape({1}), axes)}, {{"keepdims", AttrValue::Int(0)}}, {0}},
                                  seed++);
    }
  }
  // noop_with_empty_axes: the identity.
  std::mt19937 rng(seed);
  ExpectGradientsMatchNumeric(
      {"ReduceSum", {RandomF64(rng, {3, 4})}, {{"noop_with_empty_axes", AttrValue::Int(1)}}, {0}}, seed++);
}

TEST(OpGradientsTest, ShapeOps) {
  uint32_t seed = 700;
  std::mt19937 rng(seed);
  ExpectGradientsMatchNumeric({"Reshape", {RandomF64(rng, {2, 3, 4}), Ints(Shape({2}), {4, 6})}, {}, {0}}, seed++);
  ExpectGradientsMatchNumeric({"Flatten", {RandomF64(rng, {2, 3, 4})}, {{"axis", AttrValue::Int(2)}}, {0}}, seed++);
  ExpectGradientsMatchNumeric({"Squeeze", {RandomF64(rng, {2, 1, 4}), Ints(Shape({1}), {1})}, {}, {0}}, seed++);
  ExpectGradientsMatchNumeric({"Unsqueeze", {RandomF64(rng, {2, 4}), Ints(Shape({2}), {0, -1})}, {}, {0}}, seed++);
  ExpectGradientsMatchNumeric({"Transpose", {RandomF64(rng, {2, 3, 4})}, {{"perm", AttrValue::Ints({1, 2, 0})}}, {0}},
                              seed++);
  ExpectGradientsMatchNumeric({"Transpose", {RandomF64(rng, {2, 3, 4})}, {}, {0}}, seed++);
  ExpectGradientsMatchNumeric({"Expand", {RandomF64(rng, {3, 1}), Ints(Shape({3}), {2, 3, 4})}, {}, {0}}, seed++);
  for (int64_t axis : {0, 1, -1}) {
    ExpectGradientsMatchNumeric({"Concat",
                                 {RandomF64(rng, {2, 3}), RandomF64(rng, {2, 3}), RandomF64(rng, {2, 3})},
                                 {{"axis", AttrValue::Int(axis)}},
                                 {0, 2}},
                                seed++);
  }
  for (int output : {0, 2}) {
    GradCheck c{"Split", {RandomF64(rng, {6, 4})}, {{"num_outputs", AttrValue::Int(3)}}, {0}};
    c.output = output;
    ExpectGradientsMatchNumeric(c, seed++);
  }
}

TEST(OpGradientsTest, SoftmaxFamily) {
  uint32_t seed = 800;
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    for (int64_t axis : {0, 1, -1}) {
      std::mt19937 rng(seed);
      ExpectGradientsMatchNumeric({op, {RandomF64(rng, {3, 4, 5}, -2, 2)}, {{"axis", AttrValue::Int(axis)}}, {0}},
                                  seed++);
    }
  }
}

TEST(OpGradientsTest, SoftmaxCrossEntropyLoss) {
  uint32_t seed = 900;
  const Tensor labels = Ints(Shape({4}), {2, 0, 1, 2});
  const Tensor labels_3d = Ints(Shape({2, 3}), {0, 1, 2, 2, 1, 0});
  const Tensor weights = Tensor::FromVector<double>(Shape({3}), {0.5, 2.0, 1.5});
  for (const char* reduction : {"mean", "sum", "none"}) {
    std::mt19937 rng(seed);
    const AttrMap attrs = {{"reduction", AttrValue::String(reduction)}};
    AttrMap ignoring = attrs;
    ignoring["ignore_index"] = AttrValue::Int(2);
    ExpectGradientsMatchNumeric({"SoftmaxCrossEntropyLoss", {RandomF64(rng, {4, 3}, -2, 2), labels}, attrs, {0}},
                                seed++);
    ExpectGradientsMatchNumeric(
        {"SoftmaxCrossEntropyLoss", {RandomF64(rng, {4, 3}, -2, 2), labels, weights}, attrs, {0}}, seed++);
    ExpectGradientsMatchNumeric(
        {"SoftmaxCrossEntropyLoss", {RandomF64(rng, {4, 3}, -2, 2), labels, weights}, ignoring, {0}}, seed++);
    ExpectGradientsMatchNumeric(
        {"SoftmaxCrossEntropyLoss", {RandomF64(rng, {2, 3, 3}, -2, 2), labels_3d}, ignoring, {0}}, seed++);
    // Through the log_prob output too.
    GradCheck c{"SoftmaxCrossEntropyLoss", {RandomF64(rng, {4, 3}, -2, 2), labels}, attrs, {0}};
    c.output = 1;
    ExpectGradientsMatchNumeric(c, seed++);
  }
}

}  // namespace
}  // namespace tsr

// Every mapped ONNX op family, imported from a one-node model built in C++ and run on
// the reference kernels; expected values are computed by hand (or with <cmath> for
// transcendental functions).
#include <cmath>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/graph/onnx/onnx_node_case.h"
#include "tests/graph/onnx/onnx_test_util.h"

namespace tsr::onnx_test {
namespace {

Tensor A23() { return F32({2, 3}, {1, 2, 3, 4, 5, 6}); }
Tensor B3() { return F32({3}, {10, 20, 30}); }

TEST(OnnxOpsTest, BinaryArithmeticBroadcasts) {
  const std::vector<std::pair<std::string, std::vector<double>>> cases = {
      {"Add", {11, 22, 33, 14, 25, 36}},
      {"Sub", {-9, -18, -27, -6, -15, -24}},
      {"Mul", {10, 40, 90, 40, 100, 180}},
      {"Div", {0.1, 0.1, 0.1, 0.4, 0.25, 0.2}},
  };
  for (const auto& [op, expected] : cases) {
    SCOPED_TRACE(op);
    std::vector<Tensor> y = RunCase({.op = op, .feeds = {{"a", A23()}, {"b", B3()}}});
    ExpectTensorNear(y[0], {2, 3}, expected);
  }
  std::vector<Tensor> y = RunCase({.op = "Pow", .feeds = {{"x", F32({3}, {1, 2, 3})}, {"e", F32({1}, {2})}}});
  ExpectTensorNear(y[0], {3}, {1, 4, 9});
}

TEST(OnnxOpsTest, UnaryMathAndActivations) {
  const std::vector<float> x = {-0.5f, 0.25f, 2.0f};
  const std::vector<std::pair<std::string, std::function<double(double)>>> cases = {
      {"Neg", [](double v) { return -v; }},
      {"Abs", [](double v) { return std::abs(v); }},
      {"Exp", [](double v) { return std::exp(v); }},
      {"Reciprocal", [](double v) { return 1 / v; }},
      {"Relu", [](double v) { return v > 0 ? v : 0; }},
      {"Sigmoid", [](double v) { return 1 / (1 + std::exp(-v)); }},
      {"Tanh", [](double v) { return std::tanh(v); }},
      {"Erf", [](double v) { return std::erf(v); }},
      {"Softplus", [](double v) { return std::log1p(std::exp(v)); }},
      {"Identity", [](double v) { return v; }},
  };
  for (const auto& [op, fn] : cases) {
    SCOPED_TRACE(op);
    std::vector<double> expected;
    for (float v : x) expected.push_back(fn(v));
    std::vector<Tensor> y = RunCase({.op = op, .feeds = {{"x", F32({3}, x)}}});
    ExpectTensorNear(y[0], {3}, expected);
  }
  for (const std::string op : {"Log", "Sqrt"}) {
    SCOPED_TRACE(op);
    std::vector<Tensor> y = RunCase({.op = op, .feeds = {{"x", F32({2}, {4, 0.25})}}});
    ExpectTensorNear(y[0], {2},
                     op == "Log" ? std::vector<double>{std::log(4.0), std::log(0.25)} : std::vector<double>{2, 0.5});
  }
  std::vector<Tensor> y =
      RunCase({.op = "LeakyRelu", .feeds = {{"x", F32({2}, {-1, 2})}}, .attrs = [](onnx::NodeProto* n) {
                 SetFloat(n, "alpha", 0.1f);
               }});
  ExpectTensorNear(y[0], {2}, {-0.1, 2});
}

TEST(OnnxOpsTest, VariadicMaxMinSumMean) {
  const std::vector<std::pair<std::string, Tensor>> feeds = {
      {"a", F32({3}, {1, 5, 3})}, {"b", F32({3}, {4, 2, 6})}, {"c", F32({1}, {3})}};
  ExpectTensorNear(RunCase({.op = "Max", .feeds = feeds})[0], {3}, {4, 5, 6});
  ExpectTensorNear(RunCase({.op = "Min", .feeds = feeds})[0], {3}, {1, 2, 3});
  ExpectTensorNear(RunCase({.op = "Sum", .feeds = feeds})[0], {3}, {8, 10, 12});
  ExpectTensorNear(RunCase({.op = "Mean", .feeds = feeds})[0], {3}, {8.0 / 3, 10.0 / 3, 4});
  ExpectTensorNear(RunCase({.op = "Sum", .feeds = {feeds[0]}})[0], {3}, {1, 5, 3});
}

TEST(OnnxOpsTest, ComparisonsWhereCastClip) {
  const std::vector<std::pair<std::string, Tensor>> feeds = {{"a", F32({3}, {1, 5, 3})}, {"b", F32({3}, {4, 2, 3})}};
  std::vector<Tensor> less = RunCase({.op = "Less", .feeds = feeds});
  ASSERT_EQ(less[0].dtype(), DType::kBool);
  ExpectTensorNear(less[0], {3}, {1, 0, 0});
  ExpectTensorNear(RunCase({.op = "Greater", .feeds = feeds})[0], {3}, {0, 1, 0});
  ExpectTensorNear(RunCase({.op = "Equal", .feeds = feeds})[0], {3}, {0, 0, 1});

  const Tensor cond = Tensor::FromVector<bool>(Shape{3}, {true, false, true});
  std::vector<Tensor> where = RunCase({.op = "Where", .feeds = {{"c", cond}, feeds[0], feeds[1]}});
  ExpectTensorNear(where[0], {3}, {1, 2, 3});

  std::vector<Tensor> cast =
      RunCase({.op = "Cast", .feeds = {{"x", F32({2}, {3, -2})}}, .attrs = [](onnx::NodeProto* n) {
                 SetInt(n, "to", TensorProto::INT64);
               }});
  ASSERT_EQ(cast[0].dtype(), DType::kI64);
  ExpectTensorNear(cast[0], {2}, {3, -2});

  std::vector<Tensor> clip = RunCase({.op = "Clip",
                                      .feeds = {{"x", F32({3}, {-2, 0.5, 3})}},
                                      .initializers = {FloatTensor("lo", {}, {0}), FloatTensor("hi", {}, {1})},
                                      .inputs = {"x", "lo", "hi"}});
  ExpectTensorNear(clip[0], {3}, {0, 0.5, 1});
  // Only a max: the min slot is an empty name.
  clip = RunCase({.op = "Clip",
                  .feeds = {{"x", F32({3}, {-2, 0.5, 3})}},
                  .initializers = {FloatTensor("hi", {}, {1})},
                  .inputs = {"x", "", "hi"}});
  ExpectTensorNear(clip[0], {3}, {-2, 0.5, 1});
}

TEST(OnnxOpsTest, MatMulAndGemm) {
  std::vector<Tensor> y = RunCase({.op = "MatMul", .feeds = {{"a", A23()}, {"b", F32({3, 1}, {1, 0, -1})}}});
  ExpectTensorNear(y[0], {2, 1}, {-2, -2});
  // alpha * A * B^T + beta * C with A [1,2], B [2,2] (given transposed), C [2].
  y = RunCase({.op = "Gemm",
               .feeds = {{"a", F32({1, 2}, {1, 2})}},
               .initializers = {FloatTensor("w", {2, 2}, {1, 1, 0, 3}, /*raw=*/true), FloatTensor("c", {2}, {4, 8})},
               .inputs = {"a", "w", "c"},
               .attrs = [](onnx::NodeProto* n) {
                 SetInt(n, "transB", 1);
                 SetFloat(n, "alpha", 2);
                 SetFloat(n, "beta", 0.5);
               }});
  // A*B^T = [1*1+2*1, 1*0+2*3] = [3, 6]; *2 = [6, 12]; + [2, 4].
  ExpectTensorNear(y[0], {1, 2}, {8, 16});
}

Tensor X33() { return F32({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}); }

TEST(OnnxOpsTest, ConvAndConvTranspose) {
  std::vector<Tensor> y =
      RunCase({.op = "Conv",
               .feeds = {{"x", X33()}},
               .initializers = {FloatTensor("w", {1, 1, 2, 2}, {1, 1, 1, 1}), FloatTensor("b", {1}, {10})},
               .inputs = {"x", "w", "b"},
               .attrs = [](onnx::NodeProto* n) {
                 SetInts(n, "kernel_shape", {2, 2});
               }});
  ExpectTensorNear(y[0], {1, 1, 2, 2}, {22, 26, 34, 38});
  y = RunCase({.op = "Conv",
               .feeds = {{"x", X33()}},
               .initializers = {FloatTensor("w", {1, 1, 2, 2}, {1, 1, 1, 1})},
               .inputs = {"x", "w"},
               .attrs = [](onnx::NodeProto* n) {
                 SetInts(n, "strides", {2, 2});
                 SetInts(n, "pads", {1, 1, 1, 1});
               }});
  ExpectTensorNear(y[0], {1, 1, 2, 2}, {1, 5, 11, 28});
  y = RunCase({.op = "ConvTranspose",
               .feeds = {{"x", F32({1, 1, 2, 2}, {1, 2, 3, 4})}},
               .initializers = {FloatTensor("w", {1, 1, 2, 2}, {1, 1, 1, 1})},
               .inputs = {"x", "w"},
               .attrs = [](onnx::NodeProto* n) {
                 SetInts(n, "strides", {2, 2});
               }});
  ExpectTensorNear(y[0], {1, 1, 4, 4}, {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4});
}

TEST(OnnxOpsTest, Pools) {
  auto kernel2 = [](onnx::NodeProto* n) { SetInts(n, "kernel_shape", {2, 2}); };
  std::vector<Tensor> y = RunCase({.op = "MaxPool", .feeds = {{"x", X33()}}, .attrs = kernel2});
  ExpectTensorNear(y[0], {1, 1, 2, 2}, {5, 6, 8, 9});
  y = RunCase({.op = "MaxPool", .feeds = {{"x", X33()}}, .num_outputs = 2, .attrs = kernel2});
  ExpectTensorNear(y[1], {1, 1, 2, 2}, {4, 5, 7, 8});  // flat indices of the maxima
  y = RunCase({.op = "AveragePool", .feeds = {{"x", X33()}}, .attrs = kernel2});
  ExpectTensorNear(y[0], {1, 1, 2, 2}, {3, 4, 6, 7});
  ExpectTensorNear(RunCase({.op = "GlobalAveragePool", .feeds = {{"x", X33()}}})[0], {1, 1, 1, 1}, {5});
  ExpectTensorNear(RunCase({.op = "GlobalMaxPool", .feeds = {{"x", X33()}}})[0], {1, 1, 1, 1}, {9});
}

TEST(OnnxOpsTest, Normalizations) {
  std::vector<Tensor> y = RunCase({.opset = 15,
                                   .op = "BatchNormalization",
                                   .feeds = {{"x", F32({1, 2, 1, 2}, {1, 2, 3, 4})}},
                                   .initializers = {FloatTensor("s", {2}, {1, 2}), FloatTensor("b", {2}, {0, 1}),
                                                    FloatTensor("m", {2}, {1, 3}), FloatTensor("v", {2}, {4, 1})},
                                   .inputs = {"x", "s", "b", "m", "v"},
                                   .attrs = [](onnx::NodeProto* n) { SetFloat(n, "epsilon", 1e-7f); }});
  ExpectTensorNear(y[0], {1, 2, 1, 2}, {0, 0.5, 1, 3}, 1e-4);

  y = RunCase({.op = "LayerNormalization",
               .feeds = {{"x", F32({2, 2}, {1, 3, 2, 2})}},
               .initializers = {FloatTensor("s", {2}, {2, 1}), FloatTensor("b", {2}, {0, 1})},
               .inputs = {"x", "s", "b"},
               .attrs = [](onnx::NodeProto* n) { SetFloat(n, "epsilon", 1e-7f); }});
  ExpectTensorNear(y[0], {2, 2}, {-2, 2, 0, 1}, 1e-4);

  const double e1 = std::exp(1.0), e2 = std::exp(2.0), e3 = std::exp(3.0), s = e1 + e2 + e3;
  y = RunCase({.op = "Softmax", .feeds = {{"x", F32({1, 3}, {1, 2, 3})}}});
  ExpectTensorNear(y[0], {1, 3}, {e1 / s, e2 / s, e3 / s});
  y = RunCase({.op = "LogSoftmax", .feeds = {{"x", F32({1, 3}, {1, 2, 3})}}});
  ExpectTensorNear(y[0], {1, 3}, {1 - std::log(s), 2 - std::log(s), 3 - std::log(s)});
}

TEST(OnnxOpsTest, ShapeOps) {
  std::vector<Tensor> y = RunCase({.op = "Reshape",
                                   .feeds = {{"x", A23()}},
                                   .initializers = {Int64Tensor("s", {2}, {3, -1})},
                                   .inputs = {"x", "s"}});
  ExpectTensorNear(y[0], {3, 2}, {1, 2, 3, 4, 5, 6});
  y = RunCase({.op = "Flatten", .feeds = {{"x", F32({2, 1, 3}, {1, 2, 3, 4, 5, 6})}}, .attrs = [](onnx::NodeProto* n) {
                 SetInt(n, "axis", 2);
               }});
  ExpectTensorNear(y[0], {2, 3}, {1, 2, 3, 4, 5, 6});
  y = RunCase({.op = "Transpose", .feeds = {{"x", A23()}}, .attrs = [](onnx::NodeProto* n) {
                 SetInts(n, "perm", {1, 0});
               }});
  ExpectTensorNear(y[0], {3, 2}, {1, 4, 2, 5, 3, 6});
  y = RunCase({.op = "Concat", .feeds = {{"a", A23()}, {"b", F32({1, 3}, {7, 8, 9})}}, .attrs = [](onnx::NodeProto* n) {
                 SetInt(n, "axis", 0);
               }});
  ExpectTensorNear(y[0], {3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  y = RunCase({.op = "Slice",
               .feeds = {{"x", A23()}},
               .initializers = {Int64Tensor("st", {1}, {2}), Int64Tensor("en", {1}, {-100}),
                                Int64Tensor("ax", {1}, {1}), Int64Tensor("sp", {1}, {-2})},
               .inputs = {"x", "st", "en", "ax", "sp"}});
  ExpectTensorNear(y[0], {2, 2}, {3, 1, 6, 4});
  y = RunCase({.op = "Pad",
               .feeds = {{"x", F32({1, 2}, {1, 2})}},
               .initializers = {Int64Tensor("p", {4}, {0, 1, 0, 2}), FloatTensor("v", {}, {9})},
               .inputs = {"x", "p", "v"}});
  ExpectTensorNear(y[0], {1, 5}, {9, 1, 2, 9, 9});
  y = RunCase({.op = "Pad",
               .feeds = {{"x", F32({1, 3}, {1, 2, 3})}},
               .initializers = {Int64Tensor("p", {4}, {0, 2, 0, 0})},
               .inputs = {"x", "p"},
               .attrs = [](onnx::NodeProto* n) { SetString(n, "mode", "reflect"); }});
  ExpectTensorNear(y[0], {1, 5}, {3, 2, 1, 2, 3});
  y = RunCase({.op = "Tile",
               .feeds = {{"x", F32({1, 2}, {1, 2})}},
               .initializers = {Int64Tensor("r", {2}, {2, 2})},
               .inputs = {"x", "r"}});
  ExpectTensorNear(y[0], {2, 4}, {1, 2, 1, 2, 1, 2, 1, 2});
  y = RunCase({.op = "Expand",
               .feeds = {{"x", F32({2, 1}, {1, 2})}},
               .initializers = {Int64Tensor("s", {2}, {2, 3})},
               .inputs = {"x", "s"}});
  ExpectTensorNear(y[0], {2, 3}, {1, 1, 1, 2, 2, 2});
  y = RunCase({.op = "Shape", .feeds = {{"x", A23()}}});
  ASSERT_EQ(y[0].dtype(), DType::kI64);
  ExpectTensorNear(y[0], {2}, {2, 3});
  y = RunCase({.op = "Range",
               .initializers = {FloatTensor("s", {}, {1}), FloatTensor("l", {}, {2}), FloatTensor("d", {}, {0.25})},
               .inputs = {"s", "l", "d"}});
  ExpectTensorNear(y[0], {4}, {1, 1.25, 1.5, 1.75});
}

TEST(OnnxOpsTest, IndexingOps) {
  std::vector<Tensor> y = RunCase({.op = "Gather",
                                   .feeds = {{"x", A23()}},
                                   .initializers = {Int64Tensor("i", {2}, {1, -1})},
                                   .inputs = {"x", "i"},
                                   .attrs = [](onnx::NodeProto* n) { SetInt(n, "axis", 1); }});
  ExpectTensorNear(y[0], {2, 2}, {2, 3, 5, 6});
  y = RunCase({.op = "GatherElements",
               .feeds = {{"x", A23()}},
               .initializers = {Int64Tensor("i", {2, 1}, {2, 0})},
               .inputs = {"x", "i"},
               .attrs = [](onnx::NodeProto* n) { SetInt(n, "axis", 1); }});
  ExpectTensorNear(y[0], {2, 1}, {3, 4});
  y = RunCase({.opset = 16,
               .op = "ScatterElements",
               .feeds = {{"x", A23()}},
               .initializers = {Int64Tensor("i", {2, 1}, {2, 0}), FloatTensor("u", {2, 1}, {10, 20})},
               .inputs = {"x", "i", "u"},
               .attrs = [](onnx::NodeProto* n) {
                 SetInt(n, "axis", 1);
                 SetString(n, "reduction", "add");
               }});
  ExpectTensorNear(y[0], {2, 3}, {1, 2, 13, 24, 5, 6});
  y = RunCase(
      {.op = "OneHot",
       .initializers = {Int64Tensor("i", {2}, {0, 2}), Int64Tensor("d", {}, {3}), FloatTensor("v", {2}, {0, 5})},
       .inputs = {"i", "d", "v"}});
  ExpectTensorNear(y[0], {2, 3}, {5, 0, 0, 0, 0, 5});
  y = RunCase({.op = "ArgMax", .feeds = {{"x", F32({2, 3}, {1, 9, 3, 7, 5, 6})}}, .attrs = [](onnx::NodeProto* n) {
                 SetInt(n, "axis", 1);
                 SetInt(n, "keepdims", 0);
               }});
  ASSERT_EQ(y[0].dtype(), DType::kI64);
  ExpectTensorNear(y[0], {2}, {1, 0});
}

TEST(OnnxOpsTest, ConstantForms) {
  onnx::ModelProto m = MakeModel(13);
  SetTensorAttr(AddNode(m, "Constant", {}, {"t"}), "value", FloatTensor("", {2}, {1.5, 2.5}));
  onnx::NodeProto* f = AddNode(m, "Constant", {}, {"f"});
  SetFloat(f, "value_float", 0.5f);
  SetInts(AddNode(m, "Constant", {}, {"is"}), "value_ints", {4, 5, 6});
  SetInt(AddNode(m, "Constant", {}, {"i"}), "value_int", 7);
  for (const char* o : {"t", "f", "is", "i"}) AddOutput(m, o);
  absl::StatusOr<std::vector<Tensor>> y = ImportAndRun(m, {});
  ASSERT_TRUE(y.ok()) << y.status();
  ExpectTensorNear((*y)[0], {2}, {1.5, 2.5});
  ExpectTensorNear((*y)[1], {}, {0.5});
  ASSERT_EQ((*y)[2].dtype(), DType::kI64);
  ExpectTensorNear((*y)[2], {3}, {4, 5, 6});
  ExpectTensorNear((*y)[3], {}, {7});
}

TEST(OnnxOpsTest, DropoutAtInferenceIsIdentity) {
  std::vector<Tensor> y =
      RunCase({.opset = 13, .op = "Dropout", .feeds = {{"x", F32({3}, {1, 2, 3})}}, .num_outputs = 2});
  ExpectTensorNear(y[0], {3}, {1, 2, 3});
  ASSERT_EQ(y[1].dtype(), DType::kBool);
  ExpectTensorNear(y[1], {3}, {1, 1, 1});
}

TEST(OnnxOpsTest, SoftmaxCrossEntropyLoss) {
  // Two samples, two classes, equal scores: each loss is log 2; mean is log 2.
  std::vector<Tensor> y = RunCase({.op = "SoftmaxCrossEntropyLoss",
                                   .feeds = {{"s", F32({2, 2}, {0, 0, 1, 1})}},
                                   .initializers = {Int64Tensor("l", {2}, {0, 1})},
                                   .inputs = {"s", "l"}});
  ExpectTensorNear(y[0], {}, {std::log(2.0)});
}

}  // namespace
}  // namespace tsr::onnx_test

// Import of the ONNX elementwise math, logic and activation ops mapped in
// graph/onnx/onnx_elementwise_ops.cc: each from a one-node model built in C++, run on
// the reference kernels and compared with hand-computed (or <cmath>) values; plus the
// attribute copies, CastLike's rewrite into Cast, and the opsets the ops start at.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/graph/onnx/onnx_node_case.h"
#include "tests/graph/onnx/onnx_test_util.h"

namespace tsr::onnx_test {
namespace {

Tensor RunFirst(const NodeCase& c) { return RunCase(c)[0]; }

Tensor Bools(const std::vector<int64_t>& dims, const std::vector<bool>& v) {
  return Tensor::FromVector<bool>(Shape(dims), v);
}

TEST(OnnxElementwiseOpsTest, UnaryMath) {
  const std::vector<float> x = {-0.75f, 0.25f, 0.5f};
  const std::vector<std::pair<std::string, std::function<double(double)>>> cases = {
      {"Sin", [](double v) { return std::sin(v); }},
      {"Cos", [](double v) { return std::cos(v); }},
      {"Tan", [](double v) { return std::tan(v); }},
      {"Asin", [](double v) { return std::asin(v); }},
      {"Acos", [](double v) { return std::acos(v); }},
      {"Atan", [](double v) { return std::atan(v); }},
      {"Sinh", [](double v) { return std::sinh(v); }},
      {"Cosh", [](double v) { return std::cosh(v); }},
      {"Asinh", [](double v) { return std::asinh(v); }},
      {"Atanh", [](double v) { return std::atanh(v); }},
      {"Floor", [](double v) { return std::floor(v); }},
      {"Ceil", [](double v) { return std::ceil(v); }},
      {"Sign", [](double v) { return v > 0 ? 1.0 : -1.0; }},
      {"Softsign", [](double v) { return v / (1 + std::fabs(v)); }},
      {"HardSwish", [](double v) { return v * std::clamp(v / 6 + 0.5, 0.0, 1.0); }},
  };
  for (const auto& [op, fn] : cases) {
    SCOPED_TRACE(op);
    std::vector<double> expected;
    for (float v : x) expected.push_back(fn(v));
    ExpectTensorNear(RunFirst({.op = op, .feeds = {{"x", F32({3}, x)}}}), {3}, expected);
  }
  ExpectTensorNear(RunFirst({.op = "Acosh", .feeds = {{"x", F32({2}, {1, 2})}}}), {2}, {0, std::acosh(2.0)});
  ExpectTensorNear(RunFirst({.op = "Round", .feeds = {{"x", F32({4}, {0.5, 1.5, -2.5, 2.6f})}}}), {4}, {0, 2, -2, 3});
}

TEST(OnnxElementwiseOpsTest, ActivationsCopyTheirAttributes) {
  const Tensor x = F32({4}, {-2, -0.5, 0.5, 3});
  auto run = [&](const std::string& op, std::function<void(onnx::NodeProto*)> attrs) {
    SCOPED_TRACE(op);
    return RunFirst({.op = op, .feeds = {{"x", x}}, .attrs = std::move(attrs)});
  };
  ExpectTensorNear(run("Elu", [](onnx::NodeProto* n) { SetFloat(n, "alpha", 2); }), {4},
                   {2 * std::expm1(-2), 2 * std::expm1(-0.5), 0.5, 3});
  ExpectTensorNear(run("Elu", nullptr), {4}, {std::expm1(-2), std::expm1(-0.5), 0.5, 3});
  ExpectTensorNear(run("Selu",
                       [](onnx::NodeProto* n) {
                         SetFloat(n, "alpha", 2);
                         SetFloat(n, "gamma", 3);
                       }),
                   {4}, {6 * std::expm1(-2), 6 * std::expm1(-0.5), 1.5, 9});
  ExpectTensorNear(run("Celu", [](onnx::NodeProto* n) { SetFloat(n, "alpha", 2); }), {4},
                   {2 * std::expm1(-1), 2 * std::expm1(-0.25), 0.5, 3});
  ExpectTensorNear(run("HardSigmoid",
                       [](onnx::NodeProto* n) {
                         SetFloat(n, "alpha", 0.5f);
                         SetFloat(n, "beta", 0.6f);
                       }),
                   {4}, {0, 0.35, 0.85, 1});
  ExpectTensorNear(run("ThresholdedRelu", [](onnx::NodeProto* n) { SetFloat(n, "alpha", 0.25f); }), {4},
                   {0, 0, 0.5, 3});
  ExpectTensorNear(run("Shrink",
                       [](onnx::NodeProto* n) {
                         SetFloat(n, "lambd", 1);
                         SetFloat(n, "bias", 0.5f);
                       }),
                   {4}, {-1.5, 0, 0, 2.5});
}

TEST(OnnxElementwiseOpsTest, PReluBroadcastsItsSlope) {
  const Tensor y =
      RunFirst({.op = "PRelu", .feeds = {{"x", F32({2, 2}, {-1, 2, -3, 4})}, {"slope", F32({2, 1}, {0.5, 0.25})}}});
  ExpectTensorNear(y, {2, 2}, {-0.5, 2, -0.75, 4});
}

TEST(OnnxElementwiseOpsTest, LogicAndOrderedComparisons) {
  const Tensor a = Bools({2, 2}, {false, false, true, true});
  const Tensor b = Bools({2}, {false, true});
  for (const auto& [op, expected] : std::vector<std::pair<std::string, std::vector<double>>>{
           {"And", {0, 0, 0, 1}}, {"Or", {0, 1, 1, 1}}, {"Xor", {0, 1, 1, 0}}}) {
    SCOPED_TRACE(op);
    const Tensor y = RunFirst({.op = op, .feeds = {{"a", a}, {"b", b}}});
    ASSERT_EQ(y.dtype(), DType::kBool);
    ExpectTensorNear(y, {2, 2}, expected);
  }
  ExpectTensorNear(RunFirst({.op = "Not", .feeds = {{"a", a}}}), {2, 2}, {1, 1, 0, 0});
  const std::vector<std::pair<std::string, Tensor>> feeds = {{"a", F32({3}, {1, 2, 3})}, {"b", F32({1}, {2})}};
  ExpectTensorNear(RunFirst({.op = "GreaterOrEqual", .feeds = feeds}), {3}, {0, 1, 1});
  ExpectTensorNear(RunFirst({.op = "LessOrEqual", .feeds = feeds}), {3}, {1, 1, 0});
}

TEST(OnnxElementwiseOpsTest, IsNaNAndIsInf) {
  const float inf = std::numeric_limits<float>::infinity();
  const Tensor x = F32({4}, {1, std::nanf(""), inf, -inf});
  ExpectTensorNear(RunFirst({.op = "IsNaN", .feeds = {{"x", x}}}), {4}, {0, 1, 0, 0});
  ExpectTensorNear(RunFirst({.op = "IsInf", .feeds = {{"x", x}}}), {4}, {0, 0, 1, 1});
  ExpectTensorNear(
      RunFirst(
          {.op = "IsInf", .feeds = {{"x", x}}, .attrs = [](onnx::NodeProto* n) { SetInt(n, "detect_positive", 0); }}),
      {4}, {0, 0, 0, 1});
}

TEST(OnnxElementwiseOpsTest, ModAndBitShift) {
  const std::vector<std::pair<std::string, Tensor>> ints = {
      {"a", Tensor::FromVector<int32_t>(Shape{4}, {7, -7, 7, -7})},
      {"b", Tensor::FromVector<int32_t>(Shape{4}, {3, 3, -3, -3})}};
  ExpectTensorNear(RunFirst({.op = "Mod", .feeds = ints}), {4}, {1, 2, -2, -1});
  ExpectTensorNear(RunFirst({.op = "Mod", .feeds = ints, .attrs = [](onnx::NodeProto* n) { SetInt(n, "fmod", 1); }}),
                   {4}, {1, -1, 1, -1});
  ExpectTensorNear(RunFirst({.op = "Mod",
                             .feeds = {{"a", F32({2}, {-5.5, 5.5})}, {"b", F32({1}, {2})}},
                             .attrs = [](onnx::NodeProto* n) { SetInt(n, "fmod", 1); }}),
                   {2}, {-1.5, 1.5});
  // Float Mod without fmod = 1 is invalid ONNX: an error naming the node.
  absl::StatusOr<ImportedModel> bad =
      Import(BuildCase({.op = "Mod", .feeds = {{"a", F32({2}, {1, 2})}, {"b", F32({2}, {1, 2})}}}));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("'fmod' = 1"), std::string::npos) << bad.status();

  const std::vector<std::pair<std::string, Tensor>> bytes = {{"x", Tensor::FromVector<uint8_t>(Shape{3}, {16, 4, 1})},
                                                             {"y", Tensor::FromVector<uint8_t>(Shape{3}, {1, 2, 3})}};
  const Tensor right = RunFirst(
      {.op = "BitShift", .feeds = bytes, .attrs = [](onnx::NodeProto* n) { SetString(n, "direction", "RIGHT"); }});
  ASSERT_EQ(right.dtype(), DType::kU8);
  ExpectTensorNear(right, {3}, {8, 1, 0});
  ExpectTensorNear(
      RunFirst(
          {.op = "BitShift", .feeds = bytes, .attrs = [](onnx::NodeProto* n) { SetString(n, "direction", "LEFT"); }}),
      {3}, {32, 16, 8});
}

TEST(OnnxElementwiseOpsTest, CastLikeBecomesCastToTheTargetsDType) {
  const NodeCase c = {
      .op = "CastLike",
      .feeds = {{"x", F32({3}, {1.5, -2.75, 3})}, {"like", Tensor::FromVector<int64_t>(Shape{1}, {0})}}};
  absl::StatusOr<ImportedModel> model = Import(BuildCase(c));
  ASSERT_TRUE(model.ok()) << model.status();
  const Node* node = model->graph.FindNode("y0");
  ASSERT_NE(node, nullptr);
  EXPECT_EQ(node->op(), "Cast");
  EXPECT_EQ(node->num_inputs(), 1);
  const Tensor y = RunFirst(c);
  ASSERT_EQ(y.dtype(), DType::kI64);
  ExpectTensorNear(y, {3}, {1, -2, 3});

  const Tensor d = RunFirst(
      {.op = "CastLike", .feeds = {{"x", F32({2}, {0.1f, 2})}, {"like", Tensor::FromVector<double>(Shape{1}, {0})}}});
  ASSERT_EQ(d.dtype(), DType::kF64);
  EXPECT_EQ(d.GetAsDouble(0), static_cast<double>(0.1f));
}

TEST(OnnxElementwiseOpsTest, OpsNewerThanTheModelsOpsetAreRejected) {
  for (const auto& [op, since] : std::vector<std::pair<std::string, int64_t>>{
           {"GreaterOrEqual", 12}, {"LessOrEqual", 12}, {"CastLike", 15}, {"HardSwish", 14}, {"Celu", 12}}) {
    SCOPED_TRACE(op);
    NodeCase c = {.opset = since - 1, .op = op, .feeds = {{"a", F32({2}, {1, 2})}}};
    if (op != "HardSwish" && op != "Celu") c.feeds.push_back({"b", F32({2}, {1, 2})});
    absl::StatusOr<ImportedModel> model = Import(BuildCase(c));
    ASSERT_FALSE(model.ok());
    EXPECT_NE(model.status().message().find(absl::StrCat("opset ", since - 1)), std::string::npos) << model.status();
    c.opset = since;
    EXPECT_TRUE(Import(BuildCase(c)).ok());
  }
}

}  // namespace
}  // namespace tsr::onnx_test

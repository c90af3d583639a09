// Import of the ONNX reduction, selection, normalization and loss ops mapped in
// graph/onnx/onnx_reduction_ops.cc: one-node models built in C++, imported and run
// on the reference kernels (axes as attributes before opset 18, as inputs after;
// TopK's two outputs; Hardmax before opset 13 coerced to 2-D).
#include <cmath>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/graph/onnx/onnx_node_case.h"
#include "tests/graph/onnx/onnx_test_util.h"

namespace tsr::onnx_test {
namespace {

Tensor A23() { return F32({2, 3}, {1, -2, 3, 4, 5, -6}); }

TEST(OnnxReductionOpsTest, ReduceAxesAttributeBeforeOpset18AndInputAfter) {
  struct Op {
    const char* name;
    std::vector<double> rows;  // over axis 1 of A23
  };
  const double lse0 = std::log(std::exp(1.0) + std::exp(-2.0) + std::exp(3.0));
  const double lse1 = std::log(std::exp(4.0) + std::exp(5.0) + std::exp(-6.0));
  const Op ops[] = {{"ReduceL1", {6, 15}},
                    {"ReduceSumSquare", {14, 77}},
                    {"ReduceLogSumExp", {lse0, lse1}},
                    {"ReduceL2", {std::sqrt(14.0), std::sqrt(77.0)}}};
  for (const Op& op : ops) {
    SCOPED_TRACE(op.name);
    std::vector<Tensor> y =
        RunCase({.opset = 13, .op = op.name, .feeds = {{"x", A23()}}, .attrs = [](onnx::NodeProto* n) {
                   SetInts(n, "axes", {-1});
                   SetInt(n, "keepdims", 0);
                 }});
    ExpectTensorNear(y[0], {2}, op.rows);
    y = RunCase({.opset = 18,
                 .op = op.name,
                 .feeds = {{"x", A23()}},
                 .initializers = {Int64Tensor("axes", {1}, {1})},
                 .inputs = {"x", "axes"}});
    ExpectTensorNear(y[0], {2, 1}, op.rows);
  }
  // ReduceLogSum of positive values; without axes it reduces everything.
  std::vector<Tensor> y = RunCase({.opset = 13, .op = "ReduceLogSum", .feeds = {{"x", F32({2, 2}, {1, 2, 3, 4})}}});
  ExpectTensorNear(y[0], {1, 1}, {std::log(10.0)});
  // noop_with_empty_axes (opset 18) is the identity.
  y = RunCase({.opset = 18, .op = "ReduceSumSquare", .feeds = {{"x", A23()}}, .attrs = [](onnx::NodeProto* n) {
                 SetInt(n, "noop_with_empty_axes", 1);
               }});
  ExpectTensorNear(y[0], {2, 3}, {1, -2, 3, 4, 5, -6});
}

TEST(OnnxReductionOpsTest, ArgMinCumSumTopK) {
  std::vector<Tensor> y =
      RunCase({.op = "ArgMin", .feeds = {{"x", F32({2, 3}, {3, 1, 1, 0, 5, 0})}}, .attrs = [](onnx::NodeProto* n) {
                 SetInt(n, "axis", 1);
                 SetInt(n, "select_last_index", 1);
               }});
  ExpectTensorNear(y[0], {2, 1}, {2, 2});
  y = RunCase({.op = "CumSum",
               .feeds = {{"x", F32({4}, {1, 2, 3, 4})}},
               .initializers = {Int64Tensor("axis", {}, {0})},
               .inputs = {"x", "axis"},
               .attrs = [](onnx::NodeProto* n) { SetInt(n, "reverse", 1); }});
  ExpectTensorNear(y[0], {4}, {10, 9, 7, 4});
  y = RunCase({.op = "TopK",
               .feeds = {{"x", F32({5}, {3, 1, 4, 1, 5})}},
               .initializers = {Int64Tensor("k", {1}, {3})},
               .inputs = {"x", "k"},
               .num_outputs = 2,
               .attrs = [](onnx::NodeProto* n) { SetInt(n, "largest", 0); }});
  ExpectTensorNear(y[0], {3}, {1, 1, 3});
  ExpectTensorNear(y[1], {3}, {1, 3, 0});
}

TEST(OnnxReductionOpsTest, HardmaxBothForms) {
  // [1,2,2] = [[1,3],[4,2]]: opset 13 along the last axis; opset 11 (axis 1) over the
  // flattened [1,4], whose maximum is the single 4.
  const Tensor x = F32({1, 2, 2}, {1, 3, 4, 2});
  std::vector<Tensor> y = RunCase({.opset = 13, .op = "Hardmax", .feeds = {{"x", x}}});
  ExpectTensorNear(y[0], {1, 2, 2}, {0, 1, 1, 0});
  y = RunCase({.opset = 11, .op = "Hardmax", .feeds = {{"x", x}}});
  ExpectTensorNear(y[0], {1, 2, 2}, {0, 0, 1, 0});
}

TEST(OnnxReductionOpsTest, Normalizations) {
  std::vector<Tensor> y = RunCase({.op = "InstanceNormalization",
                                   .feeds = {{"x", F32({1, 2, 2}, {1, 3, 2, 2})}},
                                   .initializers = {FloatTensor("s", {2}, {2, 1}), FloatTensor("b", {2}, {0, 0.5})},
                                   .inputs = {"x", "s", "b"},
                                   .attrs = [](onnx::NodeProto* n) { SetFloat(n, "epsilon", 1e-12f); }});
  ExpectTensorNear(y[0], {1, 2, 2}, {-2, 2, 0.5, 0.5});
  y = RunCase({.op = "LRN", .feeds = {{"x", F32({1, 3, 1, 1}, {1, 2, 3})}}, .attrs = [](onnx::NodeProto* n) {
                 SetInt(n, "size", 3);
                 SetFloat(n, "alpha", 3);
                 SetFloat(n, "beta", 1);
               }});
  ExpectTensorNear(y[0], {1, 3, 1, 1}, {1.0 / 6, 2.0 / 15, 3.0 / 14});
  y = RunCase({.op = "MeanVarianceNormalization",
               .feeds = {{"x", F32({2, 2}, {1, 2, 3, 3})}},
               .attrs = [](onnx::NodeProto* n) { SetInts(n, "axes", {1}); }});
  ExpectTensorNear(y[0], {2, 2}, {-1, 1, 0, 0});
}

TEST(OnnxReductionOpsTest, NegativeLogLikelihoodLossAndEinsum) {
  std::vector<Tensor> y = RunCase(
      {.op = "NegativeLogLikelihoodLoss",
       .feeds = {{"x", F32({2, 3}, {-1, -2, -3, -4, -5, -6})}, {"t", Tensor::FromVector<int64_t>(Shape{2}, {2, 7})}},
       .attrs = [](onnx::NodeProto* n) {
         SetInt(n, "ignore_index", 7);
         SetString(n, "reduction", "sum");
       }});
  ExpectTensorNear(y[0], {}, {3});
  y = RunCase({.op = "Einsum",
               .feeds = {{"a", F32({2, 2}, {1, 2, 3, 4})}, {"b", F32({2, 2}, {1, 0, 0, 2})}},
               .attrs = [](onnx::NodeProto* n) { SetString(n, "equation", "ij,jk->ik"); }});
  ExpectTensorNear(y[0], {2, 2}, {1, 4, 3, 8});
}

}  // namespace
}  // namespace tsr::onnx_test

// One-node ONNX models for the import tests of single ops: the case (op, opset, fed
// inputs, initializers, attributes), the model it makes, and its outputs run through
// the importer on the reference kernels.
#ifndef TESSERA_TESTS_GRAPH_ONNX_ONNX_NODE_CASE_H_
#define TESSERA_TESTS_GRAPH_ONNX_ONNX_NODE_CASE_H_

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "graph/onnx/onnx_export_tensor.h"
#include "gtest/gtest.h"
#include "tests/graph/onnx/onnx_test_util.h"

namespace tsr::onnx_test {

// A model of one node: `feeds` are graph inputs, `initializers` constants; the node
// reads `inputs` (default: the feeds in order) and writes outputs y0, y1, ...
struct NodeCase {
  int64_t opset = 17;
  std::string op;
  std::vector<std::pair<std::string, Tensor>> feeds;
  std::vector<TensorProto> initializers;
  std::vector<std::string> inputs;
  int num_outputs = 1;
  std::function<void(onnx::NodeProto*)> attrs;
};

inline onnx::ModelProto BuildCase(const NodeCase& c) {
  onnx::ModelProto m = MakeModel(c.opset);
  std::vector<std::string> inputs = c.inputs;
  for (const auto& [name, t] : c.feeds) {
    absl::StatusOr<int32_t> type = OnnxElemTypeFromDType(t.dtype());
    EXPECT_TRUE(type.ok()) << type.status();
    std::vector<Dim> dims(t.shape().dims().begin(), t.shape().dims().end());
    AddInput(m, name, type.ok() ? *type : 0, dims);
    if (c.inputs.empty()) inputs.push_back(name);
  }
  for (const TensorProto& t : c.initializers) AddInitializer(m, t);
  std::vector<std::string> outputs;
  for (int i = 0; i < c.num_outputs; ++i) outputs.push_back(absl::StrCat("y", i));
  onnx::NodeProto* n = AddNode(m, c.op, inputs, outputs, "node");
  if (c.attrs) c.attrs(n);
  for (const std::string& o : outputs) AddOutput(m, o);
  return m;
}

// The case's outputs (empty tensors after reporting a failure).
inline std::vector<Tensor> RunCase(const NodeCase& c) {
  absl::StatusOr<std::vector<Tensor>> out = ImportAndRun(BuildCase(c), c.feeds);
  EXPECT_TRUE(out.ok()) << c.op << ": " << out.status();
  return out.ok() ? *out : std::vector<Tensor>(c.num_outputs);
}

}  // namespace tsr::onnx_test

#endif  // TESSERA_TESTS_GRAPH_ONNX_ONNX_NODE_CASE_H_

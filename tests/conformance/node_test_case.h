// Reading one ONNX backend node-test case folder (model.onnx and
// test_data_set_*/{input,output}_N.pb) and importing its model: what the interpreter mode
// (onnx_case.h) and the compiled mode (compiled_case.h) share.
//
// Errors carry the categories of onnx_case.h: "type:", "import:", "data:", "output:".
#ifndef TESSERA_TESTS_CONFORMANCE_NODE_TEST_CASE_H_
#define TESSERA_TESTS_CONFORMANCE_NODE_TEST_CASE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/onnx/onnx_importer.h"
#include "graph/tensor.h"

namespace tsr::conformance {

struct NodeTestDataSet {
  // " (test_data_set_1)" when the case has several data sets, else empty: appended to
  // reasons, which stay short in the common case.
  std::string label;
  std::vector<Tensor> inputs;    // one per graph input fed at run time, in model order
  std::vector<Tensor> expected;  // one per graph output, in model order
};

struct NodeTestCase {
  std::string dir;
  std::string model_bytes;
  // Graph inputs fed at run time (not initializers) and outputs, in model order.
  std::vector<std::string> input_names, output_names;
  std::vector<NodeTestDataSet> data_sets;  // sorted by folder name; at least one
};

// Reads the model and every data set; checks that graph inputs and outputs are tensors
// of Tessera dtypes and that each data set has one tensor per input and output.
absl::StatusOr<NodeTestCase> ReadNodeTestCase(const std::string& case_dir);

// Imports the model: as it is with `bind_from` null; otherwise with `bind_from`'s
// integer and rank-0/1 inputs bound as constants (OnnxImportOptions::input_values), as
// the interpreter mode does for a model whose plain import fails: Tessera's graphs are
// static, so inputs that set output shapes must be known at import. Errors are
// "import: ..." (an error too when no input of the data set may be bound).
absl::StatusOr<ImportedModel> ImportNodeTestModel(const NodeTestCase& test_case, const NodeTestDataSet* bind_from);

}  // namespace tsr::conformance

#endif  // TESSERA_TESTS_CONFORMANCE_NODE_TEST_CASE_H_

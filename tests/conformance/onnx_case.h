// One case of the ONNX backend node-test suite: a folder holding model.onnx and
// test_data_set_*/{input,output}_N.pb (serialized TensorProtos, fed and compared in the
// order of the model's graph inputs and outputs).
//
// RunOnnxCase imports the model (graph/onnx/onnx_importer.h), runs it on a Session with
// each data set's inputs and compares every output (output_comparison.h). Any problem is
// a one-line error whose first word says where it happened (the generated-reason
// categories of expectations.h):
//   type:     a graph input or output is a sequence, optional, map or has an element
//             type Tessera lacks (string, int16, ...)
//   import:   the importer rejected the model (unsupported op, attribute, opset, ...)
//   data:     a test_data_set file is missing or unreadable
//   run:      creating the session or running it failed
//   output:   an output is missing
//   mismatch: an output's dtype, shape or values differ
// Crashes and hangs are not caught here; see isolated_run.h.
#ifndef TESSERA_TESTS_CONFORMANCE_ONNX_CASE_H_
#define TESSERA_TESTS_CONFORMANCE_ONNX_CASE_H_

#include <string>

#include "absl/status/status.h"
#include "tests/conformance/output_comparison.h"

namespace tsr::conformance {

struct OnnxCaseOptions {
  std::string device = "cpu";  // "cpu": optimized kernels, reference fallback
  int num_threads = 0;         // 0: one per core
  Tolerance tolerance;
  // A model whose import fails is imported again per data set with its integer and
  // rank-0/1 inputs bound to the data set's values (OnnxImportOptions::input_values):
  // Tessera's graphs are static, so inputs that set output shapes (Resize's sizes,
  // TopK's K, Reshape's shape...) must be known at import, as a user binds them.
  bool bind_inputs = true;
};

// OK when every data set's outputs match.
absl::Status RunOnnxCase(const std::string& case_dir, const OnnxCaseOptions& options = {});

}  // namespace tsr::conformance

#endif  // TESSERA_TESTS_CONFORMANCE_ONNX_CASE_H_

// One ONNX node-test case on the compiled path: the model is imported as the interpreter
// mode imports it (node_test_case.h), compiled by the compile driver
// (compiler/pipeline/compile_graph.h), loaded by runtime/compiled and run on each data
// set's inputs. Its outputs must
//   - match the data set's expected outputs as the interpreter mode's must
//     (output_comparison.h, ONNX's rtol 1e-3 / atol 1e-7), and
//   - agree with the interpreter's outputs on the same graph and inputs to 1e-4
//     relative per element (integers and bools exactly): the compiled path is checked
//     against the runtime it replaces, more strictly than against ONNX's reference.
//
// An error's first word says where it happened (reason categories of expectations.h):
//   compile:  CompileGraph refused the graph ("compile: binding the batch: ...")
//   load:     CompiledProgram::Load refused the executable
//   run:      the compiled program's Run failed (or, "run: the interpreter: ...", the
//             interpreter's, which the suite expects to pass)
//   mismatch: an output differs from the expected one
//   disagree: an output differs from the interpreter's beyond 1e-4
// and the categories of node_test_case.h for reading and importing.
#ifndef TESSERA_TESTS_CONFORMANCE_COMPILED_CASE_H_
#define TESSERA_TESTS_CONFORMANCE_COMPILED_CASE_H_

#include <string>

#include "absl/status/status.h"
#include "tests/conformance/output_comparison.h"

namespace tsr::conformance {

struct CompiledCaseOptions {
  // Worker threads of the compiled program and of the interpreter session (0: one per
  // core).
  int num_threads = 0;
  Tolerance expected_tolerance;  // against the data set: the interpreter mode's
  // Against the interpreter: 1e-4 relative per element, ten times stricter than ONNX's
  // rtol; the absolute term is ONNX's (it only forgives results within 1e-7 of zero).
  Tolerance interpreter_tolerance{.rtol = 1e-4, .atol = 1e-7};
  bool bind_inputs = true;  // as OnnxCaseOptions::bind_inputs
};

// OK when every data set's outputs match both references.
absl::Status RunCompiledCase(const std::string& case_dir, const CompiledCaseOptions& options = {});

}  // namespace tsr::conformance

#endif  // TESSERA_TESTS_CONFORMANCE_COMPILED_CASE_H_

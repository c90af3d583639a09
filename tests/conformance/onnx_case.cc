// RunOnnxCase: import, feed, run and compare one ONNX node-test folder (onnx_case.h).
#include "tests/conformance/onnx_case.h"

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "graph/onnx/onnx_importer.h"
#include "graph/status_macros.h"
#include "runtime/session.h"
#include "tests/conformance/node_test_case.h"

namespace tsr::conformance {

namespace {

absl::Status Categorized(absl::string_view category, const absl::Status& s) {
  return absl::InvalidArgumentError(absl::StrCat(category, ": ", s.message()));
}

absl::Status Error(absl::string_view category, absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat(category, ": ", message));
}

// Runs one data set on `session` and compares the outputs; the data set holds tensors for
// the model's graph inputs (`all_names`), of which the session is fed the ones still inputs
// (`fed_names`; the others were bound as constants).
absl::Status RunDataSet(Session& session, const std::vector<std::string>& all_names,
                        const std::vector<std::string>& fed_names, const std::vector<std::string>& output_names,
                        const NodeTestDataSet& set, const Tolerance& tolerance) {
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (size_t i = 0; i < set.inputs.size() && i < all_names.size(); ++i) {
    if (std::find(fed_names.begin(), fed_names.end(), all_names[i]) != fed_names.end()) {
      feeds.emplace_back(all_names[i], set.inputs[i]);
    }
  }
  absl::StatusOr<std::vector<Tensor>> outputs = session.Run(feeds, output_names);
  if (!outputs.ok()) return Categorized("run", outputs.status());
  if (outputs->size() != output_names.size() || set.expected.size() != output_names.size()) {
    return Error("output", absl::StrCat("the session returned ", outputs->size(), " outputs for ",
                                        output_names.size(), " fetches; the data set", set.label, " expects ",
                                        set.expected.size()));
  }
  for (size_t i = 0; i < output_names.size(); ++i) {
    if (absl::Status s = CompareOutput(set.expected[i], (*outputs)[i], tolerance); !s.ok()) {
      return Error("mismatch", absl::StrCat("output '", output_names[i], "'", set.label, ": ", s.message()));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status RunOnnxCase(const std::string& case_dir, const OnnxCaseOptions& options) {
  TSR_ASSIGN_OR_RETURN(NodeTestCase test_case, ReadNodeTestCase(case_dir));
  absl::StatusOr<ImportedModel> model = ImportNodeTestModel(test_case, nullptr);
  if (!model.ok() && !options.bind_inputs) return model.status();
  const SessionOptions session_options{.num_threads = options.num_threads, .device = options.device};

  std::unique_ptr<Session> session;
  std::vector<std::string> fed_names, output_names;
  const auto create = [&](ImportedModel imported) -> absl::Status {
    fed_names = imported.input_names;
    output_names = imported.output_names;
    absl::StatusOr<std::unique_ptr<Session>> created = Session::Create(std::move(imported.graph), session_options);
    if (!created.ok()) return Categorized("run", created.status());
    session = *std::move(created);
    return absl::OkStatus();
  };
  if (model.ok()) TSR_RETURN_IF_ERROR(create(*std::move(model)));
  for (const NodeTestDataSet& set : test_case.data_sets) {
    if (!model.ok()) {
      // The model needs some inputs as values (a static graph): import it again for this
      // data set with them bound as constants; the first import's error stands if that
      // does not help.
      absl::StatusOr<ImportedModel> rebound = ImportNodeTestModel(test_case, &set);
      if (!rebound.ok()) return model.status();
      TSR_RETURN_IF_ERROR(create(*std::move(rebound)));
    }
    TSR_RETURN_IF_ERROR(
        RunDataSet(*session, test_case.input_names, fed_names, output_names, set, options.tolerance));
  }
  return absl::OkStatus();
}

}  // namespace tsr::conformance

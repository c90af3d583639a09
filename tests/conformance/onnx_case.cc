// RunOnnxCase: import, feed, run and compare one ONNX node-test folder (onnx_case.h).
#include "tests/conformance/onnx_case.h"

#include <algorithm>
#include <filesystem>
#include <memory>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "graph/onnx/onnx_importer.h"
#include "graph/onnx/onnx_tensor.h"
#include "graph/status_macros.h"
#include "onnx/onnx_pb.h"
#include "platform/file.h"
#include "runtime/session.h"

namespace tsr::conformance {

namespace {

namespace fs = std::filesystem;

// Node-test models and tensors are a few MB at most; the bound only keeps a corrupt
// folder from costing memory.
constexpr int64_t kMaxFileBytes = int64_t{256} << 20;

absl::Status Categorized(absl::string_view category, const absl::Status& s) {
  return absl::Status(s.code(), absl::StrCat(category, ": ", s.message()));
}

absl::Status Error(absl::string_view category, absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat(category, ": ", message));
}

// Why a graph input or output cannot be a Tessera tensor, or OK.
absl::Status CheckValueType(const onnx::ValueInfoProto& value, absl::string_view kind) {
  const onnx::TypeProto& type = value.type();
  const std::string where = absl::StrCat(kind, " '", value.name(), "'");
  switch (type.value_case()) {
    case onnx::TypeProto::kTensorType: {
      absl::StatusOr<DType> dtype = DTypeFromOnnx(type.tensor_type().elem_type());
      if (!dtype.ok()) return Error("type", absl::StrCat(where, ": ", dtype.status().message()));
      return absl::OkStatus();
    }
    case onnx::TypeProto::kSequenceType:
      return Error("type", absl::StrCat(where, " is a sequence; Tessera has tensors only"));
    case onnx::TypeProto::kOptionalType:
      return Error("type", absl::StrCat(where, " is an optional; Tessera has tensors only"));
    case onnx::TypeProto::kMapType:
      return Error("type", absl::StrCat(where, " is a map; Tessera has tensors only"));
    case onnx::TypeProto::kSparseTensorType:
      return Error("type", absl::StrCat(where, " is a sparse tensor; Tessera has dense tensors only"));
    default:
      return Error("type", absl::StrCat(where, " has no type or an unknown kind of type"));
  }
}

// The element types the model declares for its graph inputs fed at run time (not
// initializers) and its outputs, in order.
struct ModelIoTypes {
  std::vector<int32_t> inputs, outputs;
  std::vector<std::string> input_names;
};

// Graph inputs fed at run time and graph outputs must be tensors of a Tessera dtype;
// checked before import for a clearer reason than the importer's.
absl::StatusOr<ModelIoTypes> CheckModelTypes(const std::string& bytes) {
  onnx::ModelProto model;
  if (!model.ParseFromString(bytes)) return Error("import", "model.onnx does not parse as a ModelProto");
  std::vector<std::string> initializers;
  for (const onnx::TensorProto& t : model.graph().initializer()) initializers.push_back(t.name());
  ModelIoTypes types;
  for (const onnx::ValueInfoProto& v : model.graph().input()) {
    if (std::find(initializers.begin(), initializers.end(), v.name()) != initializers.end()) continue;
    if (absl::Status s = CheckValueType(v, "graph input"); !s.ok()) return s;
    types.inputs.push_back(v.type().tensor_type().elem_type());
    types.input_names.push_back(v.name());
  }
  for (const onnx::ValueInfoProto& v : model.graph().output()) {
    if (absl::Status s = CheckValueType(v, "graph output"); !s.ok()) return s;
    types.outputs.push_back(v.type().tensor_type().elem_type());
  }
  return types;
}

// `declared` is the model's element type for the tensor (0: unknown).
absl::StatusOr<Tensor> ReadTensorFile(const fs::path& path, int32_t declared) {
  const std::string shown = absl::StrCat(path.parent_path().filename().string(), "/", path.filename().string());
  absl::StatusOr<std::string> bytes = ReadFileBounded(path.string(), kMaxFileBytes, "the conformance runner's limit");
  if (!bytes.ok()) return Error("data", absl::StrCat(shown, ": ", bytes.status().message()));
  onnx::TensorProto proto;
  if (!proto.ParseFromString(*bytes)) return Error("data", absl::StrCat(shown, " does not parse as a TensorProto"));
  // ONNX 1.12 writes its bfloat16 test data through numpy, which has no bfloat16: the
  // files hold the bit patterns as UINT16 (same 2-byte raw_data / int32_data layout).
  if (proto.data_type() == onnx::TensorProto::UINT16 && declared == onnx::TensorProto::BFLOAT16) {
    proto.set_data_type(onnx::TensorProto::BFLOAT16);
  }
  absl::StatusOr<Tensor> t = TensorFromOnnx(proto, OnnxTensorOptions{}, shown);
  if (!t.ok()) return Error("data", absl::StrCat(shown, ": ", t.status().message()));
  return t;
}

// `dir`/<prefix>_0.pb, <prefix>_1.pb, ... up to the first missing index; `declared`
// holds the model's element types of those tensors.
absl::StatusOr<std::vector<Tensor>> ReadTensorFiles(const fs::path& dir, absl::string_view prefix,
                                                    const std::vector<int32_t>& declared) {
  std::vector<Tensor> tensors;
  for (int i = 0;; ++i) {
    const fs::path path = dir / absl::StrCat(prefix, "_", i, ".pb");
    std::error_code ec;
    if (!fs::exists(path, ec)) break;
    absl::StatusOr<Tensor> t = ReadTensorFile(path, i < static_cast<int>(declared.size()) ? declared[i] : 0);
    if (!t.ok()) return t.status();
    tensors.push_back(*std::move(t));
  }
  return tensors;
}

// The case's test_data_set_* folders, sorted by name.
absl::StatusOr<std::vector<fs::path>> DataSets(const fs::path& case_dir) {
  std::vector<fs::path> sets;
  std::error_code ec;
  for (fs::directory_iterator it(case_dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_directory(ec) && absl::StartsWith(it->path().filename().string(), "test_data_set_")) {
      sets.push_back(it->path());
    }
  }
  if (ec) return Error("data", absl::StrCat("cannot list the case folder: ", ec.message()));
  if (sets.empty()) return Error("data", "no test_data_set_* folder");
  std::sort(sets.begin(), sets.end());
  return sets;
}

}  // namespace

namespace {

// Runs one data set on `session` and compares the outputs; `inputs` are the data set's
// tensors for the model's graph inputs (`all_names`), of which the session is fed the
// ones still inputs (`fed_names`; the others were bound as constants).
absl::Status RunDataSet(Session& session, const std::vector<std::string>& all_names,
                        const std::vector<std::string>& fed_names, const std::vector<std::string>& output_names,
                        const std::vector<Tensor>& inputs, const std::vector<Tensor>& expected,
                        const std::string& in_set, const Tolerance& tolerance) {
  if (inputs.size() != all_names.size()) {
    return Error("data", absl::StrCat("the model has ", all_names.size(), " inputs but the data set", in_set, " has ",
                                      inputs.size()));
  }
  if (expected.size() != output_names.size()) {
    return Error("output", absl::StrCat("the model has ", output_names.size(), " outputs but the data set", in_set,
                                        " expects ", expected.size()));
  }
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (std::find(fed_names.begin(), fed_names.end(), all_names[i]) != fed_names.end()) {
      feeds.emplace_back(all_names[i], inputs[i]);
    }
  }
  absl::StatusOr<std::vector<Tensor>> outputs = session.Run(feeds, output_names);
  if (!outputs.ok()) return Categorized("run", outputs.status());
  if (outputs->size() != output_names.size()) {
    return Error("output", absl::StrCat("the session returned ", outputs->size(), " outputs for ", output_names.size(),
                                        " fetches"));
  }
  for (size_t i = 0; i < output_names.size(); ++i) {
    if (absl::Status s = CompareOutput(expected[i], (*outputs)[i], tolerance); !s.ok()) {
      return Error("mismatch", absl::StrCat("output '", output_names[i], "'", in_set, ": ", s.message()));
    }
  }
  return absl::OkStatus();
}

// The inputs a static graph may need as values: integer tensors (shapes, axes, sizes,
// K) and tensors of rank 0 or 1 (Resize's scales, Pad's constant value).
bool MayBindInput(const Tensor& t) { return !IsFloating(t.dtype()) || t.shape().rank() <= 1; }

}  // namespace

absl::Status RunOnnxCase(const std::string& case_dir, const OnnxCaseOptions& options) {
  const fs::path dir(case_dir);
  absl::StatusOr<std::string> bytes =
      ReadFileBounded((dir / "model.onnx").string(), kMaxFileBytes, "the conformance runner's limit");
  if (!bytes.ok()) return Categorized("data", bytes.status());
  absl::StatusOr<ModelIoTypes> io_types = CheckModelTypes(*bytes);
  if (!io_types.ok()) return io_types.status();
  absl::StatusOr<std::vector<fs::path>> sets = DataSets(dir);
  absl::StatusOr<ImportedModel> model = ImportOnnxModelFromBytes(*bytes, OnnxImportOptions{}, case_dir);
  if (!model.ok() && !options.bind_inputs) return Categorized("import", model.status());
  if (!sets.ok()) return sets.status();
  const SessionOptions session_options{.num_threads = options.num_threads, .device = options.device};

  std::unique_ptr<Session> session;
  std::vector<std::string> fed_names, output_names;
  if (model.ok()) {
    fed_names = model->input_names;
    output_names = model->output_names;
    absl::StatusOr<std::unique_ptr<Session>> created = Session::Create(std::move(model->graph), session_options);
    if (!created.ok()) return Categorized("run", created.status());
    session = *std::move(created);
  }
  for (const fs::path& set : *sets) {
    // Named only when there are several, to keep the common reason short.
    const std::string in_set = sets->size() > 1 ? absl::StrCat(" (", set.filename().string(), ")") : "";
    absl::StatusOr<std::vector<Tensor>> inputs = ReadTensorFiles(set, "input", io_types->inputs);
    if (!inputs.ok()) return inputs.status();
    absl::StatusOr<std::vector<Tensor>> expected = ReadTensorFiles(set, "output", io_types->outputs);
    if (!expected.ok()) return expected.status();
    if (!model.ok()) {
      // The model needs some inputs as values (a static graph): import it again for this
      // data set with them bound as constants; the first import's error stands if that
      // does not help.
      OnnxImportOptions bound;
      for (size_t i = 0; i < inputs->size() && i < io_types->input_names.size(); ++i) {
        if (MayBindInput((*inputs)[i])) bound.input_values[io_types->input_names[i]] = (*inputs)[i];
      }
      absl::StatusOr<ImportedModel> rebound =
          bound.input_values.empty() ? model.status() : ImportOnnxModelFromBytes(*bytes, bound, case_dir);
      if (!rebound.ok()) return Categorized("import", model.status());
      fed_names = rebound->input_names;
      output_names = rebound->output_names;
      absl::StatusOr<std::unique_ptr<Session>> created = Session::Create(std::move(rebound->graph), session_options);
      if (!created.ok()) return Categorized("run", created.status());
      session = *std::move(created);
    }
    TSR_RETURN_IF_ERROR(RunDataSet(*session, io_types->input_names, fed_names, output_names, *inputs, *expected, in_set,
                                   options.tolerance));
  }
  return absl::OkStatus();
}

}  // namespace tsr::conformance

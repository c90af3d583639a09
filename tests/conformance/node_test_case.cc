// ReadNodeTestCase and ImportNodeTestModel: a node-test folder read into memory and its
// model imported as the interpreter mode imports it (node_test_case.h).
#include "tests/conformance/node_test_case.h"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <system_error>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "graph/onnx/onnx_tensor.h"
#include "onnx/onnx_pb.h"
#include "platform/file.h"

namespace tsr::conformance {

namespace {

namespace fs = std::filesystem;

// Node-test models and tensors are a few MB at most; the bound only keeps a corrupt
// folder from costing memory.
constexpr int64_t kMaxFileBytes = int64_t{256} << 20;

absl::Status Error(absl::string_view category, absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat(category, ": ", message));
}

// Why a graph input or output cannot be a Tessera tensor, or OK.
absl::Status CheckTensorType(const onnx::ValueInfoProto& value, absl::string_view kind) {
  const onnx::TypeProto& type = value.type();
  const std::string where = absl::StrCat(kind, " '", value.name(), "'");
  if (type.value_case() != onnx::TypeProto::kTensorType) {
    return Error("type", absl::StrCat(where, " is not a tensor; Tessera has dense tensors only"));
  }
  absl::StatusOr<DType> dtype = DTypeFromOnnx(type.tensor_type().elem_type());
  if (!dtype.ok()) return Error("type", absl::StrCat(where, ": ", dtype.status().message()));
  return absl::OkStatus();
}

// `declared` is the model's element type of the tensor (0: unknown).
absl::StatusOr<Tensor> ReadTensorFile(const fs::path& path, int32_t declared) {
  const std::string shown = absl::StrCat(path.parent_path().filename().string(), "/", path.filename().string());
  absl::StatusOr<std::string> bytes = ReadFileBounded(path.string(), kMaxFileBytes, "the conformance runner's limit");
  if (!bytes.ok()) return Error("data", absl::StrCat(shown, ": ", bytes.status().message()));
  onnx::TensorProto proto;
  if (!proto.ParseFromString(*bytes)) return Error("data", absl::StrCat(shown, " does not parse as a TensorProto"));
  // ONNX 1.12 writes bfloat16 test data through numpy, which has no bfloat16: the files
  // hold the bit patterns as UINT16 (the same 2-byte layout).
  if (proto.data_type() == onnx::TensorProto::UINT16 && declared == onnx::TensorProto::BFLOAT16) {
    proto.set_data_type(onnx::TensorProto::BFLOAT16);
  }
  absl::StatusOr<Tensor> t = TensorFromOnnx(proto, OnnxTensorOptions{}, shown);
  if (!t.ok()) return Error("data", absl::StrCat(shown, ": ", t.status().message()));
  return t;
}

// `dir`/<prefix>_0.pb, <prefix>_1.pb, ... one per entry of `declared` (the model's
// element types of those tensors).
absl::StatusOr<std::vector<Tensor>> ReadTensorFiles(const fs::path& dir, absl::string_view prefix,
                                                    const std::vector<int32_t>& declared, absl::string_view what) {
  std::vector<Tensor> tensors;
  for (size_t i = 0; i < declared.size(); ++i) {
    const fs::path path = dir / absl::StrCat(prefix, "_", i, ".pb");
    std::error_code ec;
    if (!fs::exists(path, ec)) {
      return Error("data", absl::StrCat("the model has ", declared.size(), " ", what, " but ", dir.filename().string(),
                                        " has no ", path.filename().string()));
    }
    absl::StatusOr<Tensor> t = ReadTensorFile(path, declared[i]);
    if (!t.ok()) return t.status();
    tensors.push_back(*std::move(t));
  }
  return tensors;
}

// The case's test_data_set_* folders, sorted by name.
absl::StatusOr<std::vector<fs::path>> DataSetFolders(const fs::path& case_dir) {
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

// The inputs a static graph may need as values: integer tensors (shapes, axes, sizes,
// K) and tensors of rank 0 or 1 (Resize's scales, Pad's constant value).
bool MayBindInput(const Tensor& t) { return !IsFloating(t.dtype()) || t.shape().rank() <= 1; }

}  // namespace

absl::StatusOr<NodeTestCase> ReadNodeTestCase(const std::string& case_dir) {
  const fs::path dir(case_dir);
  NodeTestCase test_case;
  test_case.dir = case_dir;
  absl::StatusOr<std::string> bytes =
      ReadFileBounded((dir / "model.onnx").string(), kMaxFileBytes, "the conformance runner's limit");
  if (!bytes.ok()) return Error("data", bytes.status().message());
  test_case.model_bytes = *std::move(bytes);

  onnx::ModelProto model;
  if (!model.ParseFromString(test_case.model_bytes))
    return Error("import", "model.onnx does not parse as a ModelProto");
  std::vector<std::string> initializers;
  for (const onnx::TensorProto& t : model.graph().initializer()) initializers.push_back(t.name());
  std::vector<int32_t> input_types, output_types;
  for (const onnx::ValueInfoProto& v : model.graph().input()) {
    if (std::find(initializers.begin(), initializers.end(), v.name()) != initializers.end()) continue;
    if (absl::Status s = CheckTensorType(v, "graph input"); !s.ok()) return s;
    input_types.push_back(v.type().tensor_type().elem_type());
    test_case.input_names.push_back(v.name());
  }
  for (const onnx::ValueInfoProto& v : model.graph().output()) {
    if (absl::Status s = CheckTensorType(v, "graph output"); !s.ok()) return s;
    output_types.push_back(v.type().tensor_type().elem_type());
    test_case.output_names.push_back(v.name());
  }

  absl::StatusOr<std::vector<fs::path>> folders = DataSetFolders(dir);
  if (!folders.ok()) return folders.status();
  for (const fs::path& folder : *folders) {
    NodeTestDataSet set;
    if (folders->size() > 1) set.label = absl::StrCat(" (", folder.filename().string(), ")");
    absl::StatusOr<std::vector<Tensor>> inputs = ReadTensorFiles(folder, "input", input_types, "inputs");
    if (!inputs.ok()) return inputs.status();
    absl::StatusOr<std::vector<Tensor>> expected = ReadTensorFiles(folder, "output", output_types, "outputs");
    if (!expected.ok()) return expected.status();
    set.inputs = *std::move(inputs);
    set.expected = *std::move(expected);
    test_case.data_sets.push_back(std::move(set));
  }
  return test_case;
}

absl::StatusOr<ImportedModel> ImportNodeTestModel(const NodeTestCase& test_case, const NodeTestDataSet* bind_from) {
  OnnxImportOptions options;
  if (bind_from != nullptr) {
    for (size_t i = 0; i < bind_from->inputs.size() && i < test_case.input_names.size(); ++i) {
      if (MayBindInput(bind_from->inputs[i])) options.input_values[test_case.input_names[i]] = bind_from->inputs[i];
    }
    if (options.input_values.empty()) return Error("import", "no input of the data set can be bound to its value");
  }
  absl::StatusOr<ImportedModel> model = ImportOnnxModelFromBytes(test_case.model_bytes, options, test_case.dir);
  if (!model.ok()) return Error("import", model.status().message());
  return model;
}

}  // namespace tsr::conformance

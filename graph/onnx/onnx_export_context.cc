// OnnxExportContext: tensor names, ONNX node and initializer creation, and errors for the
// export rules of single nodes.
#include "graph/onnx/onnx_export_context.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "graph/float16.h"
#include "graph/onnx/onnx_export_tensor.h"
#include "graph/onnx/onnx_tensor.h"

namespace tsr {

OnnxExportContext::OnnxExportContext(const Graph& graph, int64_t opset, onnx::GraphProto& proto)
    : graph_(graph), opset_(opset), proto_(proto) {}

std::string OnnxExportContext::UniqueName(absl::string_view base) {
  std::string name(base.empty() ? "tensor" : base);
  for (int k = 1; used_names_.contains(name); ++k) name = absl::StrCat(base, "_", k);
  used_names_.insert(name);
  return name;
}

std::string OnnxExportContext::NameOf(TensorRef ref) const {
  auto it = tensor_names_.find(ref);
  return it == tensor_names_.end() ? "" : it->second;
}

std::string OnnxExportContext::InputName(const Node& node, int i) const {
  const TensorRef ref = node.input(i);
  if (!ref.valid()) return "";
  auto it = tensor_names_.find(ref);
  return it == tensor_names_.end() ? "" : it->second;
}

std::vector<std::string> OnnxExportContext::InputNames(const Node& node) const {
  std::vector<std::string> names;
  for (int i = 0; i < node.num_inputs(); ++i) names.push_back(InputName(node, i));
  while (!names.empty() && names.back().empty()) names.pop_back();
  return names;
}

std::string OnnxExportContext::OutputName(const Node& node, int i) const {
  const TensorRef ref = node.output(i);
  if (i > 0 && !used_tensors_.contains(ref)) return "";
  auto it = tensor_names_.find(ref);
  return it == tensor_names_.end() ? "" : it->second;
}

std::vector<std::string> OnnxExportContext::OutputNames(const Node& node) const {
  std::vector<std::string> names;
  for (int i = 0; i < node.num_outputs(); ++i) names.push_back(OutputName(node, i));
  while (!names.empty() && names.back().empty()) names.pop_back();
  return names;
}

onnx::NodeProto* OnnxExportContext::AddNode(absl::string_view op_type, std::vector<std::string> inputs,
                                            std::vector<std::string> outputs, absl::string_view name) {
  std::string node_name(name);
  for (int k = 1; node_names_.contains(node_name); ++k) node_name = absl::StrCat(name, "_", k);
  node_names_.insert(node_name);
  onnx::NodeProto* n = proto_.add_node();
  n->set_name(node_name);
  n->set_op_type(std::string(op_type));
  for (std::string& in : inputs) n->add_input(std::move(in));
  for (std::string& out : outputs) n->add_output(std::move(out));
  return n;
}

absl::StatusOr<std::string> OnnxExportContext::AddInitializer(const Tensor& value, absl::string_view base) {
  std::string name = UniqueName(base);
  absl::StatusOr<onnx::TensorProto> proto = TensorToOnnx(value, name);
  if (!proto.ok()) return proto.status();
  *proto_.add_initializer() = *std::move(proto);
  return name;
}

absl::StatusOr<std::string> OnnxExportContext::AddScalar(double value, DType dtype, absl::string_view base) {
  absl::StatusOr<Tensor> t = FloatScalarTensor(dtype, value);
  if (!t.ok()) return t.status();
  return AddInitializer(*t, base);
}

std::string OnnxExportContext::AddInt64s(const std::vector<int64_t>& values, absl::string_view base) {
  std::string name = UniqueName(base);
  onnx::TensorProto* proto = proto_.add_initializer();
  proto->set_name(name);
  proto->set_data_type(onnx::TensorProto::INT64);
  proto->add_dims(static_cast<int64_t>(values.size()));
  for (int64_t v : values) proto->add_int64_data(v);
  return name;
}

absl::Status OnnxExportContext::Error(const Node& node, absl::string_view message) const {
  return absl::InvalidArgumentError(absl::StrCat("node '", node.name(), "' (", node.op(), "): ", message));
}

absl::Status OnnxExportContext::Unsupported(const Node& node, absl::string_view message) const {
  return absl::UnimplementedError(absl::StrCat("node '", node.name(), "' (", node.op(), "): ", message));
}

}  // namespace tsr

// OnnxNodeContext: attribute access, node creation and errors for one ONNX node.
#include "graph/onnx/onnx_node_context.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/op_registry.h"
#include "graph/status_macros.h"

namespace tsr {

namespace {

using onnx::AttributeProto;

absl::string_view OnnxAttrTypeName(int type) {
  switch (type) {
    case AttributeProto::FLOAT:
      return "FLOAT";
    case AttributeProto::INT:
      return "INT";
    case AttributeProto::STRING:
      return "STRING";
    case AttributeProto::TENSOR:
      return "TENSOR";
    case AttributeProto::GRAPH:
      return "GRAPH";
    case AttributeProto::FLOATS:
      return "FLOATS";
    case AttributeProto::INTS:
      return "INTS";
    case AttributeProto::STRINGS:
      return "STRINGS";
    default:
      return "another type";
  }
}

// The ONNX attribute type that carries a Tessera attribute type (UNDEFINED if none).
int OnnxAttrTypeFor(AttrType type) {
  switch (type) {
    case AttrType::kInt:
      return AttributeProto::INT;
    case AttrType::kFloat:
      return AttributeProto::FLOAT;
    case AttrType::kString:
      return AttributeProto::STRING;
    case AttrType::kInts:
      return AttributeProto::INTS;
    case AttrType::kFloats:
      return AttributeProto::FLOATS;
    default:
      return AttributeProto::UNDEFINED;
  }
}

}  // namespace

OnnxNodeContext::OnnxNodeContext(const onnx::NodeProto& node, int node_index, int64_t opset, Graph& graph,
                                 std::vector<TensorRef> inputs, const OnnxTensorOptions& tensor_options,
                                 std::function<std::string(absl::string_view)> unique_name)
    : node_(node),
      node_index_(node_index),
      opset_(opset),
      graph_(graph),
      inputs_(std::move(inputs)),
      tensor_options_(tensor_options),
      unique_name_(std::move(unique_name)) {
  for (const std::string& out : node_.output()) {
    if (!out.empty()) {
      base_name_ = out;
      break;
    }
  }
  if (base_name_.empty())
    base_name_ = node_.name().empty() ? absl::StrCat(node_.op_type(), "_", node_index) : node_.name();
}

std::string OnnxNodeContext::Describe() const {
  if (!node_.name().empty()) {
    return absl::StrCat("ONNX node '", node_.name(), "' (", node_.op_type(), ", opset ", opset_, ")");
  }
  return absl::StrCat("ONNX node #", node_index_, " (", node_.op_type(), ", opset ", opset_, ", output '",
                      node_.output_size() > 0 ? node_.output(0) : "", "')");
}

absl::Status OnnxNodeContext::Error(absl::string_view message) const {
  return absl::InvalidArgumentError(absl::StrCat(Describe(), ": ", message));
}

absl::Status OnnxNodeContext::Unsupported(absl::string_view message) const {
  return absl::UnimplementedError(absl::StrCat(Describe(), ": ", message));
}

absl::StatusOr<TensorType> OnnxNodeContext::InputType(int i) const {
  const TensorRef ref = input(i);
  const TensorType* t = ref.valid() ? graph_.TypeOf(ref) : nullptr;
  if (t == nullptr) return Error(absl::StrCat("input ", i, " is required"));
  return *t;
}

const AttributeProto* OnnxNodeContext::FindAttr(absl::string_view name) {
  for (const AttributeProto& a : node_.attribute()) {
    if (a.name() == name) {
      handled_attrs_.insert(a.name());
      return &a;
    }
  }
  return nullptr;
}

// A present attribute must carry the expected type; ref_attr_name (only meaningful
// inside ONNX functions) is not supported.
#define TSR_ONNX_GET_ATTR_(a, name, expected)                                                           \
  const AttributeProto* a = FindAttr(name);                                                             \
  if (a == nullptr) return std::nullopt;                                                                \
  if (!a->ref_attr_name().empty()) {                                                                    \
    return Unsupported(absl::StrCat("attribute '", name, "' refers to a function attribute"));          \
  }                                                                                                     \
  if (a->type() != AttributeProto::expected) {                                                          \
    return Error(absl::StrCat("attribute '", name, "' has type ", OnnxAttrTypeName(a->type()), " but ", \
                              #expected " is required"));                                               \
  }

absl::StatusOr<std::optional<int64_t>> OnnxNodeContext::GetInt(absl::string_view name) {
  TSR_ONNX_GET_ATTR_(a, name, INT);
  return a->i();
}

absl::StatusOr<std::optional<double>> OnnxNodeContext::GetFloat(absl::string_view name) {
  TSR_ONNX_GET_ATTR_(a, name, FLOAT);
  return static_cast<double>(a->f());
}

absl::StatusOr<std::optional<std::string>> OnnxNodeContext::GetString(absl::string_view name) {
  TSR_ONNX_GET_ATTR_(a, name, STRING);
  return a->s();
}

absl::StatusOr<std::optional<std::vector<int64_t>>> OnnxNodeContext::GetInts(absl::string_view name) {
  TSR_ONNX_GET_ATTR_(a, name, INTS);
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

absl::StatusOr<std::optional<std::vector<double>>> OnnxNodeContext::GetFloats(absl::string_view name) {
  TSR_ONNX_GET_ATTR_(a, name, FLOATS);
  return std::vector<double>(a->floats().begin(), a->floats().end());
}

absl::StatusOr<std::optional<Tensor>> OnnxNodeContext::GetTensor(absl::string_view name) {
  TSR_ONNX_GET_ATTR_(a, name, TENSOR);
  absl::StatusOr<Tensor> t = TensorFromOnnx(a->t(), tensor_options_, absl::StrCat("attribute '", name, "'"));
  if (!t.ok()) return absl::Status(t.status().code(), absl::StrCat(Describe(), ": ", t.status().message()));
  return *std::move(t);
}

#undef TSR_ONNX_GET_ATTR_

absl::Status OnnxNodeContext::CopyAttrs(std::initializer_list<absl::string_view> names, AttrMap& attrs,
                                        absl::string_view op) {
  const OpDef* def = op.empty() ? nullptr : graph_.registry().Find(op);
  for (absl::string_view name : names) {
    const AttributeProto* a = FindAttr(name);
    if (a == nullptr) continue;
    if (!a->ref_attr_name().empty()) {
      return Unsupported(absl::StrCat("attribute '", name, "' refers to a function attribute"));
    }
    const AttrDef* attr_def = def == nullptr ? nullptr : def->FindAttr(name);
    if (attr_def != nullptr && OnnxAttrTypeFor(attr_def->type) != a->type()) {
      return Error(absl::StrCat("attribute '", name, "' has type ", OnnxAttrTypeName(a->type()), " but ",
                                OnnxAttrTypeName(OnnxAttrTypeFor(attr_def->type)), " is required"));
    }
    std::string key(name);
    switch (a->type()) {
      case AttributeProto::INT:
        attrs[key] = AttrValue::Int(a->i());
        break;
      case AttributeProto::FLOAT:
        attrs[key] = AttrValue::Float(a->f());
        break;
      case AttributeProto::STRING:
        attrs[key] = AttrValue::String(a->s());
        break;
      case AttributeProto::INTS:
        attrs[key] = AttrValue::Ints(std::vector<int64_t>(a->ints().begin(), a->ints().end()));
        break;
      case AttributeProto::FLOATS:
        attrs[key] = AttrValue::Floats(std::vector<double>(a->floats().begin(), a->floats().end()));
        break;
      default:
        return Error(absl::StrCat("attribute '", name, "' has the unexpected type ", OnnxAttrTypeName(a->type())));
    }
  }
  return absl::OkStatus();
}

absl::Status OnnxNodeContext::CheckAllAttrsHandled() const {
  absl::flat_hash_set<absl::string_view> seen;
  for (const AttributeProto& a : node_.attribute()) {
    if (!seen.insert(a.name()).second) return Error(absl::StrCat("attribute '", a.name(), "' is given twice"));
    if (!handled_attrs_.contains(a.name())) {
      return Unsupported(absl::StrCat("attribute '", a.name(), "' is not supported"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Node*> OnnxNodeContext::AddNode(absl::string_view op, std::vector<TensorRef> inputs, AttrMap attrs,
                                               bool produces_outputs) {
  std::string name;
  if (produces_outputs && !main_node_added_ && graph_.FindNode(base_name_) == nullptr) {
    name = base_name_;
    main_node_added_ = true;
  } else {
    name = unique_name_(absl::StrCat(base_name_, "/", op));
  }
  absl::StatusOr<Node*> n =
      graph_.AddNodeAndInfer(std::move(name), std::string(op), std::move(inputs), std::move(attrs));
  if (!n.ok()) return absl::Status(n.status().code(), absl::StrCat(Describe(), ": ", n.status().message()));
  return n;
}

absl::StatusOr<TensorRef> OnnxNodeContext::AddConstant(Tensor value, absl::string_view suffix) {
  absl::StatusOr<Node*> n = graph_.AddNodeAndInfer(unique_name_(absl::StrCat(base_name_, "/", suffix)), "Constant", {},
                                                   {{"value", AttrValue::FromTensor(std::move(value))}});
  if (!n.ok()) return absl::Status(n.status().code(), absl::StrCat(Describe(), ": ", n.status().message()));
  return (*n)->output(0);
}

absl::StatusOr<TensorRef> OnnxNodeContext::AddInt64Constant(const std::vector<int64_t>& values,
                                                            absl::string_view suffix) {
  return AddConstant(Tensor::FromVector<int64_t>(Shape{static_cast<int64_t>(values.size())}, values), suffix);
}

}  // namespace tsr

// The generic 1:1 export rule (ExportDirect): a Tessera node becomes the ONNX op of the
// same name, driven by ONNX's own schema for the target opset — which inputs it takes,
// which attributes it has, their types and defaults — so that ops added to Tessera with
// ONNX names and semantics export without code of their own.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/onnx/onnx_export_context.h"
#include "graph/onnx/onnx_export_tensor.h"
#include "onnx/defs/schema.h"

namespace tsr {

namespace {

// The declared name of input slot i (the variadic last argument covers the rest).
std::string InputArgName(const OpDef& def, int i) {
  if (def.inputs.empty()) return "";
  return def.inputs[std::min<size_t>(static_cast<size_t>(i), def.inputs.size() - 1)].name;
}

std::string OnnxAttrTypeName(onnx::AttributeProto::AttributeType type) {
  return onnx::AttributeProto::AttributeType_Name(type);
}

// `value` as an ONNX attribute of the schema's type: bools and dtypes become ints.
absl::StatusOr<onnx::AttributeProto> ToOnnxAttr(const Node& node, OnnxExportContext& ctx, const std::string& name,
                                                const AttrValue& value, onnx::AttributeProto::AttributeType type) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(type);
  using A = onnx::AttributeProto;
  const AttrType t = value.type();
  bool ok = true;
  switch (type) {
    case A::INT:
      if (t == AttrType::kInt) {
        a.set_i(value.i());
      } else if (t == AttrType::kBool) {
        a.set_i(value.b() ? 1 : 0);
      } else if (t == AttrType::kType) {
        absl::StatusOr<int32_t> elem = OnnxElemTypeFromDType(value.dtype());
        if (!elem.ok()) return ctx.Error(node, absl::StrCat("attribute '", name, "': ", elem.status().message()));
        a.set_i(*elem);
      } else {
        ok = false;
      }
      break;
    case A::FLOAT:
      ok = t == AttrType::kFloat;
      if (ok) a.set_f(static_cast<float>(value.f()));
      break;
    case A::STRING:
      ok = t == AttrType::kString;
      if (ok) a.set_s(value.s());
      break;
    case A::INTS:
      ok = t == AttrType::kInts;
      if (ok) {
        for (int64_t v : value.ints()) a.add_ints(v);
      }
      break;
    case A::FLOATS:
      ok = t == AttrType::kFloats;
      if (ok) {
        for (double v : value.floats()) a.add_floats(static_cast<float>(v));
      }
      break;
    case A::STRINGS:
      ok = t == AttrType::kStrings;
      if (ok) {
        for (const std::string& v : value.strings()) a.add_strings(v);
      }
      break;
    case A::TENSOR:
      ok = t == AttrType::kTensor;
      if (ok) {
        absl::StatusOr<onnx::TensorProto> proto = TensorToOnnx(value.tensor(), "");
        if (!proto.ok()) return ctx.Error(node, absl::StrCat("attribute '", name, "': ", proto.status().message()));
        *a.mutable_t() = *std::move(proto);
      }
      break;
    default:
      ok = false;
      break;
  }
  if (!ok) {
    return ctx.Unsupported(node, absl::StrCat("attribute '", name, "' is ", AttrTypeName(t), " but ONNX opset ",
                                              ctx.opset(), " declares it ", OnnxAttrTypeName(type)));
  }
  return a;
}

// A constant input turned into the attribute ONNX `opset` takes instead (Reduce*'s axes
// before opset 18). Empty lists are left out: they mean what an absent attribute means.
absl::StatusOr<std::optional<onnx::AttributeProto>> DemoteInput(const Node& node, OnnxExportContext& ctx, int i,
                                                                const std::string& name,
                                                                onnx::AttributeProto::AttributeType type) {
  const Tensor* value = ctx.graph().ConstantValue(node.input(i));
  if (value == nullptr) {
    return ctx.Unsupported(node, absl::StrCat("input ", i, " ('", name, "') is not a constant, but ONNX opset ",
                                              ctx.opset(), " takes '", name, "' as an attribute"));
  }
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(type);
  if (type == onnx::AttributeProto::INTS) {
    if (value->num_elements() == 0) return std::optional<onnx::AttributeProto>();
    for (int64_t v : value->ToInt64Vector()) a.add_ints(v);
  } else if (type == onnx::AttributeProto::INT && value->num_elements() == 1) {
    a.set_i(value->GetAsInt64(0));
  } else {
    return ctx.Unsupported(node, absl::StrCat("input ", i, " ('", name, "') cannot become ONNX opset ", ctx.opset(),
                                              "'s ", OnnxAttrTypeName(type), " attribute '", name, "'"));
  }
  return std::optional<onnx::AttributeProto>(std::move(a));
}

bool SameAttr(const onnx::AttributeProto& a, const onnx::AttributeProto& default_value) {
  onnx::AttributeProto d = default_value;
  d.set_name(a.name());
  return d.SerializeAsString() == a.SerializeAsString();
}

}  // namespace

absl::Status ExportDirect(const Node& node, OnnxExportContext& ctx, const std::vector<std::string>& skip_attrs) {
  const OpDef* def = node.op_def();
  if (def == nullptr) return ctx.Error(node, "the op is not registered");
  const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(node.op(), static_cast<int>(ctx.opset()), "");
  if (schema == nullptr || schema->Deprecated()) {
    return ctx.Unsupported(node, absl::StrCat("ONNX opset ", ctx.opset(), " has no op '", node.op(), "'"));
  }
  const auto& schema_attrs = schema->attributes();

  std::vector<std::string> inputs;
  std::vector<onnx::AttributeProto> attrs;
  for (int i = 0; i < node.num_inputs(); ++i) {
    const std::string arg = InputArgName(*def, i);
    if (i < schema->max_input()) {
      inputs.push_back(ctx.InputName(node, i));
      continue;
    }
    if (!node.input(i).valid()) continue;
    auto it = schema_attrs.find(arg);
    if (it == schema_attrs.end()) {
      return ctx.Unsupported(node, absl::StrCat("input ", i, " ('", arg, "') has no form in ONNX opset ", ctx.opset(),
                                                " (", node.op(), " takes at most ", schema->max_input(), " inputs)"));
    }
    absl::StatusOr<std::optional<onnx::AttributeProto>> a = DemoteInput(node, ctx, i, arg, it->second.type);
    if (!a.ok()) return a.status();
    if (a->has_value()) attrs.push_back(**std::move(a));
  }
  while (!inputs.empty() && inputs.back().empty()) inputs.pop_back();
  if (static_cast<int>(inputs.size()) < schema->min_input()) {
    return ctx.Error(node, absl::StrCat("has ", inputs.size(), " inputs but ONNX opset ", ctx.opset(), "'s ", node.op(),
                                        " needs at least ", schema->min_input()));
  }

  for (const AttrDef& ad : def->attrs) {
    if (std::find(skip_attrs.begin(), skip_attrs.end(), ad.name) != skip_attrs.end()) continue;
    const AttrValue* set = node.FindAttr(ad.name);
    const AttrValue* value = set != nullptr ? set : (ad.default_value ? &*ad.default_value : nullptr);
    if (value == nullptr) continue;
    auto it = schema_attrs.find(ad.name);
    if (it == schema_attrs.end()) {
      // Absent from this opset: fine while it holds Tessera's default (the behaviour
      // the older opset has), an error otherwise.
      if (set == nullptr || (ad.default_value && *set == *ad.default_value)) continue;
      return ctx.Unsupported(node, absl::StrCat("attribute '", ad.name, "' = ", set->ToString(),
                                                " has no form in ONNX opset ", ctx.opset()));
    }
    absl::StatusOr<onnx::AttributeProto> a = ToOnnxAttr(node, ctx, ad.name, *value, it->second.type);
    if (!a.ok()) return a.status();
    const bool has_default = it->second.default_value.type() != onnx::AttributeProto::UNDEFINED;
    if (!it->second.required && has_default && SameAttr(*a, it->second.default_value)) continue;
    attrs.push_back(*std::move(a));
  }

  std::vector<std::string> outputs = ctx.OutputNames(node);
  if (static_cast<int>(outputs.size()) > schema->max_output()) {
    return ctx.Unsupported(node, absl::StrCat("output ", outputs.size() - 1, " is used but ONNX opset ", ctx.opset(),
                                              "'s ", node.op(), " has at most ", schema->max_output(), " outputs"));
  }
  onnx::NodeProto* n = ctx.AddNode(node.op(), std::move(inputs), std::move(outputs), node.name());
  for (onnx::AttributeProto& a : attrs) *n->add_attribute() = std::move(a);
  return absl::OkStatus();
}

}  // namespace tsr

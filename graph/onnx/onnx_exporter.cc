// ExportOnnxModel and friends: the graph-level part of the ONNX export — which nodes and
// outputs, tensor names, graph inputs with their (symbolic) shapes, initializers from
// Constants and Variables — driving the per-op rules (onnx_export_rules.cc), then ONNX's
// checker and the atomic write.
#include "graph/onnx/onnx_exporter.h"

#include <exception>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "graph/onnx/onnx_export_context.h"
#include "graph/onnx/onnx_export_model.h"
#include "graph/onnx/onnx_export_tensor.h"
#include "graph/status_macros.h"
#include "onnx/checker.h"
#include "onnx/shape_inference/implementation.h"
#include "platform/file.h"

namespace tsr {

namespace {

bool IsSourceOp(const std::string& op) { return op == "Placeholder" || op == "Constant" || op == "Variable"; }

struct ExportedOutput {
  std::string name;
  TensorRef ref;
};

absl::StatusOr<std::vector<ExportedOutput>> ResolveOutputs(const Graph& graph, const OnnxExportOptions& options) {
  std::vector<ExportedOutput> outputs;
  if (!options.outputs.empty()) {
    for (const std::string& name : options.outputs) {
      const SignatureEntry* entry = nullptr;
      for (const SignatureEntry& e : graph.outputs()) {
        if (e.name == name) entry = &e;
      }
      if (entry != nullptr) {
        outputs.push_back({name, entry->ref});
        continue;
      }
      absl::StatusOr<TensorRef> ref = graph.ParseTensorName(name);
      if (!ref.ok() || graph.TypeOf(*ref) == nullptr) {
        return absl::NotFoundError(absl::StrCat("no signature output or tensor named '", name, "' to export"));
      }
      outputs.push_back({name, *ref});
    }
    return outputs;
  }
  for (const SignatureEntry& e : graph.outputs()) outputs.push_back({e.name, e.ref});
  if (!outputs.empty()) return outputs;
  // No signature: the sinks.
  absl::flat_hash_set<int> read;
  for (const Node* node : graph.nodes()) {
    for (const TensorRef& in : node->inputs()) read.insert(in.node);
  }
  for (const Node* node : graph.nodes()) {
    if (read.contains(node->id()) || IsSourceOp(node->op()) || node->num_outputs() == 0) continue;
    outputs.push_back({graph.TensorName(node->output(0)), node->output(0)});
  }
  if (outputs.empty()) return absl::InvalidArgumentError("the graph has no outputs to export");
  return outputs;
}

absl::Status SetValueInfo(const TensorType& type, const OnnxExportOptions& options, onnx::ValueInfoProto& info) {
  TSR_ASSIGN_OR_RETURN(int32_t elem_type, OnnxElemTypeFromDType(type.dtype));
  onnx::TypeProto_Tensor* tensor = info.mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(elem_type);
  onnx::TensorShapeProto* shape = tensor->mutable_shape();
  for (int64_t d : type.shape.dims()) {
    onnx::TensorShapeProto_Dimension* dim = shape->add_dim();
    if (d != kBatchDim) {
      dim->set_dim_value(d);
    } else if (options.batch_size > 0) {
      dim->set_dim_value(options.batch_size);
    } else {
      dim->set_dim_param(options.batch_dim_name);
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Tensor> VariableValue(const Node& node, const OnnxExportOptions& options) {
  const TensorType& type = node.output_type(0);
  auto it = options.variable_values.find(node.name());
  if (it != options.variable_values.end()) {
    if (it->second.type() != type) {
      return absl::InvalidArgumentError(absl::StrCat("variable '", node.name(), "' is ", type.ToString(),
                                                     " but the value given for it is ", it->second.type().ToString()));
    }
    return it->second;
  }
  const AttrValue* value = node.FindAttr("value");
  if (value != nullptr && value->type() == AttrType::kTensor && value->tensor().valid()) return value->tensor();
  return absl::FailedPreconditionError(
      absl::StrCat("variable '", node.name(),
                   "' has no value: pass it in OnnxExportOptions::variable_values (e.g. from Session::GetVariable) "
                   "or export a frozen graph (Variables holding a 'value')"));
}

absl::Status CheckOptions(const OnnxExportOptions& options) {
  if (options.opset < kMinOnnxExportOpset || options.opset > kMaxOnnxExportOpset) {
    return absl::InvalidArgumentError(absl::StrCat("ONNX export supports opsets ", kMinOnnxExportOpset, " to ",
                                                   kMaxOnnxExportOpset, ", not ", options.opset));
  }
  if (options.batch_size < 0) return absl::InvalidArgumentError("the batch size must not be negative");
  if (options.batch_size == 0 && options.batch_dim_name.empty()) {
    return absl::InvalidArgumentError("the symbolic batch dimension needs a name");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<onnx::ModelProto> ExportOnnxModel(const Graph& graph, const OnnxExportOptions& options) {
  TSR_RETURN_IF_ERROR(CheckOptions(options));
  if (absl::Status s = graph.Verify(); !s.ok()) {
    return absl::Status(s.code(), absl::StrCat("the graph does not verify: ", s.message()));
  }
  // A graph holding optimizer updates is a training graph even where they are not
  // needed for the outputs: say so rather than silently dropping them.
  for (const Node* node : graph.nodes()) {
    if (node->op_def() != nullptr && !node->op_def()->variable_updates.empty()) {
      return absl::UnimplementedError(absl::StrCat("node '", node->name(), "' (", node->op(),
                                                   "): training ops cannot be exported to ONNX; export the "
                                                   "inference graph"));
    }
  }
  TSR_ASSIGN_OR_RETURN(std::vector<ExportedOutput> outputs, ResolveOutputs(graph, options));

  // The nodes the outputs need.
  std::vector<bool> needed(graph.num_nodes(), false);
  std::vector<int> stack;
  for (const ExportedOutput& o : outputs) stack.push_back(o.ref.node);
  while (!stack.empty()) {
    const int id = stack.back();
    stack.pop_back();
    if (needed[id]) continue;
    needed[id] = true;
    for (const TensorRef& in : graph.node(id)->inputs()) {
      if (in.valid()) stack.push_back(in.node);
    }
  }
  TSR_ASSIGN_OR_RETURN(std::vector<const Node*> order, graph.TopologicalOrder());

  onnx::ModelProto model;
  model.set_ir_version(onnx::IR_VERSION);
  model.set_producer_name(options.producer_name);
  onnx::OperatorSetIdProto* opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(options.opset);
  onnx::GraphProto& proto = *model.mutable_graph();
  proto.set_name(options.graph_name);
  OnnxExportContext ctx(graph, options.opset, proto);

  // Names: signature inputs and exported outputs keep theirs; every other tensor is
  // named after its node ("node", "node:1"), made unique.
  for (const SignatureEntry& e : graph.inputs()) {
    const Node* node = graph.node(e.ref.node);
    if (node->op() != "Placeholder" || ctx.HasTensorName(e.ref) || ctx.IsNameUsed(e.name)) {
      return absl::InvalidArgumentError(
          absl::StrCat("signature input '", e.name, "' must name its own Placeholder to become an ONNX graph input"));
    }
    ctx.ReserveName(e.name);
    ctx.SetTensorName(e.ref, e.name);
  }
  std::vector<bool> needs_identity(outputs.size(), false);
  for (size_t i = 0; i < outputs.size(); ++i) {
    const ExportedOutput& o = outputs[i];
    if (ctx.IsNameUsed(o.name)) {
      return absl::InvalidArgumentError(
          absl::StrCat("output '", o.name, "': the name is already an input or another output"));
    }
    ctx.ReserveName(o.name);
    ctx.MarkUsed(o.ref);
    // Graph inputs, initializers and tensors already exported under another name are
    // passed through an Identity node.
    if (ctx.HasTensorName(o.ref) || IsSourceOp(graph.node(o.ref.node)->op())) {
      needs_identity[i] = true;
    } else {
      ctx.SetTensorName(o.ref, o.name);
    }
  }
  for (const Node* node : order) {
    if (!needed[node->id()]) continue;
    for (const TensorRef& in : node->inputs()) {
      if (in.valid()) ctx.MarkUsed(in);
    }
    for (int i = 0; i < node->num_outputs(); ++i) {
      const TensorRef ref = node->output(i);
      if (ctx.HasTensorName(ref)) continue;
      ctx.SetTensorName(ref, ctx.UniqueName(i == 0 ? node->name() : absl::StrCat(node->name(), ":", i)));
    }
  }

  // Graph inputs: the signature's (needed or not: callers feed them), then any other
  // Placeholder the outputs need.
  absl::flat_hash_set<int> input_nodes;
  auto add_input = [&](const std::string& name, const Node& node) -> absl::Status {
    input_nodes.insert(node.id());
    onnx::ValueInfoProto* info = proto.add_input();
    info->set_name(name);
    return SetValueInfo(node.output_type(0), options, *info);
  };
  for (const SignatureEntry& e : graph.inputs()) TSR_RETURN_IF_ERROR(add_input(e.name, *graph.node(e.ref.node)));

  for (const Node* node : order) {
    if (!needed[node->id()]) continue;
    const std::string& op = node->op();
    if (op == "Placeholder") {
      if (!input_nodes.contains(node->id())) TSR_RETURN_IF_ERROR(add_input(ctx.OutputName(*node, 0), *node));
      continue;
    }
    if (op == "Constant" || op == "Variable") {
      absl::StatusOr<Tensor> value =
          op == "Constant" ? absl::StatusOr<Tensor>(node->FindAttr("value")->tensor()) : VariableValue(*node, options);
      if (!value.ok()) return value.status();
      absl::StatusOr<onnx::TensorProto> tensor = TensorToOnnx(*value, ctx.OutputName(*node, 0));
      if (!tensor.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat("node '", node->name(), "' (", op, "): ", tensor.status().message()));
      }
      *proto.add_initializer() = *std::move(tensor);
      continue;
    }
    absl::StatusOr<OnnxExportRule> rule = FindOnnxExportRule(*node->op_def(), options.opset);
    if (!rule.ok()) {
      return absl::Status(rule.status().code(),
                          absl::StrCat("node '", node->name(), "' (", op, "): ", rule.status().message()));
    }
    TSR_RETURN_IF_ERROR((*rule)(*node, ctx));
  }

  for (size_t i = 0; i < outputs.size(); ++i) {
    if (needs_identity[i]) ctx.AddNode("Identity", {ctx.NameOf(outputs[i].ref)}, {outputs[i].name}, outputs[i].name);
  }
  // Constants that only became attributes (Reduce* axes before opset 18) are dropped.
  absl::flat_hash_set<std::string> read;
  for (const onnx::NodeProto& n : proto.node()) read.insert(n.input().begin(), n.input().end());
  google::protobuf::RepeatedPtrField<onnx::TensorProto> kept;
  for (onnx::TensorProto& t : *proto.mutable_initializer()) {
    if (read.contains(t.name())) *kept.Add() = std::move(t);
  }
  proto.mutable_initializer()->Swap(&kept);
  for (size_t i = 0; i < outputs.size(); ++i) {
    const ExportedOutput& o = outputs[i];
    onnx::ValueInfoProto* info = proto.add_output();
    info->set_name(o.name);
    TSR_RETURN_IF_ERROR(SetValueInfo(*graph.TypeOf(o.ref), options, *info));
  }
  return model;
}

absl::Status CheckOnnxModel(const onnx::ModelProto& model) {
  try {
    onnx::checker::check_model(model);
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("the exported model fails the ONNX checker: ", e.what()));
  }
  try {
    onnx::ModelProto inferred = model;
    onnx::shape_inference::InferShapes(inferred, onnx::OpSchemaRegistry::Instance(),
                                       onnx::ShapeInferenceOptions(/*check_type_val=*/true, /*strict_mode_val=*/1));
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("the exported model fails ONNX shape inference: ", e.what()));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ExportOnnxModelToBytes(const Graph& graph, const OnnxExportOptions& options,
                                                   OnnxExportStats* stats) {
  TSR_ASSIGN_OR_RETURN(onnx::ModelProto model, ExportOnnxModel(graph, options));
  if (options.check) TSR_RETURN_IF_ERROR(CheckOnnxModel(model));
  // Protobuf cannot write (or read back) a message of 2 GiB or more.
  const size_t size = model.ByteSizeLong();
  if (size >= (size_t{1} << 31)) {
    return absl::ResourceExhaustedError(absl::StrCat("the ONNX model would be ", size,
                                                     " bytes; protobuf's limit is 2 GiB (external data is not "
                                                     "written)"));
  }
  std::string bytes;
  if (!model.SerializeToString(&bytes)) return absl::InternalError("serializing the ONNX model failed");
  if (stats != nullptr) {
    stats->nodes = model.graph().node_size();
    stats->initializers = model.graph().initializer_size();
    stats->bytes = static_cast<int64_t>(bytes.size());
  }
  return bytes;
}

absl::Status SaveOnnxModel(const Graph& graph, const std::string& path, const OnnxExportOptions& options,
                           OnnxExportStats* stats) {
  TSR_ASSIGN_OR_RETURN(std::string bytes, ExportOnnxModelToBytes(graph, options, stats));
  return WriteFileAtomically(path, bytes);
}

absl::Status OnnxExportSupport(const OpDef& def, int64_t opset) {
  if (IsSourceOp(def.name)) return absl::OkStatus();
  return FindOnnxExportRule(def, opset).status();
}

}  // namespace tsr

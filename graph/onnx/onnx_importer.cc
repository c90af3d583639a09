// ImportOnnxModel: ModelProto checks (size, parse, opsets), then the graph: names and
// their uniqueness, inputs as Placeholders (symbolic dims), initializers, nodes in
// order through the op table (folding those computable at import time), outputs, and
// the final Graph::Verify().
#include "graph/onnx/onnx_importer.h"

#include <algorithm>
#include <climits>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/onnx/onnx_constant_folding.h"
#include "graph/onnx/onnx_node_context.h"
#include "graph/onnx/onnx_op_mapping.h"
#include "graph/onnx/onnx_tensor.h"
#include "graph/status_macros.h"
#include "onnx/defs/schema.h"
#include "onnx/onnx_pb.h"
#include "platform/file.h"

namespace tsr {

namespace {

std::string DescribeNode(const onnx::NodeProto& node, int index, int64_t opset) {
  if (!node.name().empty())
    return absl::StrCat("ONNX node '", node.name(), "' (", node.op_type(), ", opset ", opset, ")");
  return absl::StrCat("ONNX node #", index, " (", node.op_type(), ", opset ", opset, ", output '",
                      node.output_size() > 0 ? node.output(0) : "", "')");
}

absl::Status Prefixed(const absl::Status& s, absl::string_view prefix) {
  return absl::Status(s.code(), absl::StrCat(prefix, ": ", s.message()));
}

class GraphImporter {
 public:
  GraphImporter(const onnx::GraphProto& proto, int64_t opset, const OnnxImportOptions& options,
                absl::string_view model_dir)
      : proto_(proto), opset_(opset), options_(options) {
    tensor_options_.max_tensor_bytes = options.max_tensor_bytes;
    tensor_options_.model_dir = std::string(model_dir);
  }

  absl::StatusOr<ImportedModel> Import() && {
    TSR_RETURN_IF_ERROR(CollectNames());
    TSR_RETURN_IF_ERROR(AddInitializers());
    TSR_RETURN_IF_ERROR(AddInputs());
    for (int i = 0; i < proto_.node_size(); ++i) TSR_RETURN_IF_ERROR(AddNode(i));
    TSR_RETURN_IF_ERROR(AddOutputs());
    if (absl::Status s = graph_.Verify(); !s.ok()) return Prefixed(s, "the imported graph does not verify");
    ImportedModel model;
    model.graph = std::move(graph_);
    model.input_names = std::move(input_names_);
    model.output_names = std::move(output_names_);
    model.initializer_names = std::move(initializer_names_);
    model.num_folded_nodes = num_folded_nodes_;
    model.opset_version = opset_;
    return model;
  }

 private:
  // A node name used neither in the graph nor by any ONNX tensor (which may become a
  // node name later).
  std::string UniqueName(absl::string_view prefix) {
    std::string name(prefix);
    for (int k = 1; graph_.FindNode(name) != nullptr || reserved_.contains(name); ++k)
      name = absl::StrCat(prefix, "_", k);
    return name;
  }

  // Every tensor name is defined once (an initializer, a graph input, or one node
  // output), and non-empty node names are unique, as ONNX requires.
  absl::Status CollectNames() {
    if (proto_.sparse_initializer_size() > 0) {
      return absl::UnimplementedError(
          absl::StrCat("sparse initializer '", proto_.sparse_initializer(0).values().name(), "' is not supported"));
    }
    for (const onnx::TensorProto& t : proto_.initializer()) {
      if (t.name().empty()) return absl::InvalidArgumentError("an initializer has an empty name");
      if (!initializers_.insert(t.name()).second) {
        return absl::InvalidArgumentError(absl::StrCat("initializer '", t.name(), "' is defined twice"));
      }
    }
    absl::flat_hash_set<std::string> inputs;
    for (const onnx::ValueInfoProto& v : proto_.input()) {
      if (v.name().empty()) return absl::InvalidArgumentError("a graph input has an empty name");
      if (!inputs.insert(v.name()).second) {
        return absl::InvalidArgumentError(absl::StrCat("graph input '", v.name(), "' is listed twice"));
      }
    }
    absl::flat_hash_set<std::string> node_names;
    for (int i = 0; i < proto_.node_size(); ++i) {
      const onnx::NodeProto& node = proto_.node(i);
      if (!node.name().empty() && !node_names.insert(node.name()).second) {
        return absl::InvalidArgumentError(absl::StrCat("node name '", node.name(), "' is used by two nodes"));
      }
      for (const std::string& out : node.output()) {
        if (out.empty()) continue;
        if (initializers_.contains(out) || inputs.contains(out)) {
          return absl::InvalidArgumentError(
              absl::StrCat(DescribeNode(node, i, opset_), ": output '", out, "' is also a graph input or initializer"));
        }
        auto [it, inserted] = producer_.emplace(out, i);
        if (!inserted) {
          return absl::InvalidArgumentError(absl::StrCat(DescribeNode(node, i, opset_), ": output '", out,
                                                         "' is already produced by ",
                                                         DescribeNode(proto_.node(it->second), it->second, opset_)));
        }
      }
    }
    reserved_ = initializers_;
    reserved_.insert(inputs.begin(), inputs.end());
    for (const auto& [name, index] : producer_) reserved_.insert(name);
    return absl::OkStatus();
  }

  // A dim of a graph input: its value, a binding of its symbolic name, or the batch dim.
  absl::StatusOr<int64_t> InputDim(const onnx::TensorShapeProto::Dimension& dim, const std::string& input, int i) {
    const std::string where = absl::StrCat("graph input '", input, "' dim ", i);
    if (dim.has_dim_value()) {
      if (dim.dim_value() < 0) {
        return absl::InvalidArgumentError(absl::StrCat(where, " has the negative size ", dim.dim_value()));
      }
      return dim.dim_value();
    }
    const std::string symbol = dim.has_dim_param() ? dim.dim_param() : "";
    if (!symbol.empty()) {
      auto it = options_.dim_bindings.find(symbol);
      if (it != options_.dim_bindings.end()) {
        if (it->second < 0) {
          return absl::InvalidArgumentError(absl::StrCat("symbolic dim '", symbol, "' is bound to ", it->second));
        }
        return it->second;
      }
    }
    const std::string shown = symbol.empty() ? "(no name and no size)" : absl::StrCat("'", symbol, "'");
    if (!options_.symbolic_dims_as_batch) {
      return absl::InvalidArgumentError(absl::StrCat(where, " is symbolic ", shown, "; bind it to a size"));
    }
    // Tessera has one symbolic (batch) dimension: every unbound dim becomes it, so they
    // must all stand for the same size, which only one shared name guarantees.
    const std::string key = symbol.empty() ? absl::StrCat("unnamed dim ", i, " of '", input, "'") : symbol;
    unbound_symbols_.insert(key);
    if (unbound_symbols_.size() > 1) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, " is symbolic ", shown, ", but the model has more than one unbound symbolic dim (",
                       absl::StrJoin(unbound_symbols_, ", "),
                       ") and Tessera has a single batch dimension: bind all but one to sizes"));
    }
    return kBatchDim;
  }

  absl::Status AddInputs() {
    for (const onnx::ValueInfoProto& v : proto_.input()) {
      // Inputs that are also initializers carry defaults (IR < 4 listed every weight as
      // an input); they are the initializer's constant here.
      if (initializers_.contains(v.name())) continue;
      const std::string where = absl::StrCat("graph input '", v.name(), "'");
      if (!v.type().has_tensor_type()) {
        return absl::UnimplementedError(absl::StrCat(where,
                                                     " is not a tensor (sequences, maps and optionals are "
                                                     "not supported)"));
      }
      const onnx::TypeProto::Tensor& tt = v.type().tensor_type();
      absl::StatusOr<DType> dtype = DTypeFromOnnx(tt.elem_type());
      if (!dtype.ok()) return Prefixed(dtype.status(), where);
      if (!tt.has_shape()) {
        return absl::InvalidArgumentError(absl::StrCat(where, " has no shape; Tessera's graphs need the rank"));
      }
      if (auto bound = options_.input_values.find(v.name()); bound != options_.input_values.end()) {
        TSR_RETURN_IF_ERROR(AddBoundInput(v.name(), where, *dtype, tt.shape(), bound->second));
        continue;
      }
      if (tt.shape().dim_size() > kMaxRank) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, " has rank ", tt.shape().dim_size(), ", above ", kMaxRank));
      }
      Shape shape;
      for (int i = 0; i < tt.shape().dim_size(); ++i) {
        TSR_ASSIGN_OR_RETURN(int64_t d, InputDim(tt.shape().dim(i), v.name(), i));
        shape.AddDim(d);
      }
      if (absl::Status s = shape.Validate(); !s.ok()) return Prefixed(s, where);
      absl::StatusOr<Node*> n = graph_.AddNodeAndInfer(
          v.name(), "Placeholder", {}, {{"dtype", AttrValue::Type(*dtype)}, {"shape", AttrValue::FromShape(shape)}});
      if (!n.ok()) return Prefixed(n.status(), where);
      TSR_RETURN_IF_ERROR(graph_.AddInput(v.name(), (*n)->output(0)));
      tensors_[v.name()] = (*n)->output(0);
      input_names_.push_back(v.name());
    }
    for (const auto& [name, value] : options_.input_values) {
      const bool is_input = std::any_of(proto_.input().begin(), proto_.input().end(),
                                        [&](const onnx::ValueInfoProto& v) { return v.name() == name; });
      if (!is_input || initializers_.contains(name)) {
        return absl::InvalidArgumentError(
            absl::StrCat("a value is bound to '", name, "', which is not a graph input fed at run time"));
      }
    }
    return absl::OkStatus();
  }

  // A graph input bound to `value` (OnnxImportOptions::input_values): a Constant.
  absl::Status AddBoundInput(const std::string& name, const std::string& where, DType dtype,
                             const onnx::TensorShapeProto& declared, const Tensor& value) {
    if (value.dtype() != dtype) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, " is declared ", DTypeName(dtype), " but its bound value is ", DTypeName(value.dtype())));
    }
    bool matches = declared.dim_size() == value.shape().rank();
    for (int i = 0; matches && i < declared.dim_size(); ++i) {
      const onnx::TensorShapeProto::Dimension& d = declared.dim(i);
      if (d.has_dim_value() && d.dim_value() != value.shape().dim(i)) matches = false;
    }
    if (!matches) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, "'s bound value has shape ", value.shape().ToString(), ", not the declared one"));
    }
    absl::StatusOr<Node*> n = graph_.AddNodeAndInfer(name, "Constant", {}, {{"value", AttrValue::FromTensor(value)}});
    if (!n.ok()) return Prefixed(n.status(), where);
    tensors_[name] = (*n)->output(0);
    return absl::OkStatus();
  }

  absl::Status AddInitializers() {
    for (const onnx::TensorProto& t : proto_.initializer()) {
      absl::StatusOr<Tensor> value = TensorFromOnnx(t, tensor_options_);
      if (!value.ok()) return Prefixed(value.status(), "initializer");
      const bool variable = options_.initializers_as_variables && IsFloating(value->dtype());
      AttrMap attrs;
      std::string op = "Constant";
      if (variable) {
        op = "Variable";
        attrs["dtype"] = AttrValue::Type(value->dtype());
        attrs["shape"] = AttrValue::FromShape(value->shape());
        attrs["trainable"] = AttrValue::Bool(true);
      }
      attrs["value"] = AttrValue::FromTensor(*std::move(value));
      absl::StatusOr<Node*> n = graph_.AddNodeAndInfer(t.name(), op, {}, std::move(attrs));
      if (!n.ok()) return Prefixed(n.status(), absl::StrCat("initializer '", t.name(), "'"));
      tensors_[t.name()] = (*n)->output(0);
      initializer_names_.push_back(t.name());
    }
    return absl::OkStatus();
  }

  // Whether `from`'s inputs lead (through producers) back to node `target`; fills the
  // path of node indices from `from` to `target` when they do. Iterative: a hostile
  // chain of many nodes must not exhaust the stack.
  bool ReachesNode(int from, int target, std::vector<int>& path) const {
    absl::flat_hash_map<int, int> parent = {{from, -1}};
    std::vector<int> queue = {from};
    for (size_t q = 0; q < queue.size(); ++q) {
      const int n = queue[q];
      if (n == target) {
        for (int p = n; p != -1; p = parent[p]) path.insert(path.begin(), p);
        return true;
      }
      for (const std::string& in : proto_.node(n).input()) {
        auto it = producer_.find(in);
        if (it != producer_.end() && parent.emplace(it->second, n).second) queue.push_back(it->second);
      }
    }
    return false;
  }

  // The error for an input name that is not defined yet at node `index`.
  absl::Status UndefinedInput(int index, int slot, const std::string& name) const {
    const std::string where =
        absl::StrCat(DescribeNode(proto_.node(index), index, opset_), ": input ", slot, " '", name, "'");
    auto it = producer_.find(name);
    if (it == producer_.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, " is not a graph input, an initializer or the output of any node"));
    }
    std::vector<int> path;
    if (ReachesNode(it->second, index, path)) {
      std::vector<std::string> names = {proto_.node(index).output_size() > 0 ? proto_.node(index).output(0) : ""};
      for (int p : path) names.push_back(proto_.node(p).output_size() > 0 ? proto_.node(p).output(0) : "");
      if (names.size() > 12) {  // keep messages short for long hostile cycles
        names.erase(names.begin() + 6, names.end() - 5);
        names.insert(names.begin() + 6, "...");
      }
      return absl::InvalidArgumentError(absl::StrCat(
          where, " depends on the node's own output: the graph has a cycle (", absl::StrJoin(names, " <- "), ")"));
    }
    return absl::InvalidArgumentError(absl::StrCat(where, " is used before ",
                                                   DescribeNode(proto_.node(it->second), it->second, opset_),
                                                   " defines it; ONNX requires nodes in topological order"));
  }

  absl::Status AddNode(int index) {
    const onnx::NodeProto& node = proto_.node(index);
    const std::string where = DescribeNode(node, index, opset_);
    if (!node.domain().empty() && node.domain() != "ai.onnx") {
      return absl::UnimplementedError(
          absl::StrCat(where, ": op '", node.op_type(), "' of domain '", node.domain(), "' is not supported"));
    }
    std::vector<TensorRef> inputs;
    for (int i = 0; i < node.input_size(); ++i) {
      const std::string& name = node.input(i);
      if (name.empty()) {
        inputs.push_back(TensorRef::None());
        continue;
      }
      auto it = tensors_.find(name);
      if (it == tensors_.end()) return UndefinedInput(index, i, name);
      inputs.push_back(it->second);
    }
    // Optional inputs at the end that are absent need no slot.
    while (!inputs.empty() && !inputs.back().valid()) inputs.pop_back();

    const OnnxOpMapping* mapping = FindOnnxOpMapping(node.op_type());
    if (mapping == nullptr) {
      return absl::UnimplementedError(
          absl::StrCat(where, ": op type '", node.op_type(), "' is not supported (Tessera has no equivalent op)"));
    }
    if (mapping->since_opset > opset_) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": op type '", node.op_type(), "' exists from opset ",
                                                     mapping->since_opset, " on, but the model imports opset ",
                                                     opset_));
    }
    TSR_ASSIGN_OR_RETURN(const int64_t opset, MappedOpset(node, where));
    if (options_.fold_constants) {
      OnnxConstantFoldingOptions fold_options;
      fold_options.max_elements = options_.max_folded_elements;
      std::optional<std::vector<Tensor>> folded =
          FoldOnnxNode(node, index, opset, mapping->convert, graph_, inputs, tensor_options_, fold_options);
      if (folded.has_value()) return AddFoldedOutputs(node, where, *std::move(folded));
    }
    OnnxNodeContext ctx(node, index, opset, graph_, std::move(inputs), tensor_options_,
                        [this](absl::string_view prefix) { return UniqueName(prefix); });
    TSR_ASSIGN_OR_RETURN(std::vector<TensorRef> outputs, mapping->convert(ctx));
    TSR_RETURN_IF_ERROR(ctx.CheckAllAttrsHandled());
    for (int i = 0; i < node.output_size(); ++i) {
      const std::string& name = node.output(i);
      if (name.empty()) continue;
      if (i >= static_cast<int>(outputs.size()) || !outputs[i].valid()) {
        return ctx.Unsupported(absl::StrCat("output ", i, " ('", name, "') is not supported: the Tessera op has ",
                                            outputs.size(), " outputs"));
      }
      tensors_[name] = outputs[i];
    }
    return absl::OkStatus();
  }

  // One Constant per named output of a folded node, named after the output (as the
  // node producing it would have been).
  absl::Status AddFoldedOutputs(const onnx::NodeProto& node, const std::string& where, std::vector<Tensor> values) {
    for (int i = 0; i < node.output_size(); ++i) {
      const std::string& name = node.output(i);
      if (name.empty()) continue;
      absl::StatusOr<Node*> n =
          graph_.AddNodeAndInfer(name, "Constant", {}, {{"value", AttrValue::FromTensor(std::move(values[i]))}});
      if (!n.ok()) return Prefixed(n.status(), absl::StrCat(where, ": folded output '", name, "'"));
      tensors_[name] = (*n)->output(0);
    }
    ++num_folded_nodes_;
    return absl::OkStatus();
  }

  // Signature outputs; a declared element type or static dim that disagrees with what
  // the import inferred is an error (it would mean the mapping is wrong).
  absl::Status AddOutputs() {
    for (const onnx::ValueInfoProto& v : proto_.output()) {
      auto it = tensors_.find(v.name());
      if (it == tensors_.end()) {
        return absl::InvalidArgumentError(
            absl::StrCat("graph output '", v.name(), "' is not a graph input, an initializer or a node's output"));
      }
      const TensorType* type = graph_.TypeOf(it->second);
      if (type != nullptr && v.type().has_tensor_type()) {
        const onnx::TypeProto::Tensor& tt = v.type().tensor_type();
        if (tt.elem_type() != 0) {
          absl::StatusOr<DType> declared = DTypeFromOnnx(tt.elem_type());
          if (!declared.ok() || *declared != type->dtype) {
            return absl::InvalidArgumentError(absl::StrCat("graph output '", v.name(), "' is declared as ",
                                                           OnnxElemTypeName(tt.elem_type()), " but computes ",
                                                           type->ToString()));
          }
        }
        if (tt.has_shape()) {
          bool ok = tt.shape().dim_size() == type->shape.rank();
          for (int i = 0; ok && i < type->shape.rank(); ++i) {
            const onnx::TensorShapeProto::Dimension& d = tt.shape().dim(i);
            ok = !d.has_dim_value() || type->shape.dim(i) == kBatchDim || d.dim_value() == type->shape.dim(i);
          }
          if (!ok) {
            return absl::InvalidArgumentError(absl::StrCat("graph output '", v.name(), "' is declared with ",
                                                           tt.shape().dim_size(), " dims that differ from ",
                                                           type->ToString(), ", which the graph computes"));
          }
        }
      }
      TSR_RETURN_IF_ERROR(graph_.AddOutput(v.name(), it->second));
      output_names_.push_back(v.name());
    }
    return absl::OkStatus();
  }

  const onnx::GraphProto& proto_;
  // The opset the node's converter sees: the model's, or for a model older than
  // kMinMappedOnnxOpset, that opset when the node's op has the same definition at both
  // (ONNX's schema registry says which definition is in effect at an opset).
  absl::StatusOr<int64_t> MappedOpset(const onnx::NodeProto& node, const std::string& where) const {
    if (opset_ >= kMinMappedOnnxOpset) return opset_;
    const onnx::OpSchema* at_model = onnx::OpSchemaRegistry::Schema(node.op_type(), static_cast<int>(opset_), "");
    const onnx::OpSchema* mapped =
        onnx::OpSchemaRegistry::Schema(node.op_type(), static_cast<int>(kMinMappedOnnxOpset), "");
    if (at_model == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": op type '", node.op_type(), "' does not exist at opset ", opset_));
    }
    if (mapped == nullptr || mapped->since_version() != at_model->since_version()) {
      return absl::UnimplementedError(absl::StrCat(
          where, ": at opset ", opset_, " '", node.op_type(), "' has its opset-", at_model->since_version(),
          " definition; Tessera imports the one in effect at opset ", kMinMappedOnnxOpset,
          mapped == nullptr ? std::string() : absl::StrCat(" (opset-", mapped->since_version(), ")"),
          " (convert the model with onnx.version_converter)"));
    }
    return kMinMappedOnnxOpset;
  }

  const int64_t opset_;
  const OnnxImportOptions& options_;
  OnnxTensorOptions tensor_options_;
  Graph graph_;
  absl::flat_hash_set<std::string> initializers_;
  absl::flat_hash_map<std::string, int> producer_;  // tensor name -> node index
  absl::flat_hash_set<std::string> reserved_;       // every ONNX tensor name
  absl::flat_hash_map<std::string, TensorRef> tensors_;
  std::set<std::string> unbound_symbols_;
  std::vector<std::string> input_names_, output_names_, initializer_names_;
  int64_t num_folded_nodes_ = 0;
};

absl::StatusOr<int64_t> DefaultDomainOpset(const onnx::ModelProto& model) {
  int64_t opset = -1;
  for (const onnx::OperatorSetIdProto& id : model.opset_import()) {
    if (!id.domain().empty() && id.domain() != "ai.onnx") continue;
    if (opset != -1) return absl::InvalidArgumentError("the model imports the default ONNX domain twice");
    opset = id.version();
  }
  if (opset == -1) {
    return absl::InvalidArgumentError("the model does not import the default ONNX domain (no opset_import for \"\")");
  }
  if (opset < kMinOnnxOpset || opset > kMaxOnnxOpset) {
    return absl::UnimplementedError(absl::StrCat("the model uses ONNX opset ", opset, "; Tessera imports opsets ",
                                                 kMinOnnxOpset, " to ", kMaxOnnxOpset,
                                                 " (convert it with onnx.version_converter)"));
  }
  return opset;
}

}  // namespace

absl::StatusOr<ImportedModel> ImportOnnxModelFromBytes(absl::string_view bytes, const OnnxImportOptions& options,
                                                       absl::string_view model_dir) {
  if (static_cast<int64_t>(bytes.size()) > options.max_model_bytes) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "the ONNX model has ", bytes.size(), " bytes, above the limit max_model_bytes=", options.max_model_bytes));
  }
  if (bytes.size() >= static_cast<size_t>(INT_MAX)) {
    return absl::ResourceExhaustedError("the ONNX model is 2 GiB or larger, which protobuf cannot parse");
  }
  onnx::ModelProto model;
  if (!model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return absl::InvalidArgumentError(
        "not a valid ONNX model: the bytes do not parse as a ModelProto (truncated or corrupt file?)");
  }
  TSR_ASSIGN_OR_RETURN(int64_t opset, DefaultDomainOpset(model));
  if (!model.has_graph()) return absl::InvalidArgumentError("the ONNX model has no graph");
  TSR_ASSIGN_OR_RETURN(ImportedModel imported, GraphImporter(model.graph(), opset, options, model_dir).Import());
  imported.ir_version = model.ir_version();
  imported.producer_name = model.producer_name();
  return imported;
}

absl::StatusOr<ImportedModel> ImportOnnxModel(absl::string_view path, const OnnxImportOptions& options) {
  const std::string file(path);
  absl::StatusOr<std::string> bytes = ReadFileBounded(file, options.max_model_bytes, "max_model_bytes");
  if (!bytes.ok()) return Prefixed(bytes.status(), file);
  std::string dir = std::filesystem::path(file).parent_path().string();
  if (dir.empty()) dir = ".";
  absl::StatusOr<ImportedModel> model = ImportOnnxModelFromBytes(*bytes, options, dir);
  if (!model.ok()) return Prefixed(model.status(), file);
  return model;
}

absl::StatusOr<Graph> LoadOnnxGraph(const std::string& path, const OnnxImportOptions& options) {
  TSR_ASSIGN_OR_RETURN(ImportedModel model, ImportOnnxModel(path, options));
  return std::move(model.graph);
}

bool IsOnnxModelPath(absl::string_view path) { return absl::EndsWithIgnoreCase(path, ".onnx"); }

}  // namespace tsr

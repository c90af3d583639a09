// GraphBuilder: sticky errors, name scopes and node creation with inference.
#include "graph/builder/graph_builder.h"

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace tsr {

namespace {

const TensorType& InvalidType() {
  static const TensorType* const kInvalid = new TensorType();
  return *kInvalid;
}

// Ensures a failure message names the node and op (inference errors already do).
absl::Status NameNode(const absl::Status& status, absl::string_view node_name, absl::string_view op) {
  if (absl::StartsWith(status.message(), "node '")) return status;
  return absl::Status(status.code(), absl::StrCat("node '", node_name, "' (", op, "): ", status.message()));
}

}  // namespace

const TensorType& Output::type() const {
  if (!valid()) return InvalidType();
  const TensorType* t = builder_->graph_.TypeOf(ref_);
  return t == nullptr ? InvalidType() : *t;
}

std::string Output::name() const { return valid() ? builder_->graph_.TensorName(ref_) : std::string(); }

const Node* Output::node() const { return valid() ? builder_->graph_.node(ref_.node) : nullptr; }

GraphBuilder::GraphBuilder() : graph_() {}
GraphBuilder::GraphBuilder(const OpRegistry& registry) : graph_(registry) {}
GraphBuilder::GraphBuilder(Graph graph) : graph_(std::move(graph)) {
  for (const Node* node : graph_.nodes()) {
    const std::string& name = node->name();
    for (size_t slash = name.find('/'); slash != std::string::npos; slash = name.find('/', slash + 1)) {
      used_scopes_.insert(name.substr(0, slash));
    }
  }
}

Output GraphBuilder::Wrap(TensorRef ref) {
  if (graph_.TypeOf(ref) == nullptr) {
    RecordError(absl::InvalidArgumentError(
        absl::StrCat("GraphBuilder::Wrap: output ", ref.index, " of node id ", ref.node, " does not exist")));
    return Output(this, TensorRef::None());
  }
  return Output(this, ref);
}

GraphBuilder::NameScope::NameScope(NameScope&& other) noexcept
    : builder_(std::exchange(other.builder_, nullptr)), restore_depth_(other.restore_depth_) {}

GraphBuilder::NameScope::~NameScope() {
  if (builder_ != nullptr && builder_->scopes_.size() > restore_depth_) builder_->scopes_.resize(restore_depth_);
}

GraphBuilder::NameScope GraphBuilder::PushScope(std::string full_path) {
  const size_t depth = scopes_.size();
  used_scopes_.insert(full_path);
  scopes_.push_back(std::move(full_path));
  return NameScope(this, depth);
}

GraphBuilder::NameScope GraphBuilder::Scope(absl::string_view name) {
  if (name.empty() || absl::StrContains(name, "/") || absl::StrContains(name, ":")) {
    RecordError(absl::InvalidArgumentError(
        absl::StrCat("scope name '", name, "' is invalid: it must be non-empty and contain no '/' or ':'")));
    // A scope that changes nothing keeps the caller's RAII pairing intact.
    return NameScope(this, scopes_.size());
  }
  return PushScope(absl::StrCat(scope_prefix(), name));
}

GraphBuilder::NameScope GraphBuilder::UniqueScope(absl::string_view base) {
  if (base.empty() || absl::StrContains(base, "/") || absl::StrContains(base, ":")) return Scope(base);
  const std::string prefix = scope_prefix();
  std::string path = absl::StrCat(prefix, base);
  for (int i = 1; used_scopes_.contains(path) || graph_.FindNode(path) != nullptr; ++i) {
    path = absl::StrCat(prefix, base, "_", i);
  }
  return PushScope(std::move(path));
}

std::string GraphBuilder::scope_prefix() const { return scopes_.empty() ? std::string() : scopes_.back() + "/"; }

std::string GraphBuilder::NodeName(absl::string_view name, absl::string_view base) const {
  if (!name.empty()) return absl::StrCat(scope_prefix(), name);
  const std::string prefix = scope_prefix();
  std::string candidate = absl::StrCat(prefix, base);
  // A node may not take a name that is also a scope path, or "a/b" could be both a
  // node and the prefix of "a/b/c".
  for (int i = 1; graph_.FindNode(candidate) != nullptr || used_scopes_.contains(candidate); ++i) {
    candidate = absl::StrCat(prefix, base, "_", i);
  }
  return candidate;
}

void GraphBuilder::RecordError(absl::Status status) {
  if (status_.ok() && !status.ok()) status_ = std::move(status);
}

absl::Status GraphBuilder::ResolveInputs(absl::string_view node_name, absl::string_view op,
                                         const std::vector<Output>& inputs, std::vector<TensorRef>& refs) const {
  refs.clear();
  refs.reserve(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Output& in = inputs[i];
    if (in.builder_ == nullptr && !in.ref_.valid()) {
      refs.push_back(TensorRef::None());
      continue;
    }
    if (in.builder_ != this) {
      return absl::InvalidArgumentError(
          absl::StrCat("node '", node_name, "' (", op, "): input ", i, " was built by a different GraphBuilder"));
    }
    if (!in.ref_.valid()) {
      return absl::InvalidArgumentError(
          absl::StrCat("node '", node_name, "' (", op, "): input ", i, " is an invalid Output"));
    }
    refs.push_back(in.ref_);
  }
  return absl::OkStatus();
}

std::vector<Output> GraphBuilder::Op(absl::string_view op, const std::vector<Output>& inputs, AttrMap attrs,
                                     absl::string_view name) {
  const OpDef* def = graph_.registry().Find(op);
  auto failed = [&] {
    const int n = def == nullptr ? 1 : std::max(1, def->min_outputs());
    return std::vector<Output>(n, Output(this, TensorRef::None()));
  };
  if (finished_) {
    RecordError(absl::FailedPreconditionError(
        absl::StrCat("GraphBuilder::Op(", op, ") called after Finish(); the builder is spent")));
  }
  if (!ok()) return failed();

  std::string node_name = NodeName(name, op);
  if (def == nullptr) {
    absl::StatusOr<const OpDef*> lookup = graph_.registry().Lookup(op);
    RecordError(NameNode(lookup.status(), node_name, op));
    return failed();
  }
  std::vector<TensorRef> refs;
  if (absl::Status s = ResolveInputs(node_name, op, inputs, refs); !s.ok()) {
    RecordError(std::move(s));
    return failed();
  }
  absl::StatusOr<Node*> node = graph_.AddNodeAndInfer(node_name, std::string(op), std::move(refs), std::move(attrs));
  if (!node.ok()) {
    RecordError(NameNode(node.status(), node_name, op));
    return failed();
  }
  // Explicit names may contain '/': their prefixes count as used scopes.
  for (size_t slash = node_name.find('/'); slash != std::string::npos; slash = node_name.find('/', slash + 1)) {
    used_scopes_.insert(node_name.substr(0, slash));
  }
  std::vector<Output> outputs;
  outputs.reserve((*node)->num_outputs());
  for (int i = 0; i < (*node)->num_outputs(); ++i) outputs.push_back(Output(this, (*node)->output(i)));
  return outputs;
}

Output GraphBuilder::Op1(absl::string_view op, const std::vector<Output>& inputs, AttrMap attrs,
                         absl::string_view name) {
  return Op(op, inputs, std::move(attrs), name)[0];
}

Output GraphBuilder::Input(absl::string_view name, DType dtype, Shape shape) {
  if (ok() && name.empty()) RecordError(absl::InvalidArgumentError("GraphBuilder::Input: the input name is empty"));
  AttrMap attrs;
  attrs["dtype"] = AttrValue::Type(dtype);
  attrs["shape"] = AttrValue::FromShape(std::move(shape));
  Output out = Op1("Placeholder", {}, std::move(attrs), name);
  if (ok()) RecordError(graph_.AddInput(std::string(name), out.ref()));
  return ok() ? out : Output(this, TensorRef::None());
}

void GraphBuilder::MarkOutput(absl::string_view name, Output output) {
  if (!ok()) return;
  if (output.builder_ != this || !output.valid()) {
    RecordError(absl::InvalidArgumentError(
        absl::StrCat("signature output '", name, "' is not a valid Output of this builder")));
    return;
  }
  RecordError(graph_.AddOutput(std::string(name), output.ref()));
}

absl::StatusOr<Graph> GraphBuilder::Finish() {
  if (finished_) return absl::FailedPreconditionError("GraphBuilder::Finish() was already called");
  finished_ = true;
  if (!ok()) return status_;
  if (absl::Status s = graph_.Verify(); !s.ok()) return s;
  return std::move(graph_);
}

}  // namespace tsr

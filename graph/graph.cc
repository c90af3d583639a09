// Graph construction, lookup, type inference and topological order.
#include "graph/graph.h"

#include <algorithm>
#include <queue>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/op_registry.h"
#include "graph/status_macros.h"

namespace tsr {

const AttrValue* Node::FindAttr(absl::string_view name) const {
  auto it = attrs_.find(name);
  return it == attrs_.end() ? nullptr : &it->second;
}

Graph::Graph() : Graph(OpRegistry::Global()) {}
Graph::Graph(const OpRegistry& registry) : registry_(&registry) {}

Graph Graph::Clone() const {
  Graph g(*registry_);
  for (const auto& n : nodes_) {
    auto copy = std::unique_ptr<Node>(new Node(*n));
    g.by_name_[copy->name_] = copy->id_;
    g.nodes_.push_back(std::move(copy));
  }
  g.inputs_ = inputs_;
  g.outputs_ = outputs_;
  g.input_names_ = input_names_;
  g.output_names_ = output_names_;
  return g;
}

absl::StatusOr<Node*> Graph::AddNode(std::string name, std::string op, std::vector<TensorRef> inputs, AttrMap attrs) {
  if (name.empty()) return absl::InvalidArgumentError(absl::StrCat("a node of op ", op, " has an empty name"));
  if (by_name_.contains(name)) {
    return absl::AlreadyExistsError(absl::StrCat("node name '", name, "' is already used in the graph"));
  }
  auto node = std::unique_ptr<Node>(new Node());
  node->id_ = static_cast<int>(nodes_.size());
  node->name_ = std::move(name);
  node->op_ = std::move(op);
  node->op_def_ = registry_->Find(node->op_);
  node->inputs_ = std::move(inputs);
  node->attrs_ = std::move(attrs);
  by_name_[node->name_] = node->id_;
  nodes_.push_back(std::move(node));
  return nodes_.back().get();
}

absl::StatusOr<Node*> Graph::AddNodeAndInfer(std::string name, std::string op, std::vector<TensorRef> inputs,
                                             AttrMap attrs) {
  TSR_ASSIGN_OR_RETURN(Node * node, AddNode(std::move(name), std::move(op), std::move(inputs), std::move(attrs)));
  if (absl::Status s = InferTypes(node); !s.ok()) {
    by_name_.erase(node->name_);
    nodes_.pop_back();
    return s;
  }
  return node;
}

absl::StatusOr<std::vector<TensorType>> Graph::InferredTypes(const Node& node) const {
  if (node.op_def_ == nullptr) {
    TSR_ASSIGN_OR_RETURN(const OpDef* def, registry_->Lookup(node.op_));
    (void)def;
  }
  std::vector<std::optional<TensorType>> types;
  std::vector<const Tensor*> values;
  for (int i = 0; i < node.num_inputs(); ++i) {
    const TensorRef ref = node.input(i);
    if (!ref.valid()) {
      types.push_back(std::nullopt);
      values.push_back(nullptr);
      continue;
    }
    const TensorType* t = TypeOf(ref);
    if (t == nullptr) {
      const Node* producer = this->node(ref.node);
      return absl::InvalidArgumentError(producer == nullptr
                                            ? absl::StrCat("node '", node.name_, "' (", node.op_, "): input ", i,
                                                           " refers to node id ", ref.node, ", which does not exist")
                                            : absl::StrCat("node '", node.name_, "' (", node.op_, "): input ", i,
                                                           " refers to '", TensorName(ref), "', but '", producer->name_,
                                                           "' has ", producer->num_outputs(), " inferred outputs"));
    }
    types.push_back(*t);
    values.push_back(ConstantValue(ref));
  }
  return InferOutputTypes(*node.op_def_, node.name_, node.attrs_, std::move(types), std::move(values));
}

absl::Status Graph::InferTypes(Node* node) {
  TSR_ASSIGN_OR_RETURN(std::vector<TensorType> types, InferredTypes(*node));
  node->output_types_ = std::move(types);
  return absl::OkStatus();
}

absl::Status Graph::InferAllTypes() {
  TSR_ASSIGN_OR_RETURN(std::vector<const Node*> order, TopologicalOrder());
  for (const Node* n : order) TSR_RETURN_IF_ERROR(InferTypes(nodes_[n->id_].get()));
  return absl::OkStatus();
}

Node* Graph::node(int id) { return id >= 0 && id < num_nodes() ? nodes_[id].get() : nullptr; }
const Node* Graph::node(int id) const { return id >= 0 && id < num_nodes() ? nodes_[id].get() : nullptr; }

Node* Graph::FindNode(absl::string_view name) {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : nodes_[it->second].get();
}
const Node* Graph::FindNode(absl::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : nodes_[it->second].get();
}

std::vector<Node*> Graph::nodes() {
  std::vector<Node*> out;
  out.reserve(nodes_.size());
  for (auto& n : nodes_) out.push_back(n.get());
  return out;
}
std::vector<const Node*> Graph::nodes() const {
  std::vector<const Node*> out;
  out.reserve(nodes_.size());
  for (const auto& n : nodes_) out.push_back(n.get());
  return out;
}

std::string Graph::UniqueName(absl::string_view prefix) const {
  std::string base(prefix.empty() ? "node" : prefix);
  if (!by_name_.contains(base)) return base;
  for (int i = 1;; ++i) {
    std::string candidate = absl::StrCat(base, "_", i);
    if (!by_name_.contains(candidate)) return candidate;
  }
}

absl::StatusOr<std::vector<const Node*>> Graph::TopologicalOrder() const {
  const int n = num_nodes();
  std::vector<int> pending(n, 0);
  std::vector<std::vector<int>> consumers(n);
  for (const auto& node : nodes_) {
    for (int i = 0; i < node->num_inputs(); ++i) {
      const TensorRef ref = node->input(i);
      if (!ref.valid()) continue;
      if (ref.node >= n) {
        return absl::InvalidArgumentError(absl::StrCat("node '", node->name_, "' (", node->op_, "): input ", i,
                                                       " refers to node id ", ref.node, ", which does not exist"));
      }
      ++pending[node->id_];
      consumers[ref.node].push_back(node->id_);
    }
  }
  // Min-heap on id: a deterministic order that keeps insertion order where it can.
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (int i = 0; i < n; ++i) {
    if (pending[i] == 0) ready.push(i);
  }
  std::vector<const Node*> order;
  order.reserve(n);
  while (!ready.empty()) {
    const int id = ready.top();
    ready.pop();
    order.push_back(nodes_[id].get());
    for (int c : consumers[id]) {
      if (--pending[c] == 0) ready.push(c);
    }
  }
  if (static_cast<int>(order.size()) != n) {
    // Walk back from any unfinished node through unfinished producers until a node
    // repeats: that node is on a cycle.
    int cur = 0;
    while (pending[cur] == 0) ++cur;
    std::vector<int> seen(n, -1);
    std::vector<std::string> path;
    for (int step = 0; seen[cur] < 0; ++step) {
      seen[cur] = step;
      path.push_back(nodes_[cur]->name_);
      for (const TensorRef& ref : nodes_[cur]->inputs_) {
        if (ref.valid() && pending[ref.node] > 0) {
          cur = ref.node;
          break;
        }
      }
    }
    std::vector<std::string> cycle(path.begin() + seen[cur], path.end());
    std::reverse(cycle.begin(), cycle.end());
    cycle.push_back(cycle.front());
    return absl::FailedPreconditionError(
        absl::StrCat("the graph has a cycle through node '", nodes_[cur]->name_, "': ", absl::StrJoin(cycle, " -> ")));
  }
  return order;
}

const TensorType* Graph::TypeOf(TensorRef ref) const {
  const Node* n = node(ref.node);
  if (n == nullptr || ref.index < 0 || ref.index >= n->num_outputs()) return nullptr;
  return &n->output_types_[ref.index];
}

const Tensor* Graph::ConstantValue(TensorRef ref) const {
  const Node* n = node(ref.node);
  if (n == nullptr || n->op_ != "Constant" || ref.index != 0) return nullptr;
  const AttrValue* v = n->FindAttr("value");
  return v != nullptr && v->type() == AttrType::kTensor ? &v->tensor() : nullptr;
}

std::string Graph::TensorName(TensorRef ref) const {
  const Node* n = node(ref.node);
  std::string name = n == nullptr ? absl::StrCat("<node ", ref.node, ">") : n->name_;
  return ref.index == 0 ? name : absl::StrCat(name, ":", ref.index);
}

absl::StatusOr<TensorRef> Graph::ParseTensorName(absl::string_view name) const {
  absl::string_view node_name = name;
  int index = 0;
  const size_t colon = name.rfind(':');
  if (colon != absl::string_view::npos && FindNode(name) == nullptr) {
    if (!absl::SimpleAtoi(name.substr(colon + 1), &index) || index < 0) {
      return absl::InvalidArgumentError(absl::StrCat("tensor name '", name, "' has a malformed output index"));
    }
    node_name = name.substr(0, colon);
  }
  const Node* n = FindNode(node_name);
  if (n == nullptr) return absl::NotFoundError(absl::StrCat("no node named '", node_name, "'"));
  return TensorRef{n->id_, index};
}

std::vector<std::pair<const Node*, int>> Graph::Consumers(TensorRef ref) const {
  std::vector<std::pair<const Node*, int>> out;
  for (const auto& n : nodes_) {
    for (int i = 0; i < n->num_inputs(); ++i) {
      if (n->inputs_[i] == ref) out.emplace_back(n.get(), i);
    }
  }
  return out;
}

namespace {

absl::Status AddSignatureEntry(const Graph& g, std::vector<SignatureEntry>& entries,
                               absl::flat_hash_set<std::string>& names, absl::string_view kind, std::string name,
                               TensorRef ref) {
  if (name.empty()) return absl::InvalidArgumentError(absl::StrCat("signature ", kind, " has an empty name"));
  if (names.contains(name)) {
    return absl::AlreadyExistsError(absl::StrCat("signature ", kind, " '", name, "' is declared twice"));
  }
  if (g.node(ref.node) == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("signature ", kind, " '", name, "' refers to node id ", ref.node, ", which does not exist"));
  }
  names.insert(name);
  entries.push_back({std::move(name), ref});
  return absl::OkStatus();
}

}  // namespace

absl::Status Graph::AddInput(std::string name, TensorRef ref) {
  return AddSignatureEntry(*this, inputs_, input_names_, "input", std::move(name), ref);
}
absl::Status Graph::AddOutput(std::string name, TensorRef ref) {
  return AddSignatureEntry(*this, outputs_, output_names_, "output", std::move(name), ref);
}

std::string Graph::DebugString() const {
  std::string out;
  for (const auto& n : nodes_) {
    std::vector<std::string> ins;
    for (const TensorRef& r : n->inputs_) ins.push_back(r.valid() ? TensorName(r) : "<none>");
    std::vector<std::string> attrs;
    for (const auto& [k, v] : n->attrs_) attrs.push_back(absl::StrCat(k, "=", v.ToString()));
    std::vector<std::string> types;
    for (const TensorType& t : n->output_types_) types.push_back(t.ToString());
    absl::StrAppend(&out, n->name_, " = ", n->op_, "(", absl::StrJoin(ins, ", "), ")",
                    attrs.empty() ? "" : absl::StrCat(" {", absl::StrJoin(attrs, ", "), "}"), " -> ",
                    absl::StrJoin(types, ", "), "\n");
  }
  return out;
}

}  // namespace tsr

// CombineAllReduces (see all_reduce_combiner.h).
#include "partitioner/all_reduce_combiner.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/status_macros.h"

namespace tsr {

namespace {

bool UpdatesVariables(const Node& node) { return node.op_def() != nullptr && !node.op_def()->variable_updates.empty(); }

// A gradient all-reduce: a sum whose every consumer updates a Variable, or takes the
// share of it that an update reads (ZeRO-1's updates on shares).
bool IsGradientAllReduce(const Graph& graph, const Node& node) {
  if (node.op() != "AllReduce") return false;
  const AttrValue* reduction = node.FindAttr("reduction");
  if (reduction != nullptr && reduction->s() != "sum") return false;
  const auto consumers = graph.Consumers(node.output(0));
  if (consumers.empty()) return false;
  for (const auto& [consumer, slot] : consumers) {
    if (UpdatesVariables(*consumer)) continue;
    if (consumer->op() != "Slice" || slot != 0) return false;
    const auto readers = graph.Consumers(consumer->output(0));
    if (readers.empty()) return false;
    for (const auto& [reader, unused] : readers) {
      if (!UpdatesVariables(*reader)) return false;
    }
  }
  for (const SignatureEntry& e : graph.outputs()) {
    if (e.ref == node.output(0)) return false;
  }
  return true;
}

std::string BucketKey(const Graph& graph, const Node& node) {
  const AttrValue* axes = node.FindAttr("mesh_axes");
  return absl::StrCat(DTypeName(graph.TypeOf(node.input(0))->dtype), "|",
                      axes != nullptr ? absl::StrJoin(axes->strings(), ",") : "");
}

class Rebuilder {
 public:
  Rebuilder(const Graph& old, std::vector<std::vector<const Node*>> buckets)
      : old_(old), out_(old.registry()), buckets_(std::move(buckets)) {
    for (size_t b = 0; b < buckets_.size(); ++b) {
      for (const Node* member : buckets_[b]) bucket_of_[member->id()] = static_cast<int>(b);
    }
  }

  absl::StatusOr<Graph> Run() {
    TSR_ASSIGN_OR_RETURN(std::vector<const Node*> order, old_.TopologicalOrder());
    std::vector<bool> emitted(buckets_.size(), false);
    for (const Node* node : order) {
      TSR_RETURN_IF_ERROR(Emit(*node));
      // A bucket goes right after the last of its gradients, so that its all-reduce can
      // start while the rest of the backward pass runs.
      for (size_t b = 0; b < buckets_.size(); ++b) {
        if (emitted[b]) continue;
        const bool ready = std::all_of(buckets_[b].begin(), buckets_[b].end(),
                                       [&](const Node* member) { return done_.contains(member->input(0).node); });
        if (!ready) continue;
        emitted[b] = true;
        if (!done_.contains(buckets_[b].front()->id())) TSR_RETURN_IF_ERROR(EmitBucket(static_cast<int>(b)));
      }
    }
    for (const SignatureEntry& e : old_.inputs()) TSR_RETURN_IF_ERROR(out_.AddInput(e.name, mapped_.at(e.ref)));
    for (const SignatureEntry& e : old_.outputs()) TSR_RETURN_IF_ERROR(out_.AddOutput(e.name, mapped_.at(e.ref)));
    return std::move(out_);
  }

 private:
  absl::StatusOr<TensorRef> Add(const std::string& name, const std::string& op, std::vector<TensorRef> inputs,
                                AttrMap attrs = {}) {
    TSR_ASSIGN_OR_RETURN(Node * node,
                         out_.AddNodeAndInfer(out_.UniqueName(name), op, std::move(inputs), std::move(attrs)));
    return node->output(0);
  }

  absl::StatusOr<TensorRef> Constant(const std::string& name, std::vector<int64_t> values) {
    AttrMap attrs;
    attrs["value"] =
        AttrValue::FromTensor(Tensor::FromVector<int64_t>(Shape{static_cast<int64_t>(values.size())}, values));
    return Add(name, "Constant", {}, std::move(attrs));
  }

  // Emits `node` after its inputs (depth first): a node may wait for a bucket whose last
  // member comes later in the old order.
  absl::Status Emit(const Node& node) {
    if (done_.contains(node.id())) return absl::OkStatus();
    if (auto it = bucket_of_.find(node.id()); it != bucket_of_.end()) return EmitBucket(it->second);
    return EmitNode(node);
  }

  absl::Status EmitNode(const Node& node) {
    std::vector<TensorRef> inputs;
    for (const TensorRef& in : node.inputs()) {
      if (!in.valid()) {
        inputs.push_back(TensorRef::None());
        continue;
      }
      TSR_RETURN_IF_ERROR(Emit(*old_.node(in.node)));
      inputs.push_back(mapped_.at(in));
    }
    TSR_ASSIGN_OR_RETURN(Node * added, out_.AddNodeAndInfer(node.name(), node.op(), std::move(inputs), node.attrs()));
    for (int i = 0; i < node.num_outputs(); ++i) mapped_[node.output(i)] = added->output(i);
    done_.insert({node.id(), true});
    return absl::OkStatus();
  }

  absl::Status EmitBucket(int b) {
    const std::vector<const Node*>& members = buckets_[b];
    if (members.size() == 1) return EmitNode(*members.front());  // alone: as it was, only earlier
    for (const Node* member : members) done_.insert({member->id(), true});
    std::vector<TensorRef> flat;
    std::vector<int64_t> sizes;
    const std::string stem = absl::StrCat("all_reduce_bucket_", b);
    for (const Node* member : members) {
      TSR_RETURN_IF_ERROR(Emit(*old_.node(member->input(0).node)));
      const TensorRef x = mapped_.at(member->input(0));
      const int64_t n = out_.TypeOf(x)->shape.num_elements();
      TSR_ASSIGN_OR_RETURN(TensorRef shape, Constant(absl::StrCat(stem, "/flat_shape"), {n}));
      TSR_ASSIGN_OR_RETURN(TensorRef f, Add(absl::StrCat(stem, "/flatten"), "Reshape", {x, shape}));
      flat.push_back(f);
      sizes.push_back(n);
    }
    AttrMap concat_attrs;
    concat_attrs["axis"] = AttrValue::Int(0);
    TSR_ASSIGN_OR_RETURN(TensorRef packed, Add(absl::StrCat(stem, "/pack"), "Concat", flat, concat_attrs));
    TSR_ASSIGN_OR_RETURN(TensorRef reduced,
                         Add(stem, "AllReduce", {packed}, members.front()->attrs()));  // same reduction and axes
    int64_t offset = 0;
    for (size_t i = 0; i < members.size(); ++i) {
      TSR_ASSIGN_OR_RETURN(TensorRef begin, Constant(absl::StrCat(stem, "/begin"), {offset}));
      TSR_ASSIGN_OR_RETURN(TensorRef end, Constant(absl::StrCat(stem, "/end"), {offset + sizes[i]}));
      TSR_ASSIGN_OR_RETURN(TensorRef slice,
                           Add(absl::StrCat(members[i]->name(), "/unpacked"), "Slice", {reduced, begin, end}));
      const Shape& shape = members[i]->output_type(0).shape;
      TSR_ASSIGN_OR_RETURN(TensorRef target,
                           Constant(absl::StrCat(stem, "/shape"), std::vector<int64_t>(shape.dims())));
      TSR_ASSIGN_OR_RETURN(TensorRef value, Add(members[i]->name(), "Reshape", {slice, target}));
      mapped_[members[i]->output(0)] = value;
      offset += sizes[i];
    }
    return absl::OkStatus();
  }

  const Graph& old_;
  Graph out_;
  std::vector<std::vector<const Node*>> buckets_;
  absl::flat_hash_map<int, int> bucket_of_;  // old node id -> bucket
  absl::flat_hash_map<int, bool> done_;
  absl::flat_hash_map<TensorRef, TensorRef> mapped_;
};

}  // namespace

absl::StatusOr<Graph> CombineAllReduces(const Graph& program, int64_t threshold_bytes,
                                        AllReduceCombination* combination, int64_t first_bucket_bytes) {
  TSR_ASSIGN_OR_RETURN(std::vector<const Node*> order, program.TopologicalOrder());
  // Open buckets per (dtype, axes), filled in program order.
  std::vector<std::vector<const Node*>> buckets;
  absl::flat_hash_map<std::string, int> open;
  absl::flat_hash_map<int, int64_t> bytes;
  for (const Node* node : order) {
    if (threshold_bytes <= 0 || !IsGradientAllReduce(program, *node)) continue;
    const int64_t size = static_cast<int64_t>(program.TypeOf(node->input(0))->shape.num_elements()) *
                         DTypeSize(program.TypeOf(node->input(0))->dtype);
    const std::string key = BucketKey(program, *node);
    auto it = open.find(key);
    // The first bucket is smaller, so that communication starts early.
    const int64_t limit = it != open.end() && it->second == 0 && first_bucket_bytes > 0
                              ? std::min(first_bucket_bytes, threshold_bytes)
                              : threshold_bytes;
    if (it == open.end() || bytes[it->second] + size > limit) {
      buckets.push_back({});
      it = open.insert_or_assign(key, static_cast<int>(buckets.size()) - 1).first;
    }
    buckets[it->second].push_back(node);
    bytes[it->second] += size;
  }
  AllReduceCombination counts;
  for (const auto& bucket : buckets) {
    if (bucket.size() < 2) continue;  // a bucket of one stays one all-reduce
    counts.combined += static_cast<int>(bucket.size());
    ++counts.buckets;
  }
  if (combination != nullptr) *combination = counts;
  return Rebuilder(program, std::move(buckets)).Run();
}

}  // namespace tsr

// PartitionGraph (see spmd_partitioner.h).
#include "partitioner/spmd_partitioner.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/bind_batch.h"
#include "graph/builder/model_summary.h"
#include "graph/status_macros.h"
#include "graph/tensor_block.h"
#include "partitioner/all_reduce_combiner.h"
#include "partitioner/shape_folding.h"

namespace tsr {

namespace {

// Emits one device's program.
class DeviceProgramEmitter {
 public:
  DeviceProgramEmitter(const Graph& global, const ShardingPlan& plan, const DeviceMesh& mesh, int device,
                       bool reduce_scatter, std::vector<CollectiveReason>* reasons)
      : global_(global),
        plan_(plan),
        mesh_(mesh),
        device_(device),
        reduce_scatter_(reduce_scatter),
        local_(global.registry()),
        reasons_(reasons) {}

  absl::StatusOr<Graph> Emit(const std::vector<bool>& needed, const std::vector<const Node*>& order) {
    for (const Node* node : order) {
      if (!needed[node->id()]) continue;
      TSR_RETURN_IF_ERROR(EmitNode(*node));
    }
    for (const SignatureEntry& e : global_.inputs()) {
      auto it = mapped_.find(e.ref);
      if (it == mapped_.end()) continue;  // an input nothing needs
      TSR_RETURN_IF_ERROR(local_.AddInput(e.name, it->second));
    }
    for (const SignatureEntry& e : global_.outputs()) {
      const Sharding& produced = plan_.ResultOf(e.ref);
      TSR_ASSIGN_OR_RETURN(TensorRef ref,
                           Reshard(e.ref, produced, Sharding::Replicated(static_cast<int>(produced.dims.size())),
                                   absl::StrCat("output '", e.name, "'")));
      TSR_RETURN_IF_ERROR(local_.AddOutput(e.name, ref));
    }
    return std::move(local_);
  }

 private:
  std::vector<std::string> AxisNames(const std::vector<int>& axes) const {
    std::vector<int> sorted = axes;
    std::sort(sorted.begin(), sorted.end());
    std::vector<std::string> names;
    for (int a : sorted) names.push_back(mesh_.axis_name(a));
    return names;
  }

  absl::StatusOr<TensorRef> AddNode(const std::string& name, const std::string& op, std::vector<TensorRef> inputs,
                                    AttrMap attrs) {
    TSR_ASSIGN_OR_RETURN(Node * node,
                         local_.AddNodeAndInfer(local_.UniqueName(name), op, std::move(inputs), std::move(attrs)));
    return node->output(0);
  }

  absl::StatusOr<TensorRef> AddConstant(const std::string& name, Tensor value) {
    AttrMap attrs;
    attrs["value"] = AttrValue::FromTensor(std::move(value));
    return AddNode(name, "Constant", {}, std::move(attrs));
  }

  void Note(const std::string& collective, TensorRef tensor, const Sharding& from, const Sharding& to,
            const std::string& consumer) {
    if (reasons_ == nullptr) return;
    reasons_->push_back(
        CollectiveReason{collective, global_.TensorName(tensor), from.ToString(mesh_), to.ToString(mesh_), consumer});
  }

  // The local tensor holding `ref` (as produced) resharded to `to`.
  absl::StatusOr<TensorRef> Reshard(TensorRef ref, const Sharding& from, const Sharding& to,
                                    const std::string& consumer) {
    const std::string key = absl::StrCat(ref.node, ":", ref.index, "->", to.ToString(mesh_));
    if (auto it = resharded_.find(key); it != resharded_.end()) return it->second;
    auto base = mapped_.find(ref);
    if (base == mapped_.end()) {
      return absl::InternalError(absl::StrCat("tensor '", global_.TensorName(ref), "' was not emitted"));
    }
    TensorRef current = base->second;
    Sharding state = from;
    const Shape& global_shape = global_.TypeOf(ref)->shape;
    const std::string stem = global_.TensorName(ref);
    // Partial sums no longer wanted: all-reduce them.
    std::vector<int> reduce;
    for (int a : state.partial) {
      if (std::find(to.partial.begin(), to.partial.end(), a) == to.partial.end()) reduce.push_back(a);
    }
    for (int a : to.partial) {
      if (std::find(state.partial.begin(), state.partial.end(), a) == state.partial.end()) {
        return absl::InternalError(absl::StrCat("tensor '", stem, "' would have to become a partial sum over '",
                                                mesh_.axis_name(a), "' for ", consumer));
      }
    }
    // Reduced over the axes that then split dimension 0 (a ZeRO gradient, reduced to the
    // share its device updates): one reduce-scatter, half an all-reduce's traffic.
    if (!reduce.empty() && reduce_scatter_ && !state.dims.empty() && state.dims[0].empty() && to.dims[0] == reduce) {
      const auto [begin, end] = LocalRange(global_shape.dim(0), to.dims[0], mesh_, device_);
      AttrMap attrs;
      attrs["reduction"] = AttrValue::String("sum");
      attrs["axis"] = AttrValue::Int(0);
      attrs["size"] = AttrValue::Int(end - begin);
      attrs["mesh_axes"] = AttrValue::Strings(AxisNames(reduce));
      TSR_ASSIGN_OR_RETURN(current, AddNode(absl::StrCat(stem, "/reduce_scatter"), "ReduceScatter", {current}, attrs));
      Sharding next = state;
      next.partial = to.partial;
      next.dims[0] = to.dims[0];
      Note(absl::StrCat("ReduceScatter ", local_.node(current.node)->name()), ref, state, next, consumer);
      state = next;
      reduce.clear();
    }
    if (!reduce.empty()) {
      AttrMap attrs;
      attrs["reduction"] = AttrValue::String("sum");
      attrs["mesh_axes"] = AttrValue::Strings(AxisNames(reduce));
      TSR_ASSIGN_OR_RETURN(current, AddNode(absl::StrCat(stem, "/all_reduce"), "AllReduce", {current}, attrs));
      Sharding next = state;
      next.partial = to.partial;
      Note(absl::StrCat("AllReduce ", local_.node(current.node)->name()), ref, state, next, consumer);
      state = next;
    }
    // A split that moves to another dimension over the same axes: one all-to-all, each
    // device sending the others their slices (1/N of the data an all-gather moves).
    for (size_t a = 0; a < state.dims.size(); ++a) {
      if (state.dims[a].empty() || !to.dims[a].empty()) continue;
      for (size_t b = 0; b < state.dims.size(); ++b) {
        if (b == a || !state.dims[b].empty() || to.dims[b] != state.dims[a]) continue;
        const auto [begin, end] = LocalRange(global_shape.dim(static_cast<int>(b)), to.dims[b], mesh_, device_);
        AttrMap attrs;
        attrs["split_axis"] = AttrValue::Int(static_cast<int64_t>(b));
        attrs["split_size"] = AttrValue::Int(end - begin);
        attrs["concat_axis"] = AttrValue::Int(static_cast<int64_t>(a));
        attrs["concat_size"] = AttrValue::Int(global_shape.dim(static_cast<int>(a)));
        attrs["mesh_axes"] = AttrValue::Strings(AxisNames(state.dims[a]));
        TSR_ASSIGN_OR_RETURN(current, AddNode(absl::StrCat(stem, "/all_to_all"), "AllToAll", {current}, attrs));
        Sharding next = state;
        next.dims[b] = state.dims[a];
        next.dims[a].clear();
        Note(absl::StrCat("AllToAll ", local_.node(current.node)->name()), ref, state, next, consumer);
        state = next;
        break;
      }
    }
    // Split dimensions that must be whole (or split otherwise): gather them.
    for (size_t d = 0; d < state.dims.size(); ++d) {
      if (state.dims[d].empty() || state.dims[d] == to.dims[d]) continue;
      AttrMap attrs;
      attrs["axis"] = AttrValue::Int(static_cast<int64_t>(d));
      attrs["size"] = AttrValue::Int(global_shape.dim(static_cast<int>(d)));
      attrs["mesh_axes"] = AttrValue::Strings(AxisNames(state.dims[d]));
      TSR_ASSIGN_OR_RETURN(current, AddNode(absl::StrCat(stem, "/all_gather"), "AllGather", {current}, attrs));
      Sharding next = state;
      next.dims[d].clear();
      Note(absl::StrCat("AllGather ", local_.node(current.node)->name()), ref, state, next, consumer);
      state = next;
    }
    // Whole dimensions that must be split: take this device's share (no communication).
    for (size_t d = 0; d < state.dims.size(); ++d) {
      if (to.dims[d].empty() || state.dims[d] == to.dims[d]) continue;
      auto [begin, end] = LocalRange(global_shape.dim(static_cast<int>(d)), to.dims[d], mesh_, device_);
      TSR_ASSIGN_OR_RETURN(TensorRef starts, AddConstant(absl::StrCat(stem, "/share_begin"),
                                                         Tensor::FromVector<int64_t>(Shape{1}, {begin})));
      TSR_ASSIGN_OR_RETURN(TensorRef ends,
                           AddConstant(absl::StrCat(stem, "/share_end"), Tensor::FromVector<int64_t>(Shape{1}, {end})));
      TSR_ASSIGN_OR_RETURN(TensorRef axes, AddConstant(absl::StrCat(stem, "/share_axis"),
                                                       Tensor::FromVector<int64_t>(Shape{1}, {int64_t(d)})));
      TSR_ASSIGN_OR_RETURN(current, AddNode(absl::StrCat(stem, "/share"), "Slice", {current, starts, ends, axes}, {}));
      state.dims[d] = to.dims[d];
    }
    resharded_[key] = current;
    return current;
  }

  absl::Status EmitNode(const Node& node) {
    const NodeSharding& ns = plan_.nodes[node.id()];
    AttrMap attrs = node.attrs();
    std::vector<TensorRef> inputs;
    std::string name = node.name();
    std::vector<int> shared;  // outputs of an update computed on a share of their Variable
    if (node.op() == "Placeholder" || node.op() == "Variable") {
      const Shape local = LocalShape(node.output_type(0).shape, ns.results[0], mesh_, device_);
      if (node.op() == "Variable" && ns.results[0].IsSplit()) SetPartitionAttrs(node, ns.results[0], attrs);
      attrs["shape"] = AttrValue::FromShape(local);
    } else {
      TSR_ASSIGN_OR_RETURN(shared, UpdatesOnShares(node, ns));
      for (int i = 0; i < node.num_inputs(); ++i) {
        if (!node.input(i).valid()) {
          inputs.push_back(TensorRef::None());
          continue;
        }
        const auto on_share =
            std::find_if(shared.begin(), shared.end(), [&](int j) { return node.op_def()->variable_updates[j] == i; });
        TSR_ASSIGN_OR_RETURN(TensorRef in,
                             on_share != shared.end()
                                 ? AddUpdateShare(*global_.node(node.input(i).node), ns.results[*on_share])
                                 : Reshard(node.input(i), plan_.ResultOf(node.input(i)), ns.operands[i],
                                           absl::StrCat("node '", node.name(), "' input ", i)));
        inputs.push_back(in);
      }
      // The update keeps its name on the Assign that writes its result back (the step's
      // targets name it).
      if (!shared.empty()) name = absl::StrCat(node.name(), "/on_share");
      TSR_RETURN_IF_ERROR(LocalizeShapeOperand(node, ns, inputs));
      if (node.op() == "Dropout" && !ns.operands.empty() && !ns.operands[0].dims.empty() &&
          !ns.operands[0].dims[0].empty()) {
        // This device's rows start at element begin * (elements per row) of the whole tensor.
        const Shape& x = global_.TypeOf(node.input(0))->shape;
        const int64_t begin = LocalRange(x.dim(0), ns.operands[0].dims[0], mesh_, device_).first;
        const int64_t offset = node.FindAttr("element_offset") != nullptr ? node.FindAttr("element_offset")->i() : 0;
        attrs["element_offset"] =
            AttrValue::Int(offset + begin * (x.rank() > 0 && x.dim(0) > 0 ? x.num_elements() / x.dim(0) : 1));
      }
    }
    absl::StatusOr<Node*> added = local_.AddNodeAndInfer(name, node.op(), inputs, std::move(attrs));
    if (!added.ok()) {
      return absl::Status(added.status().code(),
                          absl::StrCat("device ", device_, "'s program: ", added.status().message()));
    }
    for (int j = 0; j < node.num_outputs(); ++j) {
      const Shape expected = LocalShape(node.output_type(j).shape, ns.results[j], mesh_, device_);
      if ((*added)->output_type(j).shape != expected) {
        return absl::InternalError(absl::StrCat("node '", node.name(), "' (", node.op(), ") on device ", device_,
                                                " infers output ", j, " as ", (*added)->output_type(j).shape.ToString(),
                                                " but its share of ", node.output_type(j).shape.ToString(), " split ",
                                                ns.results[j].ToString(mesh_), " is ", expected.ToString()));
      }
      mapped_[node.output(j)] = (*added)->output(j);
    }
    for (int j : shared) {
      // The new share, laid out as its Variable, becomes the Variable's value.
      const TensorRef variable = node.input(node.op_def()->variable_updates[j]);
      TSR_ASSIGN_OR_RETURN(TensorRef whole, Reshard(node.output(j), ns.results[j], plan_.ResultOf(variable),
                                                    absl::StrCat("Variable '", global_.TensorName(variable), "'")));
      TSR_RETURN_IF_ERROR(local_.AddNodeAndInfer(node.name(), "Assign", {mapped_.at(variable), whole}, {}).status());
    }
    return RescaleMeans(node, ns);
  }

  // Variable attributes making a share of `whole` (split by `sharding`) its block.
  void SetPartitionAttrs(const Node& whole, const Sharding& sharding, AttrMap& attrs) const {
    const Shape& shape = whole.output_type(0).shape;
    std::vector<int64_t> offset;
    for (int d = 0; d < shape.rank(); ++d)
      offset.push_back(LocalRange(shape.dim(d), sharding.dims[d], mesh_, device_).first);
    attrs["partition_shape"] = AttrValue::FromShape(shape);
    attrs["partition_offset"] = AttrValue::Ints(std::move(offset));
  }

  // An update writes its result into its Variable. Where the result is laid out otherwise
  // (ZeRO: the optimizer slots, hence the update, split over `data`, the parameter
  // replicated), the update runs on a share of the Variable kept in a Variable of its own
  // (AddUpdateShare), and its result is resharded into the Variable by an Assign. Returns
  // the outputs for which that is so.
  absl::StatusOr<std::vector<int>> UpdatesOnShares(const Node& node, const NodeSharding& ns) const {
    std::vector<int> shared;
    if (node.op_def() == nullptr) return shared;
    const std::vector<int>& updates = node.op_def()->variable_updates;
    for (size_t i = 0; i < updates.size() && static_cast<int>(i) < node.num_outputs(); ++i) {
      const TensorRef variable = node.input(updates[i]);
      const Sharding& held = plan_.ResultOf(variable);
      const Sharding& computed = ns.results[i];
      if (computed == held) continue;
      if (!computed.partial.empty() || computed != ns.operands[updates[i]]) {
        return absl::UnimplementedError(absl::StrCat("node '", node.name(), "' (", node.op(), ") computes Variable '",
                                                     global_.TensorName(variable), "' as ", computed.ToString(mesh_),
                                                     " from it read as ", ns.operands[updates[i]].ToString(mesh_),
                                                     " but the Variable is ", held.ToString(mesh_)));
      }
      shared.push_back(static_cast<int>(i));
    }
    if (shared.size() > 1) {
      std::vector<std::string> which;
      for (int i : shared) {
        const TensorRef variable = node.input(updates[i]);
        which.push_back(absl::StrCat("Variable '", global_.TensorName(variable), "' as ", ns.results[i].ToString(mesh_),
                                     " but the Variable is ", plan_.ResultOf(variable).ToString(mesh_)));
      }
      return absl::UnimplementedError(absl::StrCat(
          "node '", node.name(), "' (", node.op(), ") computes ", absl::StrJoin(which, ", and "),
          "; one Variable of an update may be laid out otherwise (ZeRO's parameter), not several: annotate a "
          "parameter's optimizer slots like the parameter"));
    }
    return shared;
  }

  // The Variable "<variable>/update_share": this device's share of `variable` split by
  // `sharding`, initialized as its block (same random values) and kept equal to it.
  absl::StatusOr<TensorRef> AddUpdateShare(const Node& variable, const Sharding& sharding) {
    AttrMap attrs = variable.attrs();
    SetPartitionAttrs(variable, sharding, attrs);
    attrs["partition_of"] = AttrValue::String(variable.name());
    attrs["shape"] = AttrValue::FromShape(LocalShape(variable.output_type(0).shape, sharding, mesh_, device_));
    const std::string name = absl::StrCat(variable.name(), "/update_share");
    TSR_ASSIGN_OR_RETURN(Node * share, local_.AddNodeAndInfer(name, "Variable", {}, std::move(attrs)));
    update_shares_.push_back(UpdateShare{name, variable.name(), sharding});
    return share->output(0);
  }

 public:
  struct UpdateShare {
    std::string name;
    std::string variable;
    Sharding sharding;
  };
  const std::vector<UpdateShare>& update_shares() const { return update_shares_; }

 private:
  // Reshape's and Expand's target shapes were folded to global constants: a device whose
  // result is a share needs its own.
  absl::Status LocalizeShapeOperand(const Node& node, const NodeSharding& ns, std::vector<TensorRef>& inputs) {
    int slot = -1;
    if (node.op() == "Reshape" || node.op() == "Expand") slot = 1;
    if (slot < 0 || slot >= static_cast<int>(inputs.size()) || !ns.results[0].IsSplit()) return absl::OkStatus();
    if (global_.ConstantValue(node.input(slot)) == nullptr) {
      return absl::UnimplementedError(absl::StrCat("node '", node.name(), "' (", node.op(),
                                                   "): its target shape is computed at run time, so its split result ",
                                                   ns.results[0].ToString(mesh_), " cannot be localized"));
    }
    const Shape local = LocalShape(node.output_type(0).shape, ns.results[0], mesh_, device_);
    std::vector<int64_t> dims(local.dims().begin(), local.dims().end());
    TSR_ASSIGN_OR_RETURN(inputs[slot], AddConstant(absl::StrCat(node.name(), "/local_shape"),
                                                   Tensor::FromVector<int64_t>(Shape{local.rank()}, dims)));
    return absl::OkStatus();
  }

  // A mean over a split factor computed on a share is the share's mean; scaled by the
  // share's fraction it becomes this device's summand of the global mean.
  absl::Status RescaleMeans(const Node& node, const NodeSharding& ns) {
    if (ns.split_mean_factors.empty()) return absl::OkStatus();
    double fraction = 1.0;
    for (int f : ns.split_mean_factors) {
      const int64_t size = ns.rule.factor_sizes[f];
      auto [begin, end] = LocalRange(size, ns.factor_axes[f], mesh_, device_);
      fraction *= size == 0 ? 0.0 : static_cast<double>(end - begin) / static_cast<double>(size);
    }
    for (int j = 0; j < node.num_outputs(); ++j) {
      bool averaged = true;
      for (int f : ns.split_mean_factors) {
        if (std::find(ns.rule.results[j].begin(), ns.rule.results[j].end(), f) != ns.rule.results[j].end()) {
          averaged = false;
        }
      }
      const TensorType& type = node.output_type(j);
      if (!averaged) continue;
      Tensor scale;
      if (type.dtype == DType::kF32) {
        scale = Tensor::Scalar<float>(static_cast<float>(fraction));
      } else if (type.dtype == DType::kF64) {
        scale = Tensor::Scalar<double>(fraction);
      } else {
        return absl::UnimplementedError(absl::StrCat("node '", node.name(), "' (", node.op(), ") averages ",
                                                     DTypeName(type.dtype),
                                                     " over a split dimension; only f32 and f64 means are rescaled"));
      }
      TSR_ASSIGN_OR_RETURN(TensorRef s, AddConstant(absl::StrCat(node.name(), "/share_fraction"), std::move(scale)));
      TSR_ASSIGN_OR_RETURN(TensorRef scaled, AddNode(absl::StrCat(node.name(), "/share_of_mean"), "Mul",
                                                     {mapped_[node.output(j)], s}, {}));
      mapped_[node.output(j)] = scaled;
    }
    return absl::OkStatus();
  }

  const Graph& global_;
  const ShardingPlan& plan_;
  const DeviceMesh& mesh_;
  const int device_;
  const bool reduce_scatter_;
  Graph local_;
  std::vector<CollectiveReason>* reasons_;
  absl::flat_hash_map<TensorRef, TensorRef> mapped_;  // global tensor -> local, as produced
  absl::flat_hash_map<std::string, TensorRef> resharded_;
  std::vector<UpdateShare> update_shares_;
};

}  // namespace

absl::StatusOr<PartitionedProgram> PartitionGraph(const Graph& graph, const DeviceMesh& mesh,
                                                  const ShardingAnnotations& annotations,
                                                  const PartitionOptions& options) {
  TSR_ASSIGN_OR_RETURN(Graph bound, BindBatch(graph, options.batch));
  TSR_RETURN_IF_ERROR(FoldShapeComputations(bound).status());
  TSR_ASSIGN_OR_RETURN(ShardingPlan plan, PropagateShardings(bound, mesh, annotations));
  TSR_ASSIGN_OR_RETURN(std::vector<const Node*> order, bound.TopologicalOrder());

  // What the signature outputs and the targets need.
  std::vector<bool> needed(bound.num_nodes(), false);
  std::vector<int> stack;
  auto need = [&](int id) {
    if (id >= 0 && !needed[id]) {
      needed[id] = true;
      stack.push_back(id);
    }
  };
  for (const SignatureEntry& e : bound.outputs()) need(e.ref.node);
  for (const std::string& target : options.targets) {
    const Node* node = bound.FindNode(target);
    if (node == nullptr) return absl::NotFoundError(absl::StrCat("target node '", target, "' is not in the graph"));
    need(node->id());
  }
  for (const SignatureEntry& e : bound.inputs()) need(e.ref.node);
  while (!stack.empty()) {
    const Node* node = bound.node(stack.back());
    stack.pop_back();
    for (const TensorRef& in : node->inputs()) {
      if (in.valid()) need(in.node);
    }
  }

  PartitionedProgram program;
  program.mesh = mesh;
  program.global_batch = options.batch;
  for (const SignatureEntry& e : bound.inputs()) program.input_shardings[e.name] = plan.ResultOf(e.ref);
  for (const Node* node : order) {
    if (node->op() == "Variable" && needed[node->id()]) {
      program.variable_shardings[node->name()] = plan.ResultOf(node->output(0));
      program.variable_shapes[node->name()] = node->output_type(0).shape;
    }
  }
  // Placeholders outside the signature are fed by node name (nn::TrainingFlag's "training").
  for (const Node* node : order) {
    if (node->op() == "Placeholder" && needed[node->id()] && !program.input_shardings.contains(node->name())) {
      program.input_shardings[node->name()] = plan.ResultOf(node->output(0));
    }
  }
  for (int d = 0; d < mesh.num_devices(); ++d) {
    DeviceProgramEmitter emitter(bound, plan, mesh, d, options.reduce_scatter, d == 0 ? &program.collectives : nullptr);
    TSR_ASSIGN_OR_RETURN(Graph local, emitter.Emit(needed, order));
    if (d == 0) {
      for (const DeviceProgramEmitter::UpdateShare& share : emitter.update_shares()) {
        program.update_shares[share.name] = share.variable;
        program.variable_shardings[share.name] = share.sharding;
        program.variable_shapes[share.name] = program.variable_shapes.at(share.variable);
      }
    }
    if (options.combine_threshold_bytes > 0) {
      AllReduceCombination combination;
      TSR_ASSIGN_OR_RETURN(
          local, CombineAllReduces(local, options.combine_threshold_bytes, &combination, options.first_bucket_bytes));
      program.all_reduce_buckets = combination.buckets;
      program.combined_all_reduces = combination.combined;
    }
    program.devices.push_back(std::move(local));
  }
  return program;
}

namespace {

// Device `device`'s block of `value` laid out by `sharding`: its offset and shape.
absl::StatusOr<Tensor> Share(const Sharding& sharding, const DeviceMesh& mesh, const Tensor& value, int device,
                             absl::string_view what) {
  if (static_cast<int>(sharding.dims.size()) != value.shape().rank()) {
    return absl::InvalidArgumentError(absl::StrCat(what, " has shape ", value.shape().ToString(),
                                                   " but the program was partitioned for rank ", sharding.dims.size()));
  }
  if (!sharding.IsSplit()) return value;
  std::vector<int64_t> offset(value.shape().rank());
  Shape shape = value.shape();
  for (int d = 0; d < value.shape().rank(); ++d) {
    auto [begin, end] = LocalRange(value.shape().dim(d), sharding.dims[d], mesh, device);
    offset[d] = begin;
    shape.set_dim(d, end - begin);
  }
  return ExtractBlock(value, offset, shape);
}

}  // namespace

absl::StatusOr<Tensor> PartitionedProgram::ShareOf(absl::string_view input, const Tensor& value, int device) const {
  auto it = input_shardings.find(std::string(input));
  if (it == input_shardings.end()) {
    return absl::NotFoundError(absl::StrCat("the partitioned program has no input '", input, "'"));
  }
  return Share(it->second, mesh, value, device, absl::StrCat("input '", input, "'"));
}

absl::StatusOr<Tensor> PartitionedProgram::VariableShare(absl::string_view name, const Tensor& whole,
                                                         int device) const {
  auto it = variable_shardings.find(std::string(name));
  if (it == variable_shardings.end()) {
    return absl::NotFoundError(absl::StrCat("the partitioned program has no Variable '", name, "'"));
  }
  return Share(it->second, mesh, whole, device, absl::StrCat("Variable '", name, "'"));
}

absl::StatusOr<Tensor> PartitionedProgram::AssembleVariable(absl::string_view name,
                                                            const std::vector<Tensor>& shares) const {
  auto it = variable_shardings.find(std::string(name));
  if (it == variable_shardings.end()) {
    return absl::NotFoundError(absl::StrCat("the partitioned program has no Variable '", name, "'"));
  }
  const Sharding& sharding = it->second;
  if (static_cast<int>(shares.size()) != mesh.num_devices() || shares.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("Variable '", name, "': ", shares.size(), " shares for ", mesh.num_devices(), " devices"));
  }
  if (!sharding.IsSplit()) return shares[0];
  const Shape& whole = variable_shapes.at(std::string(name));
  TSR_ASSIGN_OR_RETURN(Tensor value, Tensor::Create(shares[0].dtype(), whole));
  for (int dev = 0; dev < mesh.num_devices(); ++dev) {
    std::vector<int64_t> offset(whole.rank());
    for (int d = 0; d < whole.rank(); ++d) offset[d] = LocalRange(whole.dim(d), sharding.dims[d], mesh, dev).first;
    TSR_RETURN_IF_ERROR(InsertBlock(value, offset, shares[dev]));
  }
  return value;
}

std::string PartitionedProgram::BucketsNote() const {
  if (all_reduce_buckets == 0) return "";
  return absl::StrCat(" (", combined_all_reduces, " gradient all-reduces packed into ", all_reduce_buckets,
                      all_reduce_buckets == 1 ? " bucket)" : " buckets)");
}

std::string PartitionedProgram::Explain() const {
  std::string text =
      absl::StrCat("mesh ", mesh.ToString(), ", ", devices.size(), " devices, global batch ", global_batch, "\n");
  absl::StrAppend(&text, collectives.size(), " collectives per device", BucketsNote(), ":\n");
  for (const CollectiveReason& r : collectives) {
    absl::StrAppend(&text, "  ", r.collective, ": '", r.tensor, "' ", r.from, " -> ", r.to, " for ", r.consumer, "\n");
  }
  // What the Variables (weights, optimizer slots, update shares) take on each device.
  // One device would hold each Variable whole (device 0's program gives the dtypes).
  int64_t whole = 0;
  for (const auto& [name, shape] : variable_shapes) {
    const Node* node = devices.empty() || update_shares.contains(name) ? nullptr : devices[0].FindNode(name);
    if (node != nullptr) whole += shape.num_elements() * static_cast<int64_t>(DTypeSize(node->output_type(0).dtype));
  }
  std::vector<int64_t> held;
  for (const Graph& device : devices) held.push_back(VariableBytes(device));
  absl::StrAppend(&text, "variables: ", whole, " bytes on one device; per device ", absl::StrJoin(held, ", "),
                  " bytes\n");
  for (size_t d = 0; d < devices.size(); ++d) {
    absl::StrAppend(&text, "\n== device ", d, " (coordinates ",
                    absl::StrJoin(mesh.Coordinates(static_cast<int>(d)), ","), "): ", devices[d].num_nodes(),
                    " nodes\n", devices[d].DebugString());
  }
  return text;
}

}  // namespace tsr

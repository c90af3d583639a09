// PropagateShardings (see sharding_propagation.h).
#include "partitioner/sharding_propagation.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/status_macros.h"

namespace tsr {

namespace {

std::vector<int> Union(std::vector<int> a, const std::vector<int>& b) {
  a.insert(a.end(), b.begin(), b.end());
  std::sort(a.begin(), a.end());
  a.erase(std::unique(a.begin(), a.end()), a.end());
  return a;
}

// The annotated sharding of each annotated tensor, by TensorRef.
absl::StatusOr<absl::flat_hash_map<TensorRef, Sharding>> ResolveAnnotations(const Graph& graph, const DeviceMesh& mesh,
                                                                            const ShardingAnnotations& annotations) {
  absl::flat_hash_map<TensorRef, Sharding> resolved;
  for (const auto& [name, dims] : annotations.tensors) {
    std::optional<TensorRef> ref;
    for (const SignatureEntry& e : graph.inputs()) {
      if (e.name == name) ref = e.ref;
    }
    if (!ref) {
      absl::StatusOr<TensorRef> parsed = graph.ParseTensorName(name);
      if (!parsed.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat("sharding annotation for '", name, "': the graph has no such input or tensor"));
      }
      ref = *parsed;
    }
    const TensorType* type = graph.TypeOf(*ref);
    if (type == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("sharding annotation for '", name, "': the tensor has no type"));
    }
    if (static_cast<int>(dims.size()) != type->shape.rank()) {
      return absl::InvalidArgumentError(absl::StrCat("sharding annotation for '", name, "' gives ", dims.size(),
                                                     " dimensions but the tensor has shape ", type->shape.ToString()));
    }
    Sharding sharding = Sharding::Replicated(type->shape.rank());
    std::vector<int> used;
    for (size_t d = 0; d < dims.size(); ++d) {
      for (const std::string& axis_name : dims[d]) {
        const int axis = mesh.AxisIndex(axis_name);
        if (axis < 0) {
          return absl::InvalidArgumentError(absl::StrCat("sharding annotation for '", name, "': the mesh ",
                                                         mesh.ToString(), " has no axis '", axis_name, "'"));
        }
        if (std::find(used.begin(), used.end(), axis) != used.end()) {
          return absl::InvalidArgumentError(
              absl::StrCat("sharding annotation for '", name, "' uses mesh axis '", axis_name, "' twice"));
        }
        used.push_back(axis);
        sharding.dims[d].push_back(axis);
      }
      std::sort(sharding.dims[d].begin(), sharding.dims[d].end());  // mesh order, as groups rank devices
    }
    resolved[*ref] = std::move(sharding);
  }
  return resolved;
}

Sharding ShardingOf(const std::vector<int>& dims_factors, const std::vector<std::vector<int>>& factor_axes) {
  Sharding s = Sharding::Replicated(static_cast<int>(dims_factors.size()));
  for (size_t d = 0; d < dims_factors.size(); ++d) {
    if (dims_factors[d] >= 0) s.dims[d] = factor_axes[dims_factors[d]];
  }
  return s;
}

}  // namespace

absl::StatusOr<ShardingPlan> PropagateShardings(const Graph& graph, const DeviceMesh& mesh,
                                                const ShardingAnnotations& annotations) {
  TSR_ASSIGN_OR_RETURN(auto annotated, ResolveAnnotations(graph, mesh, annotations));
  TSR_ASSIGN_OR_RETURN(std::vector<const Node*> order, graph.TopologicalOrder());
  ShardingPlan plan;
  plan.nodes.resize(graph.num_nodes());
  for (const Node* node : order) {
    NodeSharding& ns = plan.nodes[node->id()];
    TSR_ASSIGN_OR_RETURN(ns.rule, ShardingRuleFor(graph, *node));
    const OpShardingRule& rule = ns.rule;
    const int num_factors = static_cast<int>(rule.factor_sizes.size());
    ns.factor_axes.assign(num_factors, {});

    // An annotated result of an op (a constraint, like a ZeRO update computed on shares)
    // fixes its dimensions' factors: split as annotated, or whole.
    std::vector<int> used_axes;
    std::vector<bool> pinned(num_factors, false);
    for (int j = 0; j < node->num_outputs() && node->num_inputs() > 0; ++j) {
      auto it = annotated.find(node->output(j));
      if (it == annotated.end()) continue;
      for (size_t d = 0; d < it->second.dims.size(); ++d) {
        const std::vector<int>& axes = it->second.dims[d];
        const int f = d < rule.results[j].size() ? rule.results[j][d] : -1;
        const auto conflict = [&](absl::string_view why) {
          return absl::InvalidArgumentError(absl::StrCat("sharding annotation for '", graph.TensorName(node->output(j)),
                                                         "' (", it->second.ToString(mesh), ") conflicts with node '",
                                                         node->name(), "' (", node->op(), "): ", why));
        };
        if (f < 0) {
          if (!axes.empty()) return conflict(absl::StrCat("the op cannot split its result's dimension ", d));
          continue;
        }
        if (pinned[f] && ns.factor_axes[f] != axes) {
          return conflict(absl::StrCat("dimension ", d, " shares its factor with a dimension annotated otherwise"));
        }
        if (!pinned[f] && AxesOverlap(axes, used_axes)) {
          return conflict(absl::StrCat("dimension ", d, "'s mesh axes already split another dimension"));
        }
        if (!axes.empty() && rule.factor_even_only[f] && rule.factor_sizes[f] % mesh.DeviceCount(axes) != 0) {
          return conflict(absl::StrCat("dimension ", d, " can only be split evenly, in ", rule.factor_sizes[f],
                                       " blocks or a divisor of that"));
        }
        pinned[f] = true;
        ns.factor_axes[f] = axes;
        used_axes = Union(used_axes, axes);
      }
    }

    // Split factors: the first split operand dimension of each, without reusing an axis.
    for (int i = 0; i < node->num_inputs(); ++i) {
      if (!node->input(i).valid()) continue;
      const Sharding& in = plan.ResultOf(node->input(i));
      for (size_t d = 0; d < rule.operands[i].size() && d < in.dims.size(); ++d) {
        const int f = rule.operands[i][d];
        if (f < 0 || in.dims[d].empty() || !ns.factor_axes[f].empty() || pinned[f]) continue;
        if (AxesOverlap(in.dims[d], used_axes)) continue;
        if (rule.factor_even_only[f] && rule.factor_sizes[f] % mesh.DeviceCount(in.dims[d]) != 0) continue;
        ns.factor_axes[f] = in.dims[d];
        used_axes = Union(used_axes, in.dims[d]);
      }
    }

    // Partial operands: kept when they form one of the op's linear sets with one set of
    // axes that no factor splits.
    std::vector<int> partial_inputs;
    for (int i = 0; i < node->num_inputs(); ++i) {
      if (node->input(i).valid() && !plan.ResultOf(node->input(i)).partial.empty()) partial_inputs.push_back(i);
    }
    std::vector<int> kept_partial;  // axes
    std::vector<int> kept_inputs;
    if (!partial_inputs.empty()) {
      for (const std::vector<int>& set : rule.linear_sets) {
        std::vector<int> sorted_set = set;
        std::sort(sorted_set.begin(), sorted_set.end());
        sorted_set.erase(std::remove_if(sorted_set.begin(), sorted_set.end(),
                                        [&](int i) { return i >= node->num_inputs() || !node->input(i).valid(); }),
                         sorted_set.end());
        if (sorted_set != partial_inputs) continue;
        const std::vector<int>& axes = plan.ResultOf(node->input(sorted_set[0])).partial;
        bool same = true;
        for (int i : sorted_set) same = same && plan.ResultOf(node->input(i)).partial == axes;
        if (same && !AxesOverlap(axes, used_axes)) {
          kept_partial = axes;
          kept_inputs = sorted_set;
        }
        break;
      }
    }

    // What each operand must be.
    ns.operands.resize(node->num_inputs());
    for (int i = 0; i < node->num_inputs(); ++i) {
      if (!node->input(i).valid()) continue;
      ns.operands[i] = ShardingOf(rule.operands[i], ns.factor_axes);
      if (std::find(kept_inputs.begin(), kept_inputs.end(), i) != kept_inputs.end())
        ns.operands[i].partial = kept_partial;
    }

    // Results.
    std::vector<int> partial = kept_partial;
    for (int f = 0; f < num_factors; ++f) {
      if (ns.factor_axes[f].empty()) continue;
      if (rule.factor_kinds[f] == FactorKind::kReduction || rule.factor_kinds[f] == FactorKind::kMean) {
        partial = Union(partial, ns.factor_axes[f]);
      }
      if (rule.factor_kinds[f] == FactorKind::kMean) ns.split_mean_factors.push_back(f);
    }
    ns.results.resize(node->num_outputs());
    for (int j = 0; j < node->num_outputs(); ++j) {
      auto it = annotated.find(node->output(j));
      if (it != annotated.end() && node->num_inputs() == 0) {
        ns.results[j] = it->second;  // an annotated source (Placeholder, Variable)
        continue;
      }
      ns.results[j] = ShardingOf(rule.results[j], ns.factor_axes);
      // Results that keep a split reduction factor's dimension are not sums over it.
      std::vector<int> own_partial = partial;
      for (int f = 0; f < num_factors; ++f) {
        if (ns.factor_axes[f].empty() || rule.factor_kinds[f] == FactorKind::kParallel) continue;
        if (std::find(rule.results[j].begin(), rule.results[j].end(), f) != rule.results[j].end()) {
          std::vector<int> rest;
          for (int a : own_partial) {
            if (std::find(ns.factor_axes[f].begin(), ns.factor_axes[f].end(), a) == ns.factor_axes[f].end()) {
              rest.push_back(a);
            }
          }
          own_partial = rest;
        }
      }
      ns.results[j].partial = own_partial;
    }
  }
  return plan;
}

}  // namespace tsr

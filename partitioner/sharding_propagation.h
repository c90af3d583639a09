// `PropagateShardings`: from the shardings a strategy gives some tensors (the batch
// inputs split on `data`, a weight split on `model`) to a sharding for every tensor
// and a required sharding for every operand, one node at a time in topological order
// using the ops' sharding rules (sharding_rules.h):
//
//  - a factor is split over the axes its first split operand dimension has (later
//    operands that disagree are resharded to match; an axis splits one factor at most);
//  - partial operands stay partial when they are exactly a set the op is linear in
//    (same axes), and are all-reduced first otherwise;
//  - a result is split along its factors' dimensions and partial over the axes of its
//    split reduction and mean factors (and of partial operands it is linear in).
//
// An annotated op result is a constraint: its dimensions' factors are split as annotated
// (or kept whole) before the operands are looked at, and operands are resharded to fit;
// an annotation the op cannot satisfy is an error naming both. Unannotated Placeholders,
// Variables and Constants are replicated. What a node needs
// and what its producer gives may differ: the partitioner inserts the collectives that
// turn one into the other (spmd_partitioner.h).
#ifndef TESSERA_PARTITIONER_SHARDING_PROPAGATION_H_
#define TESSERA_PARTITIONER_SHARDING_PROPAGATION_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "partitioner/device_mesh.h"
#include "partitioner/sharding.h"
#include "partitioner/sharding_rules.h"

namespace tsr {

// Shardings given by a strategy: per tensor (a signature input's name, a node's name
// for its output 0, or "node:i"), per dimension the mesh axis names splitting it.
struct ShardingAnnotations {
  std::map<std::string, std::vector<std::vector<std::string>>> tensors;
};

struct NodeSharding {
  OpShardingRule rule;
  std::vector<std::vector<int>> factor_axes;  // per factor: the mesh axes splitting it
  std::vector<Sharding> operands;             // per input slot: what the node reads
  std::vector<Sharding> results;              // per output
  // Split mean factors: results without them are partial means, to be rescaled by the
  // device's share of those factors.
  std::vector<int> split_mean_factors;
};

struct ShardingPlan {
  std::vector<NodeSharding> nodes;  // by node id; empty entries for nodes not visited
  const Sharding& ResultOf(TensorRef ref) const { return nodes[ref.node].results[ref.index]; }
};

// `graph` has static shapes. Errors name the annotation (unknown tensor or axis, a rank
// mismatch, an axis used twice) or the node whose rule failed.
absl::StatusOr<ShardingPlan> PropagateShardings(const Graph& graph, const DeviceMesh& mesh,
                                                const ShardingAnnotations& annotations);

}  // namespace tsr

#endif  // TESSERA_PARTITIONER_SHARDING_PROPAGATION_H_

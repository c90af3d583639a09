// `PartitionGraph`: one graph + a device mesh + a strategy's sharding annotations ->
// one program per device (SPMD: the same computation on each device's share of the
// data), with the collectives that move data where shardings change.
//
//   1. the batch is bound (graph/bind_batch.h) and shape computations folded
//      (shape_folding.h), so every shape and count is the global one;
//   2. shardings are propagated (sharding_propagation.h);
//   3. each device's program is emitted: every node the fetches and targets need, on
//      that device's share (Placeholders of the local shape, Reshape/Expand targets
//      localized, partial means rescaled by the device's share), with, where an operand's
//      sharding differs from what its producer gives: AllReduce for partial sums,
//      ReduceScatter for a partial sum needed split along dimension 0 over its axes,
//      AllToAll for a split that moves to another dimension over the same axes,
//      AllGather for a split dimension that must be whole, a local Slice for a whole
//      dimension that must be split. Fetched outputs are made replicated, so every
//      device returns the values one device would.
//
// Node names are kept (Variables, update targets and signature names mean the same in
// every program); inserted nodes are named after the tensor they move
// ("dense/MatMul_1/all_reduce"). Each program's collectives are issued in the same order
// on every device (the runtimes keep the topological order of collective ops).
#ifndef TESSERA_PARTITIONER_SPMD_PARTITIONER_H_
#define TESSERA_PARTITIONER_SPMD_PARTITIONER_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/graph.h"
#include "graph/tensor.h"
#include "partitioner/device_mesh.h"
#include "partitioner/sharding_propagation.h"

namespace tsr {

struct PartitionOptions {
  int64_t batch = 1;  // the global batch the symbolic batch dimension is bound to
  // Nodes to keep besides those the signature outputs need (a training step's updates).
  std::vector<std::string> targets;
  // Gradient all-reduces are packed into buckets of at most this many bytes
  // (all_reduce_combiner.h; PyTorch DDP's default bucket); 0: one all-reduce each.
  int64_t combine_threshold_bytes = int64_t{25} << 20;
  // The first bucket's limit (DDP's first bucket), so that the last layers' gradients are
  // all-reduced while the backward pass goes on; 0: combine_threshold_bytes.
  int64_t first_bucket_bytes = int64_t{1} << 20;
  // A partial sum needed split along dimension 0 over the axes it is summed over (a ZeRO-2
  // gradient) is reduce-scattered; false: all-reduced whole, then sliced (ZeRO-1 keeps data
  // parallelism's bucketed gradient all-reduces).
  bool reduce_scatter = true;
};

// Why a collective was inserted: which tensor, which change of sharding, for whom.
struct CollectiveReason {
  std::string collective;  // the inserted node's op and name: "AllReduce dense/MatMul_1/all_reduce"
  std::string tensor;      // the global tensor moved
  std::string from;        // its sharding as produced
  std::string to;          // as required
  std::string consumer;    // "node 'sgd/dense/kernel' input 1" or "output 'loss'"
};

struct PartitionedProgram {
  DeviceMesh mesh;
  std::vector<Graph> devices;  // device d's program (mesh coordinates: mesh.Coordinates(d))
  // Collectives of device 0's program, in program order (every device has the same).
  std::vector<CollectiveReason> collectives;
  int64_t global_batch = 1;
  // Gradient all-reduces packed into buckets, per device program.
  int all_reduce_buckets = 0;
  int combined_all_reduces = 0;
  // The collectives a device runs per step: those inserted, each bucket counted once.
  int CollectivesPerStep() const {
    return static_cast<int>(collectives.size()) - combined_all_reduces + all_reduce_buckets;
  }
  // " (10 gradient all-reduces packed into 1 bucket)", or "" when nothing was packed.
  std::string BucketsNote() const;
  // The sharding of each signature input, and of each Placeholder outside the signature
  // by its node name (what ShareOf cuts).
  std::map<std::string, Sharding> input_shardings;

  // Device `device`'s share of the global value of signature input `input` (a copy);
  // the whole value for a replicated input. Errors name the input.
  absl::StatusOr<Tensor> ShareOf(absl::string_view input, const Tensor& value, int device) const;

  // The sharding of each Variable the programs hold (split by tensor parallelism, or
  // replicated).
  std::map<std::string, Sharding> variable_shardings;
  std::map<std::string, Shape> variable_shapes;  // their whole shapes
  // Updates computed on a share of a Variable laid out otherwise (ZeRO-1/2: optimizer slots
  // split over `data`, the parameter replicated) keep that share in a Variable of their
  // own, "<Variable>/update_share" (split; in variable_shardings), initialized as the
  // Variable's block; each step gathers the new share back into the Variable. Whoever
  // sets a Variable's value sets its update share's too. Share -> its Variable.
  std::map<std::string, std::string> update_shares;
  // Device `device`'s share of Variable `name`'s whole value.
  absl::StatusOr<Tensor> VariableShare(absl::string_view name, const Tensor& whole, int device) const;
  // Variable `name`'s whole value from every device's share (shares[d] from device d).
  absl::StatusOr<Tensor> AssembleVariable(absl::string_view name, const std::vector<Tensor>& shares) const;

  // The per-device report of `tessera compile --strategy ... --explain`: the mesh, the
  // shardings of the signature, each collective and why, and each device's program.
  std::string Explain() const;
};

absl::StatusOr<PartitionedProgram> PartitionGraph(const Graph& graph, const DeviceMesh& mesh,
                                                  const ShardingAnnotations& annotations,
                                                  const PartitionOptions& options);

}  // namespace tsr

#endif  // TESSERA_PARTITIONER_SPMD_PARTITIONER_H_

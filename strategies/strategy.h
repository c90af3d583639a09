// `Strategy`: how a user says a model should be distributed. A strategy only
// *annotates*: it picks a device mesh and shardings for some tensors (the batch inputs,
// the weights); the partitioner (partitioner/spmd_partitioner.h) decides how to move
// data and inserts the collectives. New strategies are new annotations.
#ifndef TESSERA_STRATEGIES_STRATEGY_H_
#define TESSERA_STRATEGIES_STRATEGY_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "partitioner/device_mesh.h"
#include "partitioner/pipeline_schedule.h"
#include "partitioner/sharding_propagation.h"

namespace tsr {

// A pipeline: the step cut into stages that run micro-batches in a schedule
// (partitioner/pipeline_stages.h, pipeline_schedule.h) instead of SPMD programs.
struct PipelinePlan {
  int stages = 2;  // pipeline devices (the mesh's "pipe" axis)
  int microbatches = 4;
  PipelineScheduleKind schedule = PipelineScheduleKind::kOneForwardOneBackward;
  // Forward ops starting stages 1..(stages x chunks - 1); empty: balanced by FLOPs.
  std::vector<std::string> cut_points;
  // Data-parallel replicas of the whole pipeline (a mesh {pipe, data}): each takes its
  // share of the batch, and the replicas of a stage all-reduce their gradients before the
  // update. Only with one pipeline device per process (a job of stages x data processes).
  int data = 1;
  // Model chunks per device (interleaved schedule only): the model is cut into
  // stages x chunks stages, stage c on device c mod stages.
  int chunks = 1;
};

struct StrategyPlan {
  DeviceMesh mesh;
  ShardingAnnotations annotations;
  // Partial sums needed split are reduce-scattered (PartitionOptions::reduce_scatter).
  bool reduce_scatter = true;
  std::optional<PipelinePlan> pipeline;
};

class Strategy {
 public:
  virtual ~Strategy() = default;
  // "mirrored(2)", as --explain prints it.
  virtual std::string name() const = 0;
  // The mesh and annotations for `graph` (a model or training graph with its symbolic
  // batch); errors say why the strategy does not fit the graph.
  virtual absl::StatusOr<StrategyPlan> Plan(const Graph& graph) const = 0;
};

}  // namespace tsr

#endif  // TESSERA_STRATEGIES_STRATEGY_H_

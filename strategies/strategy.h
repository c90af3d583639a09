// `Strategy`: how a user says a model should be distributed. A strategy only
// *annotates*: it picks a device mesh and shardings for some tensors (the batch inputs,
// the weights); the partitioner (partitioner/spmd_partitioner.h) decides how to move
// data and inserts the collectives. New strategies are new annotations.
#ifndef TESSERA_STRATEGIES_STRATEGY_H_
#define TESSERA_STRATEGIES_STRATEGY_H_

#include <string>

#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "partitioner/device_mesh.h"
#include "partitioner/sharding_propagation.h"

namespace tsr {

struct StrategyPlan {
  DeviceMesh mesh;
  ShardingAnnotations annotations;
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

// ZeRO (DeepSpeed's Zero Redundancy Optimizer): data parallelism whose devices do not
// all hold the same training state. Over the mesh axis `data` (the batch split as in
// data_parallel.h):
//
//   stage 1  the optimizer slots (momentum, Adam's m and v) are split along their first
//            dimension; each device updates its share of every parameter from its share
//            of the slots and of the all-reduced gradient, and the new shares are
//            all-gathered into the (replicated) parameters.
//   stage 2  as stage 1, but the gradients are reduce-scattered: a device only ever has
//            its share of the reduced gradient (half an all-reduce's traffic).
//   stage 3  the parameters are split too: a device holds 1/N of every parameter, slot
//            and reduced gradient; the forward and backward passes all-gather each
//            parameter where it is used.
//
// Every stage trains exactly as one device on the global batch. Only optimizer updates
// (ops updating Variables from an input named "grad") are sharded, and only Variables
// whose first dimension is at least the number of devices; the rest stay replicated.
// The partitioner keeps a stage-1/2 update's share of its parameter in a Variable
// "<parameter>/update_share" (spmd_partitioner.h).
#ifndef TESSERA_STRATEGIES_ZERO_H_
#define TESSERA_STRATEGIES_ZERO_H_

#include <string>

#include "strategies/strategy.h"

namespace tsr {

class ZeroStrategy : public Strategy {
 public:
  ZeroStrategy(int stage, int devices) : stage_(stage), devices_(devices) {}
  std::string name() const override;  // "zero2(2)"
  absl::StatusOr<StrategyPlan> Plan(const Graph& graph) const override;

 private:
  int stage_;
  int devices_;
};

}  // namespace tsr

#endif  // TESSERA_STRATEGIES_ZERO_H_

// Data parallelism: every device holds all the weights and runs the model on its share
// of the batch. The mesh is one axis `data`; every signature input whose first
// dimension is the symbolic batch is split along it, everything else is replicated. The
// partitioner then finds the weight gradients to be partial sums over `data` and
// all-reduces them before the optimizer updates, so every device applies the same
// update — the global batch's — and the weights stay equal.
//
//   MirroredStrategy(N): N virtual devices of one process (tf.distribute.MirroredStrategy).
//   MultiWorkerMirroredStrategy(N): N processes, one device each, under `tessera launch`
//     or mpirun (tf.distribute.MultiWorkerMirroredStrategy, PyTorch DDP). The
//     annotations are the same; only where the devices live differs.
#ifndef TESSERA_STRATEGIES_DATA_PARALLEL_H_
#define TESSERA_STRATEGIES_DATA_PARALLEL_H_

#include <string>

#include "strategies/strategy.h"

namespace tsr {

class MirroredStrategy : public Strategy {
 public:
  explicit MirroredStrategy(int devices) : devices_(devices) {}
  std::string name() const override;
  absl::StatusOr<StrategyPlan> Plan(const Graph& graph) const override;

 private:
  int devices_;
};

class MultiWorkerMirroredStrategy : public Strategy {
 public:
  explicit MultiWorkerMirroredStrategy(int workers) : workers_(workers) {}
  std::string name() const override;
  absl::StatusOr<StrategyPlan> Plan(const Graph& graph) const override;

 private:
  int workers_;
};

// The data-parallel plan over `devices` devices on mesh axis `axis`.
absl::StatusOr<StrategyPlan> DataParallelPlan(const Graph& graph, int devices, const std::string& axis = "data");

}  // namespace tsr

#endif  // TESSERA_STRATEGIES_DATA_PARALLEL_H_

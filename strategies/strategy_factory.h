// Strategies by name, as the `tessera` command's flags give them:
//   one-device                      none (nullptr)
//   mirrored --devices N            MirroredStrategy(N)
//   multi-worker (N processes)      MultiWorkerMirroredStrategy(N)
//   tensor-parallel --devices N     TensorParallelStrategy(N)
//   zero1|zero2|zero3 --devices N   ZeroStrategy(stage, N)
//   hybrid --mesh data=D,model=M    HybridStrategy(D, M)
//   pipeline --stages S --microbatches M [--pipeline-schedule gpipe|1f1b|interleaved]
//            [--chunks V] [--cut-points A,B]
//                                   PipelineStrategy
#ifndef TESSERA_STRATEGIES_STRATEGY_FACTORY_H_
#define TESSERA_STRATEGIES_STRATEGY_FACTORY_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "strategies/strategy.h"

namespace tsr {

struct StrategySpec {
  std::string name = "one-device";
  int devices = 1;   // mirrored, tensor-parallel, zero*; the process count for multi-worker
  std::string mesh;  // hybrid
  // pipeline
  int stages = 0;        // 0: not given (pipeline: 2)
  int microbatches = 0;  // 0: not given (pipeline: 4)
  std::string schedule;  // "gpipe", "1f1b" (default) or "interleaved"
  int chunks = 0;        // 0: not given (interleaved: 2, others: 1)
  std::vector<std::string> cut_points;
  int data = 1;  // data-parallel replicas of the pipeline (one stage per process)
};

// InvalidArgument naming the flag at fault (an unknown name, --devices or --mesh where
// they do not apply or out of range).
absl::StatusOr<std::shared_ptr<const Strategy>> MakeStrategy(const StrategySpec& spec);

}  // namespace tsr

#endif  // TESSERA_STRATEGIES_STRATEGY_FACTORY_H_

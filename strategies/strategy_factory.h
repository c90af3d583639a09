// Strategies by name, as the `tessera` command's flags give them:
//   one-device                      none (nullptr)
//   mirrored --devices N            MirroredStrategy(N)
//   multi-worker (N processes)      MultiWorkerMirroredStrategy(N)
//   tensor-parallel --devices N     TensorParallelStrategy(N)
//   hybrid --mesh data=D,model=M    HybridStrategy(D, M)
#ifndef TESSERA_STRATEGIES_STRATEGY_FACTORY_H_
#define TESSERA_STRATEGIES_STRATEGY_FACTORY_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "strategies/strategy.h"

namespace tsr {

struct StrategySpec {
  std::string name = "one-device";
  int devices = 1;   // mirrored, tensor-parallel; the process count for multi-worker
  std::string mesh;  // hybrid
};

// InvalidArgument naming the flag at fault (an unknown name, --devices or --mesh where
// they do not apply or out of range).
absl::StatusOr<std::shared_ptr<const Strategy>> MakeStrategy(const StrategySpec& spec);

}  // namespace tsr

#endif  // TESSERA_STRATEGIES_STRATEGY_FACTORY_H_

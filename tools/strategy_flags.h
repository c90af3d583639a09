// The pipeline flags `tessera train` and `tessera compile` share: --stages,
// --microbatches, --pipeline-schedule, --chunks and --cut-points, into a StrategySpec.
#ifndef TESSERA_TOOLS_STRATEGY_FLAGS_H_
#define TESSERA_TOOLS_STRATEGY_FLAGS_H_

#include <cstdint>
#include <string>

#include "strategies/strategy_factory.h"
#include "tools/flag_parser.h"

namespace tsr::cli {

struct PipelineFlags {
  int64_t stages = 0;
  int64_t microbatches = 0;
  std::string schedule;
  int64_t chunks = 0;
  std::string cut_points;  // comma-separated
};

void AddPipelineFlags(FlagParser& flags, PipelineFlags* values);
// Copies the flags into `spec` (MakeStrategy checks them).
void ApplyPipelineFlags(const PipelineFlags& values, StrategySpec& spec);

}  // namespace tsr::cli

#endif  // TESSERA_TOOLS_STRATEGY_FLAGS_H_

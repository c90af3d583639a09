// The shared pipeline flags (see strategy_flags.h).
#include "tools/strategy_flags.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_split.h"

namespace tsr::cli {

void AddPipelineFlags(FlagParser& flags, PipelineFlags* values) {
  flags.AddInt("stages", '\0', "S", &values->stages, "pipeline stages of --strategy pipeline (default 2)");
  flags.AddInt("microbatches", '\0', "M", &values->microbatches,
               "micro-batches per step of --strategy pipeline (default 4)");
  flags.AddString("pipeline-schedule", '\0', "NAME", &values->schedule,
                  "schedule of --strategy pipeline: 1f1b (default), gpipe or interleaved (1F1B over model chunks)");
  flags.AddInt("chunks", '\0', "V", &values->chunks,
               "model chunks per pipeline stage of the interleaved schedule: the model is cut into S x V stages, "
               "chunk c on stage c mod S (default 2)");
  flags.AddString("cut-points", '\0', "OPS", &values->cut_points,
                  "forward ops starting pipeline stages 1..S-1 (S x V - 1 ops with --chunks V), comma-separated "
                  "(default: balanced by FLOPs)");
}

void ApplyPipelineFlags(const PipelineFlags& values, StrategySpec& spec) {
  // Out-of-range values stay out of range (MakeStrategy names the flag).
  spec.stages = static_cast<int>(std::clamp<int64_t>(values.stages, -1, 1 << 20));
  spec.microbatches = static_cast<int>(std::clamp<int64_t>(values.microbatches, -1, 1 << 20));
  spec.schedule = values.schedule;
  spec.chunks = static_cast<int>(std::clamp<int64_t>(values.chunks, -1, 1 << 20));
  spec.cut_points.clear();
  if (!values.cut_points.empty()) {
    spec.cut_points = absl::StrSplit(values.cut_points, ',', absl::SkipEmpty());
  }
}

}  // namespace tsr::cli

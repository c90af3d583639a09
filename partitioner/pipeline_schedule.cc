// Pipeline schedules (see pipeline_schedule.h).
#include "partitioner/pipeline_schedule.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace tsr {

absl::StatusOr<PipelineScheduleKind> ParsePipelineSchedule(absl::string_view name) {
  if (name == "gpipe") return PipelineScheduleKind::kGPipe;
  if (name == "1f1b") return PipelineScheduleKind::kOneForwardOneBackward;
  return absl::InvalidArgumentError(absl::StrCat("pipeline schedule '", name, "': gpipe or 1f1b is required"));
}

std::string PipelineScheduleName(PipelineScheduleKind kind) {
  return kind == PipelineScheduleKind::kGPipe ? "gpipe" : "1f1b";
}

std::vector<std::vector<PipelineTask>> PipelineTasks(PipelineScheduleKind kind, int stages, int microbatches) {
  using Kind = PipelineTask::Kind;
  std::vector<std::vector<PipelineTask>> tasks(stages);
  for (int s = 0; s < stages; ++s) {
    std::vector<PipelineTask>& t = tasks[s];
    if (kind == PipelineScheduleKind::kGPipe) {
      for (int m = 0; m < microbatches; ++m) t.push_back({Kind::kForward, m});
      for (int m = 0; m < microbatches; ++m) t.push_back({Kind::kBackward, m});
      continue;
    }
    const int warmup = std::min(stages - s - 1, microbatches);
    int forward = 0, backward = 0;
    for (; forward < warmup; ++forward) t.push_back({Kind::kForward, forward});
    while (forward < microbatches) {
      t.push_back({Kind::kForward, forward++});
      t.push_back({Kind::kBackward, backward++});
    }
    while (backward < microbatches) t.push_back({Kind::kBackward, backward++});
  }
  return tasks;
}

double PipelineBubbleFraction(int stages, int microbatches) {
  if (stages <= 1 || microbatches <= 0) return 0.0;
  return static_cast<double>(stages - 1) / static_cast<double>(microbatches + stages - 1);
}

int PeakMicrobatchesInFlight(const std::vector<PipelineTask>& tasks) {
  int in_flight = 0, peak = 0;
  for (const PipelineTask& t : tasks) {
    in_flight += t.kind == PipelineTask::Kind::kForward ? 1 : -1;
    peak = std::max(peak, in_flight);
  }
  return peak;
}

std::string TasksToString(const std::vector<PipelineTask>& tasks) {
  std::string text;
  for (const PipelineTask& t : tasks) {
    absl::StrAppend(&text, text.empty() ? "" : " ", t.kind == PipelineTask::Kind::kForward ? "F" : "B", t.microbatch);
  }
  return text;
}

}  // namespace tsr

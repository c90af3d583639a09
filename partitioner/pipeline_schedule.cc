// Pipeline schedules (see pipeline_schedule.h).
#include "partitioner/pipeline_schedule.h"

#include <algorithm>
#include <cstdint>

#include "absl/strings/str_cat.h"

namespace tsr {

absl::StatusOr<PipelineScheduleKind> ParsePipelineSchedule(absl::string_view name) {
  if (name == "gpipe") return PipelineScheduleKind::kGPipe;
  if (name == "1f1b") return PipelineScheduleKind::kOneForwardOneBackward;
  if (name == "interleaved") return PipelineScheduleKind::kInterleaved;
  return absl::InvalidArgumentError(
      absl::StrCat("pipeline schedule '", name, "': gpipe, 1f1b or interleaved is required"));
}

std::string PipelineScheduleName(PipelineScheduleKind kind) {
  switch (kind) {
    case PipelineScheduleKind::kGPipe:
      return "gpipe";
    case PipelineScheduleKind::kOneForwardOneBackward:
      return "1f1b";
    case PipelineScheduleKind::kInterleaved:
      break;
  }
  return "interleaved";
}

absl::Status CheckPipelineChunks(PipelineScheduleKind kind, int chunks) {
  if (chunks < 1 || chunks > 64)
    return absl::InvalidArgumentError(absl::StrCat(chunks, " model chunks per device (1 to 64)"));
  if (chunks > 1 && kind != PipelineScheduleKind::kInterleaved) {
    return absl::InvalidArgumentError(absl::StrCat(
        chunks, " model chunks per device need the interleaved schedule, not ", PipelineScheduleName(kind)));
  }
  return absl::OkStatus();
}

namespace {

using Kind = PipelineTask::Kind;

// `warmup` forwards, then one forward and one backward alternately, then the remaining
// backwards, `total` of each: the k-th forward (backward) is nth(k, true) (nth(k, false)).
template <typename Nth>
std::vector<PipelineTask> OneForwardOneBackward(int total, int warmup, const Nth& nth) {
  std::vector<PipelineTask> order;
  int forward = 0, backward = 0;
  for (; forward < std::min(warmup, total); ++forward) order.push_back(nth(forward, true));
  while (forward < total) {
    order.push_back(nth(forward++, true));
    order.push_back(nth(backward++, false));
  }
  while (backward < total) order.push_back(nth(backward++, false));
  return order;
}

// Device d's tasks under Megatron-LM's interleaved schedule (see the header), over the
// micro-batches [0, microbatches).
std::vector<PipelineTask> InterleavedTasks(int devices, int d, int microbatches, int chunks) {
  const int D = devices, V = chunks;
  const int groups = (microbatches + D - 1) / D;  // of D micro-batches
  // The k-th forward or backward: its micro-batch and stage.
  const auto nth = [&](int k, bool forward) {
    const int in_group = k % (D * V);
    const int chunk = forward ? in_group / D : V - 1 - in_group / D;
    return PipelineTask{forward ? Kind::kForward : Kind::kBackward, (k / (D * V)) * D + k % D, chunk * D + d};
  };
  std::vector<PipelineTask> order = OneForwardOneBackward(V * groups * D, 2 * (D - d - 1) + (V - 1) * D, nth);
  // The next multiple of D's micro-batches beyond `microbatches` are left out: the tasks
  // kept still run in an order every device can follow (dropping tasks adds no waits).
  std::erase_if(order, [&](const PipelineTask& t) { return t.microbatch >= microbatches; });
  return order;
}

}  // namespace

std::vector<std::vector<PipelineTask>> PipelineTasks(PipelineScheduleKind kind, int devices, int microbatches,
                                                     int chunks) {
  std::vector<std::vector<PipelineTask>> tasks(devices);
  for (int d = 0; d < devices; ++d) {
    if (kind == PipelineScheduleKind::kInterleaved && chunks > 1) {
      tasks[d] = InterleavedTasks(devices, d, microbatches, chunks);
    } else if (kind == PipelineScheduleKind::kGPipe) {
      for (int m = 0; m < microbatches; ++m) tasks[d].push_back({Kind::kForward, m, d});
      for (int m = 0; m < microbatches; ++m) tasks[d].push_back({Kind::kBackward, m, d});
    } else {
      // 1F1B (and interleaved over one chunk, which is 1F1B).
      tasks[d] = OneForwardOneBackward(microbatches, devices - d - 1, [d](int k, bool forward) {
        return PipelineTask{forward ? Kind::kForward : Kind::kBackward, k, d};
      });
    }
  }
  return tasks;
}

double PipelineBubbleFraction(int devices, int microbatches, int chunks) {
  if (devices <= 1 || microbatches <= 0) return 0.0;
  return static_cast<double>(devices - 1) /
         static_cast<double>(static_cast<int64_t>(chunks) * microbatches + devices - 1);
}

int PeakMicrobatchesInFlight(const std::vector<PipelineTask>& tasks) {
  int in_flight = 0, peak = 0;
  for (const PipelineTask& t : tasks) {
    in_flight += t.kind == PipelineTask::Kind::kForward ? 1 : -1;
    peak = std::max(peak, in_flight);
  }
  return peak;
}

std::string TasksToString(const std::vector<PipelineTask>& tasks, bool with_stage) {
  std::string text;
  for (const PipelineTask& t : tasks) {
    absl::StrAppend(&text, text.empty() ? "" : " ", t.kind == PipelineTask::Kind::kForward ? "F" : "B", t.microbatch);
    if (with_stage) absl::StrAppend(&text, "@", t.stage);
  }
  return text;
}

}  // namespace tsr

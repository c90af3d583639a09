// Pipeline schedules: in which order each stage of a pipeline runs the forward and
// backward passes of the micro-batches of one training step.
//
//   GPipe  every stage runs the forwards of all M micro-batches, then their backwards
//          (Huang et al. 2019): each stage keeps M micro-batches' activations.
//   1F1B   after S - s - 1 warm-up forwards, stage s alternates one forward and one
//          backward (PipeDream-Flush, Megatron-LM): at most S - s micro-batches'
//          activations at a time, the same bubble.
//
// Both flush at the end of the step (the optimizer runs after every backward), so the
// bubble — the fraction of a stage's time spent idle, with equal stage costs — is
// (S - 1) / (M + S - 1).
#ifndef TESSERA_PARTITIONER_PIPELINE_SCHEDULE_H_
#define TESSERA_PARTITIONER_PIPELINE_SCHEDULE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tsr {

enum class PipelineScheduleKind { kGPipe, kOneForwardOneBackward };

// "gpipe" or "1f1b"; InvalidArgument naming the accepted names otherwise.
absl::StatusOr<PipelineScheduleKind> ParsePipelineSchedule(absl::string_view name);
std::string PipelineScheduleName(PipelineScheduleKind kind);

struct PipelineTask {
  enum class Kind { kForward, kBackward };
  Kind kind;
  int microbatch;
  friend bool operator==(const PipelineTask& a, const PipelineTask& b) {
    return a.kind == b.kind && a.microbatch == b.microbatch;
  }
};

// Each stage's tasks in order (stages x 2M tasks).
std::vector<std::vector<PipelineTask>> PipelineTasks(PipelineScheduleKind kind, int stages, int microbatches);

// (S - 1) / (M + S - 1).
double PipelineBubbleFraction(int stages, int microbatches);

// The most micro-batches whose activations stage `stage` holds at once (forwards run
// whose backward has not).
int PeakMicrobatchesInFlight(const std::vector<PipelineTask>& tasks);

// "F0 F1 B0 B1" — one stage's order, as --explain prints it.
std::string TasksToString(const std::vector<PipelineTask>& tasks);

}  // namespace tsr

#endif  // TESSERA_PARTITIONER_PIPELINE_SCHEDULE_H_

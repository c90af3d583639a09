// Pipeline schedules: in which order each device of a pipeline runs the forward and
// backward passes of the micro-batches of one training step.
//
//   GPipe        every device runs the forwards of all M micro-batches, then their
//                backwards (Huang et al. 2019): each keeps M micro-batches' activations.
//   1F1B         after D - d - 1 warm-up forwards, device d alternates one forward and
//                one backward (PipeDream-Flush, Megatron-LM): at most D - d micro-batches'
//                activations at a time, the same bubble.
//   interleaved  1F1B over V model chunks per device (Megatron-LM's interleaved
//                schedule, Narayanan et al. 2021): the model is cut into D x V stages,
//                stage c on device c mod D, so a micro-batch visits every device V times.
//                Micro-batches go in groups of D: the group's forwards through chunk 0,
//                then through chunk 1, ...; the backwards in the reverse chunk order; after
//                2 (D - d - 1) + (V - 1) D warm-up forwards one forward and one backward
//                alternate. The bubble shrinks V-fold; the price is V times the messages.
//                With M not a multiple of D the order is that of the next multiple, the
//                missing micro-batches' tasks left out.
//
// All flush at the end of the step (the optimizer runs after every backward), so the
// bubble — the fraction of a device's time spent idle, with equal stage costs and free
// transfers — is (D - 1) / (V M + D - 1) (V = 1 but for interleaved).
#ifndef TESSERA_PARTITIONER_PIPELINE_SCHEDULE_H_
#define TESSERA_PARTITIONER_PIPELINE_SCHEDULE_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tsr {

enum class PipelineScheduleKind { kGPipe, kOneForwardOneBackward, kInterleaved };

// "gpipe", "1f1b" or "interleaved"; InvalidArgument naming the accepted names otherwise.
absl::StatusOr<PipelineScheduleKind> ParsePipelineSchedule(absl::string_view name);
std::string PipelineScheduleName(PipelineScheduleKind kind);

struct PipelineTask {
  enum class Kind { kForward, kBackward };
  Kind kind;
  int microbatch;
  int stage = 0;  // the model stage it runs (the device's own but for interleaved: a chunk's)
  friend bool operator==(const PipelineTask& a, const PipelineTask& b) {
    return a.kind == b.kind && a.microbatch == b.microbatch && a.stage == b.stage;
  }
};

// Which chunk counts a schedule takes: 1 for GPipe and 1F1B, any for interleaved.
// InvalidArgument otherwise.
absl::Status CheckPipelineChunks(PipelineScheduleKind kind, int chunks);

// Each device's tasks in order (devices x 2 V M tasks), for `chunks` (V) model stages
// per device (CheckPipelineChunks).
std::vector<std::vector<PipelineTask>> PipelineTasks(PipelineScheduleKind kind, int devices, int microbatches,
                                                     int chunks = 1);

// (D - 1) / (V M + D - 1).
double PipelineBubbleFraction(int devices, int microbatches, int chunks = 1);

// The most forwards whose activations one device holds at once (forwards run whose
// backward has not; with chunks, each a chunk's share of a micro-batch's).
int PeakMicrobatchesInFlight(const std::vector<PipelineTask>& tasks);

// "F0 F1 B0 B1" — one device's order, as --explain prints it; with `with_stage`, each
// task's stage after an '@' ("F0@0 F1@0 F0@2").
std::string TasksToString(const std::vector<PipelineTask>& tasks, bool with_stage = false);

}  // namespace tsr

#endif  // TESSERA_PARTITIONER_PIPELINE_SCHEDULE_H_

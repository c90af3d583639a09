// Pipeline parallelism: the model's layers cut into `stages` consecutive stages, each on
// its own virtual device (or `stages` x `chunks` stages, stage c on device c mod stages,
// under the interleaved schedule); a training step's batch is split into `microbatches`
// micro-batches that flow through the stages in a schedule (GPipe, 1F1B or interleaved
// 1F1B, partitioner/pipeline_schedule.h), their gradients accumulated, and each stage's
// optimizer updates applied once at the end of the step — so the weights are those of
// one device training on the global batch. Stages are balanced by forward FLOPs, or
// start at the given cut points (partitioner/pipeline_stages.h).
//
// `PipelineStep` runs such a plan: in-process, one thread per device, whose calls run
// compiled (a program per call and micro-batch size) or on an interpreter Session
// (pipeline_stage_runner.h); activations and gradients are handed between stages per
// micro-batch (a stage waits for what it needs, with a timeout naming the stage,
// micro-batch and tensor) -- or one device per process of a job, handed over by the
// job's communicator. It returns the fetches one device would: batch-major ones
// concatenated over the micro-batches, scalar ones (the mean loss) weighted by the
// micro-batches' shares.
#ifndef TESSERA_STRATEGIES_PIPELINE_H_
#define TESSERA_STRATEGIES_PIPELINE_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "runtime/collectives/collective_groups.h"
#include "runtime/trainer/step_program.h"
#include "strategies/strategy.h"

namespace tsr {

class PipelineStrategy : public Strategy {
 public:
  explicit PipelineStrategy(PipelinePlan plan) : plan_(std::move(plan)) {}
  std::string name() const override;  // "pipeline(2 stages, 4 micro-batches, 1f1b)"
  absl::StatusOr<StrategyPlan> Plan(const Graph& graph) const override;

 private:
  PipelinePlan plan_;
};

struct PipelineStepOptions {
  int threads_per_stage = 1;
  // Compiles each stage's calls (pipeline_stage_runner.h); null: the interpreter. When a
  // stage does not compile, the whole pipeline runs interpreted and its Summary says why.
  StepCompiler stage_compiler;
  absl::Duration timeout = absl::Minutes(5);  // how long a stage waits for another's tensor
  // Several processes (`tessera launch`, mpirun; one pipeline device per process): this
  // process is device `pipe_rank` and runs only its stages (stage pipe_rank, and with
  // chunks every `stages`-th after it). The communicator of `process_groups` over {"pipe"}
  // (rank = device) carries what the stages hand each other: each step posts its Recvs
  // first, in the order the other stages will Send (both sides follow the schedule), so
  // a stage never waits for a transfer it posted late; the fetches are broadcast from
  // the stage computing them and a Variable from the first stage holding it -- so every
  // process reads the same Variables in the same order. Its waits time out as the
  // communicator's do. With data replicas (PipelinePlan::data), the communicator over
  // {"data"} (rank = replica) joins the processes running this stage for the other
  // replicas: each replica takes its rows of the batch, the stage's gradients are summed
  // over it before the update, and the fetches combined (the mean loss summed from the
  // replicas' shares, batch-major ones gathered). -1: every stage runs in this process,
  // one thread each (one replica).
  int pipe_rank = -1;
  std::shared_ptr<CollectiveGroups> process_groups;
};

// The pipelined step of `spec` (its graph, fetches and update targets).
absl::StatusOr<std::unique_ptr<StepProgram>> MakePipelineStep(const PipelinePlan& plan, const StepProgramSpec& spec,
                                                              const PipelineStepOptions& options = {});

// What a pipelined step measured in its last run, for tests and reports.
struct PipelineRunStats {
  int microbatches = 0;
  // The most bytes of activations and gradients held for later tasks at once, per stage
  // that produced them (1F1B holds fewer micro-batches' than GPipe).
  std::vector<int64_t> peak_held_bytes;
};
// `program` must come from MakePipelineStep.
PipelineRunStats LastPipelineRunStats(const StepProgram& program);

}  // namespace tsr

#endif  // TESSERA_STRATEGIES_PIPELINE_H_

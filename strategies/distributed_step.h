// `PartitionedStepCompiler`: the Trainer's steps (runtime/trainer/step_program.h) under a
// strategy. Each step (the training step for a batch size, the evaluation forward) is
// partitioned by the strategy's annotations (partitioner/spmd_partitioner.h) into one
// program per device of its mesh; the devices are virtual CPU devices of this process
// (cpu:0..N-1, in-process collectives), each running its program on its own threads —
// compiled by `device_compiler` (compiler/pipeline/compiled_step.h) or, without one, on
// the interpreter. A run feeds each device its share of the batch and returns device 0's
// fetches, which the partitioner made replicated (the loss is all-reduced, the logits
// gathered): the Trainer sees one device training on the global batch. With several
// processes, each runs its own device on its share of the same global batch.
//
//   options.step_compiler = PartitionedStepCompiler(std::make_shared<MirroredStrategy>(2),
//                                                   {.device_compiler = CompiledStepCompiler()});
#ifndef TESSERA_STRATEGIES_DISTRIBUTED_STEP_H_
#define TESSERA_STRATEGIES_DISTRIBUTED_STEP_H_

#include <functional>
#include <memory>
#include <vector>

#include "runtime/collectives/collective_groups.h"
#include "runtime/collectives/collectives.h"
#include "runtime/trainer/step_program.h"
#include "strategies/strategy.h"

namespace tsr {

// The communicators of this process's device for a mesh (its axes in mesh order); called
// with the mesh of each step partitioned, so a maker that joins them caches them per mesh.
using MeshGroupsMaker =
    std::function<absl::StatusOr<std::shared_ptr<CollectiveGroups>>(const std::vector<MeshAxisSize>& mesh)>;

struct PartitionedStepOptions {
  // Makes each device's program from its partitioned graph; null: the interpreter.
  StepCompiler device_compiler;
  int threads_per_device = 1;
  CollectivesOptions collectives;  // how long a device waits for the others
  // Several processes (`tessera launch` or mpirun; one device per process): this process
  // runs only device `process_device` of the plan's mesh, whose communicators (spanning
  // the processes: MPI, Gloo) `process_groups` gives for that mesh. -1: every device runs
  // here, on in-process communicators.
  int process_device = -1;
  MeshGroupsMaker process_groups;
};

StepCompiler PartitionedStepCompiler(std::shared_ptr<const Strategy> strategy, PartitionedStepOptions options = {});

}  // namespace tsr

#endif  // TESSERA_STRATEGIES_DISTRIBUTED_STEP_H_

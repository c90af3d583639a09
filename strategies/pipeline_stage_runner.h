// How one pipeline stage (partitioner/pipeline_stages.h) runs its three kinds of calls —
// forward(m), backward(m) and the update — for the pipelined step (pipeline.h):
//
//   InterpretPipelineStage  one interpreter Session on the stage's graph; each call fetches
//                           its tensors (or runs its targets) by name.
//   CompilePipelineStage    one compiled program per call and micro-batch size, made by the
//                           Trainer's StepCompiler (compiler/pipeline/compiled_step.h) from
//                           the part of the stage's graph that call runs (PipelineCallGraph).
//
// The compiled programs each hold their own copy of the stage's Variables. Only the update
// writes Variables (the split puts every optimizer update there), so after an update the
// forward and backward programs take its new values before their next call — a copy of
// the stage's weights per program and step, what keeping the programs independent costs.
#ifndef TESSERA_STRATEGIES_PIPELINE_STAGE_RUNNER_H_
#define TESSERA_STRATEGIES_PIPELINE_STAGE_RUNNER_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/graph.h"
#include "graph/tensor.h"
#include "partitioner/pipeline_stages.h"
#include "runtime/trainer/step_program.h"

namespace tsr {

enum class PipelineCall { kForward, kBackward, kUpdate };

class PipelineStageRunner {
 public:
  virtual ~PipelineStageRunner() = default;

  // One call on `feeds` (by Placeholder name; others are ignored): forward and backward
  // on a micro-batch of `rows` rows return the stage's forward_fetches / backward_fetches
  // in order; the update runs its update_targets and returns nothing.
  virtual absl::StatusOr<std::vector<Tensor>> Run(PipelineCall call, int64_t rows, const Batch& feeds,
                                                  uint64_t step) = 0;
  virtual absl::StatusOr<Tensor> ReadVariable(absl::string_view name) = 0;
  virtual absl::Status AssignVariable(absl::string_view name, const Tensor& value) = 0;
  // "interpreted", or the compiled programs' summary.
  virtual std::string Summary() const = 0;
};

// The stage's graph in one Session with `threads` workers, its Variables set from
// `variable_values` where it holds them.
absl::StatusOr<std::unique_ptr<PipelineStageRunner>> InterpretPipelineStage(
    const PipelineStageProgram& stage, int threads, uint64_t seed,
    const std::map<std::string, Tensor>& variable_values);

// Compiles the stage's forward and backward calls for each micro-batch size in
// `microbatch_rows` and its update (where the stage has them) with `compiler`; a size
// not compiled here is compiled at its first call. The first failure is returned, naming
// the call.
absl::StatusOr<std::unique_ptr<PipelineStageRunner>> CompilePipelineStage(
    const PipelineStageProgram& stage, const std::vector<int64_t>& microbatch_rows, StepCompiler compiler, int threads,
    uint64_t seed, const std::map<std::string, Tensor>& variable_values);

// The part of `graph` that computes the tensors `fetches` (tensor names) and runs the
// nodes `targets`, with its Placeholders as the signature inputs (named as the nodes) and
// the fetches as the signature outputs (named as the tensors): what a compiled program of
// one call takes. Types are copied, not inferred again.
absl::StatusOr<Graph> PipelineCallGraph(const Graph& graph, const std::vector<std::string>& fetches,
                                        const std::vector<std::string>& targets);

}  // namespace tsr

#endif  // TESSERA_STRATEGIES_PIPELINE_STAGE_RUNNER_H_

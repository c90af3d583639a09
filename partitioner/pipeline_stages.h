// `SplitPipelineStages`: a training step's graph (forward, backward, optimizer updates)
// cut into pipeline stages, each a graph of its own that runs in three kinds of calls:
//
//   forward(m)   the stage's forward ops on micro-batch m: reads the micro-batch's rows of
//                the data inputs and the activations earlier stages sent; returns the
//                activations later stages need, the tensors its own and other stages'
//                backward will read ("stashed"), and the step's fetches computed here;
//   backward(m)  the stage's gradient ops on micro-batch m: reads the stashed tensors and
//                the gradients later stages sent; returns the gradients earlier stages
//                need and the gradients the optimizer reads;
//   update       the optimizer updates of the stage's Variables, reading the gradients
//                accumulated over the micro-batches (weighted by their share of the batch),
//                and what the optimizer computes from them (a global norm for clipping).
//
// The backward ops are autodiff's (graph/autodiff/gradients.h names them "gradients/...");
// being linear in the loss, their sums over the micro-batches are the batch's.
//
// Those calls meet at Placeholders named "pipeline/<kind>/<tensor>" (PipelineTransfer).
// Stages are contiguous in the forward order: each forward node is on the latest stage of
// its inputs or later; the cut points (forward nodes that start stages 1..S-1) are given,
// or chosen so that the stages' forward FLOPs are balanced. A gradient op is on the stage
// of the forward op it differentiates (autodiff names it "gradients/<forward op>/..."),
// else on its gradient inputs' or consumers' stage; gradients only flow to earlier
// stages. A Variable lives on the stage that uses it (one only: shared weights cannot be
// cut apart yet); optimizer state used by updates only (slots, Adam's step) lives with
// its updates, replicated where several stages read it.
//
// Not supported (clear errors): Variables used by several stages, optimizer inputs that
// depend on the batch other than gradients (BatchNorm's running statistics), and
// dynamic shapes other than the batch.
#ifndef TESSERA_PARTITIONER_PIPELINE_STAGES_H_
#define TESSERA_PARTITIONER_PIPELINE_STAGES_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/graph.h"

namespace tsr {

struct PipelineSplitOptions {
  int stages = 2;
  // Forward nodes starting stages 1..stages-1, in order; empty: balanced by FLOPs.
  std::vector<std::string> cut_points;
  std::vector<std::string> fetches;  // signature outputs the step returns (the loss, the logits)
  std::vector<std::string> targets;  // the optimizer updates (node names)
};

struct PipelineTransfer {
  enum class Kind {
    kActivation,   // forward -> a later stage's forward
    kStash,        // forward -> a backward (of this stage or another)
    kGradient,     // backward -> an earlier stage's backward
    kAccumulated,  // backward -> update, summed over the micro-batches
  };
  Kind kind;
  std::string tensor;  // the tensor's name in the step's graph (and in its stage's graph)
  std::string feed;    // the Placeholder it is fed to in the consumer's graph
  int from = 0;        // producing stage
  int to = 0;          // consuming stage
};

struct PipelineStageProgram {
  Graph graph;
  std::vector<std::string> forward_fetches;   // tensor names a forward call returns
  std::vector<std::string> backward_fetches;  // tensor names a backward call returns
  std::vector<std::string> update_targets;    // node names an update call runs
  std::vector<std::string> data_inputs;       // Placeholders fed from the step's own feeds
  int64_t forward_flops = 0;                  // per example
  int forward_ops = 0;
  int backward_ops = 0;
  int update_ops = 0;
};

struct PipelineProgram {
  std::vector<PipelineStageProgram> stages;
  std::vector<PipelineTransfer> transfers;
  // Each fetched signature output: the stage computing it and the tensor's name there.
  std::map<std::string, std::pair<int, std::string>> fetches;
  // The stages holding each Variable (one, or several for replicated optimizer state).
  std::map<std::string, std::vector<int>> variable_stages;

  // Per stage: its ops, FLOPs, Variables' bytes and what it sends where.
  std::string Explain() const;
};

absl::StatusOr<PipelineProgram> SplitPipelineStages(const Graph& graph, const PipelineSplitOptions& options);

}  // namespace tsr

#endif  // TESSERA_PARTITIONER_PIPELINE_STAGES_H_

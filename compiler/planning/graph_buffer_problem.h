// The buffer-planning problem of a whole Graph run once in topological order: one value
// per node output, sized from its inferred type with the batch bound, so that the peak
// bytes of a model (inference or training graph) are known before anything runs.
//
// Step i is the i-th node of Graph::TopologicalOrder(). Placeholders, Constants,
// Variables and the signature's outputs live outside the arena; everything else is a
// temporary. The output of a unary or binary elementwise op, or of a Reshape-like op (the
// list in the .cc), may take over the buffer of an input of the same dtype and byte size
// in place. What this leaves out: Identity is planned as a copy, and values no node reads
// stay planned for their defining step.
#ifndef TESSERA_COMPILER_PLANNING_GRAPH_BUFFER_PROBLEM_H_
#define TESSERA_COMPILER_PLANNING_GRAPH_BUFFER_PROBLEM_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/planning/buffer_plan.h"
#include "graph/graph.h"

namespace tsr {

struct GraphBufferProblem {
  BufferProblem problem;
  std::vector<TensorRef> tensors;  // per value: the node output it stands for
  std::vector<const Node*> steps;  // per step: the node it runs
  int64_t external_bytes = 0;      // bytes of the values that live outside the arena
};

// Whether `op`'s output 0 may overwrite an input of the same dtype and size.
bool IsInPlaceOp(absl::string_view op);

// `batch` binds the symbolic batch dimension (ignored when there is none). Errors name
// the node whose output has no inferred type or whose size is out of range.
absl::StatusOr<GraphBufferProblem> BuildGraphBufferProblem(const Graph& graph, int64_t batch);

}  // namespace tsr

#endif  // TESSERA_COMPILER_PLANNING_GRAPH_BUFFER_PROBLEM_H_

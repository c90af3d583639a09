// PlanExecutableBuffers (see executable_plan.h).
#include "compiler/pipeline/executable_plan.h"

#include "compiler/planning/buffer_plan.h"
#include "compiler/planning/graph_buffer_problem.h"
#include "graph/status_macros.h"

namespace tsr {

absl::Status PlanExecutableBuffers(Executable& e, int64_t* lower_bound) {
  for (ExecutableValue& v : e.values) {
    v.offset = -1;
    v.reused_from = -1;
  }
  TSR_ASSIGN_OR_RETURN(ExecutableBufferPlan implied, BufferPlanOf(e));
  BufferProblem& problem = implied.problem;
  for (const ExecutableStep& step : e.steps) {
    if (step.kind != ExecutableStep::Kind::kKernel || step.outputs.empty() || !IsInPlaceOp(step.name)) {
      continue;
    }
    const int out = step.outputs[0];
    if (e.values[out].location != ValueLocation::kArena) continue;
    for (int in : step.inputs) {
      if (in < 0 || e.values[in].location != ValueLocation::kArena || e.values[in].dtype != e.values[out].dtype ||
          e.values[in].size_bytes() != e.values[out].size_bytes()) {
        continue;
      }
      problem.values[out].inplace_candidates.push_back(in);
    }
  }
  TSR_ASSIGN_OR_RETURN(BufferPlan plan, PlanBuffers(problem));
  for (size_t i = 0; i < e.values.size(); ++i) {
    if (e.values[i].location != ValueLocation::kArena) continue;
    e.values[i].offset = plan.offsets[i];
    e.values[i].reused_from = plan.reused_from[i];
  }
  e.arena_bytes = plan.arena_bytes;
  if (lower_bound != nullptr) *lower_bound = LiveBytesLowerBound(problem);
  return absl::OkStatus();
}

}  // namespace tsr

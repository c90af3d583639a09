// Static buffer planning of an executable's temporaries (compile_graph.h, end of step 5).
// No MLIR here.
#ifndef TESSERA_COMPILER_PIPELINE_EXECUTABLE_PLAN_H_
#define TESSERA_COMPILER_PIPELINE_EXECUTABLE_PLAN_H_

#include <cstdint>

#include "absl/status/status.h"
#include "compiler/executable/executable.h"

namespace tsr {

// Places every arena value of `executable` (offsets and reused_from are overwritten) with
// PlanBuffers over the lifetimes its steps imply (BufferPlanOf), letting the output of an
// in-place kernel step (IsInPlaceOp: elementwise and Reshape-like) take over the buffer
// of an input of the same dtype and byte size that dies at that step; sets arena_bytes.
// With `lower_bound`, also stores LiveBytesLowerBound of the problem.
absl::Status PlanExecutableBuffers(Executable& executable, int64_t* lower_bound = nullptr);

}  // namespace tsr

#endif  // TESSERA_COMPILER_PIPELINE_EXECUTABLE_PLAN_H_

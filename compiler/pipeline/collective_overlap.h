// Step order for overlapping all-reduces (compile_graph.h, after the steps are built and
// before buffer planning). The compiled runtime issues an AllReduce step and runs the
// next steps while it is in flight, waiting only at the first step that touches its
// buffer (CompiledProgram's overlap_collectives). In the order the graph gives, a
// gradient bucket's unpacking and its optimizer updates follow the all-reduce at once,
// so nothing overlapped it; this order runs everything that does not need an
// all-reduce's result first and what does last.
#ifndef TESSERA_COMPILER_PIPELINE_COLLECTIVE_OVERLAP_H_
#define TESSERA_COMPILER_PIPELINE_COLLECTIVE_OVERLAP_H_

#include "compiler/executable/executable.h"

namespace tsr {

// Reorders e.steps (a valid order: every value written before it is read) into a list
// schedule that takes, of the steps whose inputs are ready, the first in the old order
// among those that depend on no AllReduce's result (directly or through other steps),
// and only when there is none the first of the others. Kept: every value written before
// its readers; a variable written only after every step that reads its old value;
// collectives (OpDef::collective) in their old order, so every device of an SPMD
// program still issues them alike. Offsets must not be planned yet (they depend on the
// order). Deterministic.
void OrderStepsForCollectiveOverlap(Executable& e);

}  // namespace tsr

#endif  // TESSERA_COMPILER_PIPELINE_COLLECTIVE_OVERLAP_H_

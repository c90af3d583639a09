// From `func.func @main` after the optimization stages (tsr ops, tsr.Constant, func.call of
// outlined fusions, func.return) to the executable's values, steps, constants and signature
// (compile_graph.h, step 5 before buffer planning). MLIR-level header (compiler/ only).
#ifndef TESSERA_COMPILER_PIPELINE_EXECUTABLE_BUILDER_H_
#define TESSERA_COMPILER_PIPELINE_EXECUTABLE_BUILDER_H_

#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "compiler/executable/executable.h"
#include "graph/tensor.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace tsr {

// Values: @main's arguments are inputs (named by their `tsr.name`), tsr.Constant results
// constants (their bytes copied), every other result an arena temporary — or an output when
// @main returns it. A returned input or constant, or a value returned a second time, is
// copied into its output by an Identity step. Steps: one per op, in order; a func.call is a
// function step of its callee, any other tsr op a kernel step with the attributes its OpDef
// declares (absent optional operands are -1). Offsets are left unset (-1): plan them with
// PlanExecutableBuffers. A tsr.Variable left in @main (a training program) is a variable
// value with its initial value (freeze_variables.h's VariableValue, from `variable_values`);
// an optimizer update op writes its new values into the variables it updates in place
// where no later step reads them (old or new), else into temporaries that Identity steps
// commit after every other step. Errors name the op: non-tsr ops, unregistered
// ops, a Variable updated twice, non-static or unsupported types.
absl::StatusOr<Executable> BuildExecutableSteps(mlir::func::FuncOp main,
                                                const std::map<std::string, Tensor>& variable_values = {});

}  // namespace tsr

#endif  // TESSERA_COMPILER_PIPELINE_EXECUTABLE_BUILDER_H_

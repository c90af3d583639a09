// Freezing the Variables of an imported graph into constants, so that an inference program
// compiles with its weights known (constant folding, BatchNorm folding, weights prepared at
// load time). MLIR-level header (compiler/ only).
#ifndef TESSERA_COMPILER_PIPELINE_FREEZE_VARIABLES_H_
#define TESSERA_COMPILER_PIPELINE_FREEZE_VARIABLES_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "graph/tensor.h"
#include "mlir/IR/BuiltinAttributeInterfaces.h"
#include "mlir/IR/BuiltinOps.h"

namespace tsr {

// Replaces every tsr.Variable of `module` by a tsr.Constant holding its value: the `value`
// attribute it carries (a model saved after training), else `values[name]` by node name.
// Errors name the Variable: no value, or a value of another type than the Variable's.
absl::Status FreezeVariables(mlir::ModuleOp module, const std::map<std::string, Tensor>& values);

// The initial value of a tsr.Variable op: its `value` attribute, else `values[name]`; errors
// as FreezeVariables'.
absl::StatusOr<mlir::ElementsAttr> VariableValue(mlir::Operation* variable,
                                                const std::map<std::string, Tensor>& values);

// Training programs: erases every optimizer update op (an op whose OpDef updates
// Variables) whose results nothing reads and whose graph node is not one of `targets`, as
// Session::Run skips the nodes neither fetched nor targeted.
void DropUntargetedUpdates(mlir::ModuleOp module, const std::vector<std::string>& targets);

}  // namespace tsr

#endif  // TESSERA_COMPILER_PIPELINE_FREEZE_VARIABLES_H_

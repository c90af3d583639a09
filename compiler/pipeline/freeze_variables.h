// Freezing the Variables of an imported graph into constants, so that an inference program
// compiles with its weights known (constant folding, BatchNorm folding, weights prepared at
// load time). MLIR-level header (compiler/ only).
#ifndef TESSERA_COMPILER_PIPELINE_FREEZE_VARIABLES_H_
#define TESSERA_COMPILER_PIPELINE_FREEZE_VARIABLES_H_

#include <map>
#include <string>

#include "absl/status/status.h"
#include "graph/tensor.h"
#include "mlir/IR/BuiltinOps.h"

namespace tsr {

// Replaces every tsr.Variable of `module` by a tsr.Constant holding its value: the `value`
// attribute it carries (a model saved after training), else `values[name]` by node name.
// Errors name the Variable: no value, or a value of another type than the Variable's.
absl::Status FreezeVariables(mlir::ModuleOp module, const std::map<std::string, Tensor>& values);

}  // namespace tsr

#endif  // TESSERA_COMPILER_PIPELINE_FREEZE_VARIABLES_H_

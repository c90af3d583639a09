// What tessera-opt registers: the dialects Tessera's IR uses and every Tessera pass. Pass
// libraries (compiler/transforms, compiler/codegen) add their registration call to
// RegisterTesseraPasses() in tessera_opt_registration.cc and their library to the
// tessera_opt_registration target; each pass is then reachable as `tessera-opt --<pass>`.
#ifndef TESSERA_TOOLS_TESSERA_OPT_TESSERA_OPT_REGISTRATION_H_
#define TESSERA_TOOLS_TESSERA_OPT_TESSERA_OPT_REGISTRATION_H_

#include "mlir/IR/DialectRegistry.h"

namespace tsr {

// tsr, func, and the upstream dialects Tessera's pipelines produce.
void RegisterTesseraDialects(mlir::DialectRegistry& registry);

// Tessera's passes, plus the upstream canonicalize and cse.
void RegisterTesseraPasses();

}  // namespace tsr

#endif  // TESSERA_TOOLS_TESSERA_OPT_TESSERA_OPT_REGISTRATION_H_

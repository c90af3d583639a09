// Dialect and pass registration of tessera-opt (see tessera_opt_registration.h).
#include "tools/tessera_opt/tessera_opt_registration.h"

#include "compiler/conversion/graph_tsr.h"
#include "mlir/Transforms/Passes.h"

namespace tsr {

void RegisterTesseraDialects(mlir::DialectRegistry& registry) { RegisterGraphDialects(registry); }

void RegisterTesseraPasses() {
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  // Tessera pass libraries register here.
}

}  // namespace tsr

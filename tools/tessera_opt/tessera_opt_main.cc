// tessera-opt: mlir-opt for Tessera's IR — parses a module, runs the passes named on the
// command line, prints the result. Used by the lit tests in tests/lit/.
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "tools/tessera_opt/tessera_opt_registration.h"

int main(int argc, char** argv) {
  mlir::DialectRegistry registry;
  tsr::RegisterTesseraDialects(registry);
  tsr::RegisterTesseraPasses();
  return mlir::asMainReturnCode(mlir::MlirOptMain(argc, argv, "Tessera optimizer driver\n", registry));
}

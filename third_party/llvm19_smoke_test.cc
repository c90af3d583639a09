// Checks that @llvm19//:mlir gives compiler/ working MLIR headers and libraries under Bazel:
// parses a small function, verifies it and prints it back.
#include <string>

#include "llvm/Support/raw_ostream.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

int main() {
  mlir::MLIRContext context;
  context.loadDialect<mlir::func::FuncDialect, mlir::arith::ArithDialect>();
  const char* kSource = R"mlir(
    func.func @add(%a: f32, %b: f32) -> f32 {
      %0 = arith.addf %a, %b : f32
      return %0 : f32
    })mlir";
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::parseSourceString<mlir::ModuleOp>(kSource, &context);
  if (!module || mlir::failed(mlir::verify(*module))) {
    llvm::errs() << "llvm19_smoke_test: the module did not parse or verify\n";
    return 1;
  }
  std::string printed;
  llvm::raw_string_ostream os(printed);
  module->print(os);
  if (printed.find("arith.addf") == std::string::npos) {
    llvm::errs() << "llvm19_smoke_test: printed module lacks arith.addf:\n" << printed;
    return 1;
  }
  return 0;
}

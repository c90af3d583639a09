// GraphToTsrText / TsrTextToGraph: the MLIR-free entry points (graph_tsr_text.h), each with its
// own MLIRContext.
#include "compiler/conversion/graph_tsr_text.h"

#include <string>

#include "compiler/conversion/graph_tsr.h"
#include "compiler/conversion/mlir_diagnostics.h"
#include "graph/status_macros.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Parser/Parser.h"

namespace tsr {
namespace {

mlir::DialectRegistry Dialects() {
  mlir::DialectRegistry registry;
  RegisterGraphDialects(registry);
  return registry;
}

}  // namespace

absl::StatusOr<std::string> GraphToTsrText(const Graph& graph) {
  mlir::MLIRContext context(Dialects(), mlir::MLIRContext::Threading::DISABLED);
  TSR_ASSIGN_OR_RETURN(mlir::OwningOpRef<mlir::ModuleOp> module, ImportGraph(context, graph));
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os, mlir::OpPrintingFlags().enableDebugInfo(/*enable=*/true, /*prettyForm=*/false));
  return text;
}

absl::StatusOr<Graph> TsrTextToGraph(absl::string_view text) {
  mlir::MLIRContext context(Dialects(), mlir::MLIRContext::Threading::DISABLED);
  context.loadAllAvailableDialects();
  DiagnosticCollector diagnostics(context);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(llvm::StringRef(text.data(), text.size()), &context);
  if (!module) return diagnostics.Error("the tsr module does not parse or verify");
  return ExportGraph(*module);
}

}  // namespace tsr

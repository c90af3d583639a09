// Graph <-> tsr dialect conversion at the MLIR level, for passes and tools.
//
// A graph becomes `func.func @main`: Placeholder nodes are the arguments (signature name in the
// argument attribute `tsr.name`, node name as the argument's NameLoc), every other node is one
// tsr op named by its NameLoc, and the signature outputs are the returned values (names in the
// result attribute `tsr.name`). Constants are tsr.Constant ops with dense elements; Variables
// and optimizer updates are their registry ops (optimizer ops return the new variable values,
// as in the graph: nothing is written in place).
#ifndef TESSERA_COMPILER_CONVERSION_GRAPH_TSR_H_
#define TESSERA_COMPILER_CONVERSION_GRAPH_TSR_H_

#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

namespace tsr {

// The dialects a converted module uses: tsr and func.
void RegisterGraphDialects(mlir::DialectRegistry& registry);

// The graph's nodes must have inferred types. The module is verified before it is returned.
absl::StatusOr<mlir::OwningOpRef<mlir::ModuleOp>> ImportGraph(mlir::MLIRContext& context, const Graph& graph);

// The inverse of ImportGraph for a module whose @main (or only function) holds tsr ops. Ops
// without a NameLoc (created by passes) get unique names from their op. Result types are
// re-inferred by the registry and must match the module's.
absl::StatusOr<Graph> ExportGraph(mlir::ModuleOp module);

}  // namespace tsr

#endif  // TESSERA_COMPILER_CONVERSION_GRAPH_TSR_H_

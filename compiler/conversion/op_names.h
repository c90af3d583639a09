// How the conversion and the compile driver name MLIR ops in messages and recover graph node
// names from locations. MLIR-level header (compiler/ only).
#ifndef TESSERA_COMPILER_CONVERSION_OP_NAMES_H_
#define TESSERA_COMPILER_CONVERSION_OP_NAMES_H_

#include <optional>
#include <string>

#include "llvm/Support/raw_ostream.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/Operation.h"

namespace tsr {

// "'tsr.Add' at loc("name")", for error messages.
inline std::string DescribeOp(mlir::Operation* op) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "'" << op->getName() << "' at " << op->getLoc();
  return s;
}

// The graph node name a location carries: a NameLoc, or the first one inside a FusedLoc
// (ops merged by passes) or a CallSiteLoc.
inline std::optional<std::string> NodeNameOf(mlir::Location loc) {
  if (auto name = llvm::dyn_cast<mlir::NameLoc>(loc)) return name.getName().str();
  if (auto fused = llvm::dyn_cast<mlir::FusedLoc>(loc)) {
    for (mlir::Location part : fused.getLocations()) {
      if (std::optional<std::string> name = NodeNameOf(part)) return name;
    }
  }
  if (auto call = llvm::dyn_cast<mlir::CallSiteLoc>(loc)) return NodeNameOf(call.getCallee());
  return std::nullopt;
}

}  // namespace tsr

#endif  // TESSERA_COMPILER_CONVERSION_OP_NAMES_H_

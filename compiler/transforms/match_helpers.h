// Small matchers on tsr ops shared by the passes that recognize chains of graph ops
// (tsr-fuse-attention, tsr-fuse-layernorm). MLIR-level header.
#ifndef TESSERA_COMPILER_TRANSFORMS_MATCH_HELPERS_H_
#define TESSERA_COMPILER_TRANSFORMS_MATCH_HELPERS_H_

#include "compiler/dialect/tsr_dialect.h"
#include "llvm/ADT/StringRef.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"

namespace tsr::match {

inline bool Is(mlir::Operation* op, llvm::StringRef name) {
  return op != nullptr && op->getName().getStringRef() == name;
}

inline mlir::RankedTensorType TypeOf(mlir::Value v) { return llvm::dyn_cast<mlir::RankedTensorType>(v.getType()); }

// The op that defines `v` when it is a `name` op whose result `v` has no other use (and that
// no sharding annotation pins).
inline mlir::Operation* SingleUseProducer(mlir::Value v, llvm::StringRef name) {
  mlir::Operation* op = v.getDefiningOp();
  if (!Is(op, name) || !v.hasOneUse() || op->hasAttr(mlir::tsr::kShardingAttrName)) return nullptr;
  return op;
}

// The only user of `op`'s only result when it is a `name` op (not pinned by a sharding).
inline mlir::Operation* SingleUser(mlir::Operation* op, llvm::StringRef name) {
  if (op->getNumResults() != 1 || !op->getResult(0).hasOneUse()) return nullptr;
  mlir::Operation* user = *op->getResult(0).getUsers().begin();
  return Is(user, name) && !user->hasAttr(mlir::tsr::kShardingAttrName) ? user : nullptr;
}

}  // namespace tsr::match

#endif  // TESSERA_COMPILER_TRANSFORMS_MATCH_HELPERS_H_

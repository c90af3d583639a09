// The classification of tsr ops for region fusion (see fusible_ops.h).
#include "compiler/transforms/fusible_ops.h"

#include "compiler/dialect/tsr_dialect.h"
#include "llvm/ADT/StringSet.h"
#include "mlir/IR/BuiltinTypes.h"

namespace tsr {
namespace {

bool IsStaticF32(mlir::Type type) {
  auto tensor = llvm::dyn_cast<mlir::RankedTensorType>(type);
  return tensor && tensor.hasStaticShape() && tensor.getElementType().isF32();
}

bool IsStaticOf(mlir::Type type, bool (*element)(mlir::Type)) {
  auto tensor = llvm::dyn_cast<mlir::RankedTensorType>(type);
  return tensor && tensor.hasStaticShape() && element(tensor.getElementType());
}

bool IsConstant(mlir::Value value) { return value && value.getDefiningOp<mlir::tsr::ConstantOp>(); }

const llvm::StringSet<>& BinaryOps() {
  static const auto* ops = new llvm::StringSet<>({"Add", "Sub", "Mul", "Div", "Max", "Min", "Pow"});
  return *ops;
}

const llvm::StringSet<>& UnaryOps() {
  static const auto* ops =
      new llvm::StringSet<>({"Neg",     "Abs",  "Exp",  "Log",   "Sqrt", "Rsqrt",    "Reciprocal",  "Tanh",
                             "Sigmoid", "Relu", "Erf",  "Gelu",  "Silu", "Softplus", "HardSigmoid", "HardSwish",
                             "Elu",     "Selu", "Celu", "Floor", "Ceil", "Sign",     "LeakyRelu"});
  return *ops;
}

const llvm::StringSet<>& ReduceOps() {
  static const auto* ops =
      new llvm::StringSet<>({"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceSumSquare"});
  return *ops;
}

// Unary ops cheap enough to recompute (no exp/log/erf/tanh/division).
const llvm::StringSet<>& CheapUnaryOps() {
  static const auto* ops = new llvm::StringSet<>(
      {"Neg", "Abs", "Relu", "LeakyRelu", "Clip", "Floor", "Ceil", "Sign", "Identity", "Cast", "Reshape", "Expand"});
  return *ops;
}

bool AllOperandsStaticF32(mlir::Operation* op) { return llvm::all_of(op->getOperandTypes(), IsStaticF32); }

FusibleClass ClassifyReduction(mlir::Operation* op, llvm::StringRef name) {
  if (!IsStaticF32(op->getOperand(0).getType()) || !IsStaticF32(op->getResult(0).getType())) {
    return FusibleClass::kNotFusible;
  }
  if (ReduceOps().contains(name)) {
    // Axes must be known to the outliner: absent (all axes) or a constant.
    if (op->getNumOperands() > 2) return FusibleClass::kNotFusible;
    const bool has_axes = op->getNumOperands() == 2;
    if (has_axes && !IsConstant(op->getOperand(1))) return FusibleClass::kNotFusible;
    // An empty axes list with noop_with_empty_axes = 1 is an identity: not a reduction to fuse.
    auto noop = op->getAttrOfType<mlir::IntegerAttr>("noop_with_empty_axes");
    if (noop && noop.getInt() != 0) return FusibleClass::kNotFusible;
    return FusibleClass::kReduction;
  }
  if (name == "Softmax" || name == "LogSoftmax") return FusibleClass::kReduction;
  if (name == "LayerNormalization") {
    // Mean and InvStdDev (results 1 and 2) are the training form's: such a LayerNormalization stays
    // a library kernel.
    if (!op->getResult(1).use_empty() || !op->getResult(2).use_empty()) return FusibleClass::kNotFusible;
    return AllOperandsStaticF32(op) ? FusibleClass::kReduction : FusibleClass::kNotFusible;
  }
  return FusibleClass::kNotFusible;
}

}  // namespace

FusibleClass ClassifyFusible(mlir::Operation* op) {
  if (!llvm::isa_and_nonnull<mlir::tsr::TsrDialect>(op->getDialect())) return FusibleClass::kNotFusible;
  if (llvm::isa<mlir::tsr::ConstantOp, mlir::tsr::FusionOp, mlir::tsr::YieldOp>(op)) {
    return FusibleClass::kNotFusible;
  }
  if (op->getNumResults() == 0 || op->getNumOperands() == 0) return FusibleClass::kNotFusible;
  // The sharding annotation is per op; a fusion could not carry its members' different ones.
  if (op->hasAttr(mlir::tsr::kShardingAttrName)) return FusibleClass::kNotFusible;
  const llvm::StringRef name = op->getName().stripDialect();
  if (name.starts_with("Reduce") || name == "Softmax" || name == "LogSoftmax" || name == "LayerNormalization") {
    return ClassifyReduction(op, name);
  }
  if (op->getNumResults() != 1 || !IsStaticF32(op->getResult(0).getType())) return FusibleClass::kNotFusible;
  if (BinaryOps().contains(name)) {
    return op->getNumOperands() == 2 && AllOperandsStaticF32(op) ? FusibleClass::kElementwise
                                                                 : FusibleClass::kNotFusible;
  }
  if (UnaryOps().contains(name)) {
    return op->getNumOperands() == 1 && AllOperandsStaticF32(op) ? FusibleClass::kElementwise
                                                                 : FusibleClass::kNotFusible;
  }
  if (name == "Clip") {
    // min and max (optional operands) must be constants the outliner can read.
    if (!AllOperandsStaticF32(op)) return FusibleClass::kNotFusible;
    for (mlir::Value bound : op->getOperands().drop_front()) {
      if (!IsConstant(bound)) return FusibleClass::kNotFusible;
    }
    return FusibleClass::kElementwise;
  }
  if (name == "Where") {
    const bool ok = op->getNumOperands() == 3 &&
                    IsStaticOf(op->getOperand(0).getType(), [](mlir::Type t) { return t.isInteger(1); }) &&
                    IsStaticF32(op->getOperand(1).getType()) && IsStaticF32(op->getOperand(2).getType());
    return ok ? FusibleClass::kElementwise : FusibleClass::kNotFusible;
  }
  if (name == "Identity" || name == "Cast") {
    return IsStaticF32(op->getOperand(0).getType()) ? FusibleClass::kDataMovement : FusibleClass::kNotFusible;
  }
  if (name == "Reshape" || name == "Expand") {
    // Reshape keeps the row-major element order by definition; both need their target shape
    // as a constant.
    const bool ok =
        op->getNumOperands() == 2 && IsStaticF32(op->getOperand(0).getType()) && IsConstant(op->getOperand(1));
    return ok ? FusibleClass::kDataMovement : FusibleClass::kNotFusible;
  }
  return FusibleClass::kNotFusible;
}

bool IsSmallConstant(mlir::Operation* op) {
  auto constant = llvm::dyn_cast_or_null<mlir::tsr::ConstantOp>(op);
  if (!constant) return false;
  mlir::ElementsAttr value = constant.getValue();
  if (auto dense = llvm::dyn_cast<mlir::DenseElementsAttr>(value); dense && dense.isSplat()) return true;
  return value.getNumElements() <= 64;
}

bool IsCheapToRecompute(mlir::Operation* op) {
  const FusibleClass cls = ClassifyFusible(op);
  if (cls != FusibleClass::kElementwise && cls != FusibleClass::kDataMovement) return false;
  const llvm::StringRef name = op->getName().stripDialect();
  if (CheapUnaryOps().contains(name)) return true;
  // x * scale, x + bias, ... with a small constant: one multiply-add per loaded element.
  if (name == "Add" || name == "Sub" || name == "Mul") {
    return IsSmallConstant(op->getOperand(0).getDefiningOp()) || IsSmallConstant(op->getOperand(1).getDefiningOp());
  }
  return false;
}

}  // namespace tsr

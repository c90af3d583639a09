// TsrDialect: registration of the ops, constant materialization, verification of the reserved
// discardable attributes (tsr.device, tsr.sharding, tsr.name), and the hand-written Constant op.
#include "compiler/dialect/tsr_dialect.h"

#include "compiler/dialect/TsrDialect.cpp.inc"
#include "llvm/ADT/DenseSet.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"

namespace mlir::tsr {

void TsrDialect::initialize() { registerTsrDialectOperations(this); }

Operation* TsrDialect::materializeConstant(OpBuilder& builder, Attribute value, Type type, Location loc) {
  auto elements = llvm::dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type) return nullptr;
  return builder.create<ConstantOp>(loc, type, elements);
}

namespace {

// "<kind>:<index>" with kind cpu or gpu.
bool IsDeviceName(llvm::StringRef s) {
  auto [kind, index] = s.split(':');
  unsigned n = 0;
  return (kind == "cpu" || kind == "gpu") && !index.empty() && !index.getAsInteger(10, n);
}

LogicalResult VerifySharding(Operation* op, Attribute attr) {
  auto per_result = llvm::dyn_cast<ArrayAttr>(attr);
  if (!per_result || per_result.size() != op->getNumResults()) {
    return op->emitOpError() << "'" << kShardingAttrName << "' must be an array with one array<i64> per result ("
                             << op->getNumResults() << ")";
  }
  for (unsigned r = 0; r < op->getNumResults(); ++r) {
    auto dims = llvm::dyn_cast<DenseI64ArrayAttr>(per_result[r]);
    auto type = llvm::dyn_cast<RankedTensorType>(op->getResult(r).getType());
    if (!dims || !type || dims.size() != type.getRank()) {
      return op->emitOpError() << "'" << kShardingAttrName << "' entry " << r
                               << " must be an array<i64> with one mesh axis per dimension of result " << r;
    }
    llvm::DenseSet<int64_t> axes;
    for (int64_t axis : dims.asArrayRef()) {
      if (axis < -1) {
        return op->emitOpError() << "'" << kShardingAttrName << "' entry " << r << " holds " << axis
                                 << "; mesh axes are >= 0, -1 means replicated";
      }
      if (axis >= 0 && !axes.insert(axis).second) {
        return op->emitOpError() << "'" << kShardingAttrName << "' entry " << r
                                 << " splits two dimensions along mesh axis " << axis;
      }
    }
  }
  return success();
}

LogicalResult VerifyNameAttr(Operation* op, NamedAttribute attr) {
  if (attr.getName() != kNameAttrName) {
    return op->emitError() << "unknown tsr attribute '" << attr.getName() << "' on a function argument or result";
  }
  if (!llvm::isa<StringAttr>(attr.getValue())) return op->emitError() << "'" << kNameAttrName << "' must be a string";
  return success();
}

}  // namespace

LogicalResult TsrDialect::verifyOperationAttribute(Operation* op, NamedAttribute attr) {
  if (attr.getName() == kDeviceAttrName) {
    auto device = llvm::dyn_cast<StringAttr>(attr.getValue());
    if (!device || !IsDeviceName(device.getValue())) {
      return op->emitOpError() << "'" << kDeviceAttrName << "' must be a string \"<cpu|gpu>:<index>\"";
    }
    return success();
  }
  if (attr.getName() == kShardingAttrName) return VerifySharding(op, attr.getValue());
  if (attr.getName() == kTilesAttrName || attr.getName() == kTileAxisAttrName) {
    auto value = llvm::dyn_cast<IntegerAttr>(attr.getValue());
    const int64_t least = attr.getName() == kTilesAttrName ? 2 : 0;
    if (!value || value.getInt() < least) {
      return op->emitOpError() << "'" << attr.getName() << "' must be an integer >= " << least;
    }
    return success();
  }
  if (attr.getName() == kTileCalleeAttrName) {
    if (!llvm::isa<FlatSymbolRefAttr>(attr.getValue())) {
      return op->emitOpError() << "'" << kTileCalleeAttrName << "' must be a symbol reference";
    }
    return success();
  }
  return op->emitOpError() << "unknown discardable attribute '" << attr.getName() << "' of the tsr dialect";
}

LogicalResult TsrDialect::verifyRegionArgAttribute(Operation* op, unsigned, unsigned, NamedAttribute attr) {
  return VerifyNameAttr(op, attr);
}

LogicalResult TsrDialect::verifyRegionResultAttribute(Operation* op, unsigned, unsigned, NamedAttribute attr) {
  return VerifyNameAttr(op, attr);
}

LogicalResult ConstantOp::inferReturnTypes(MLIRContext*, std::optional<Location>, Adaptor adaptor,
                                           llvm::SmallVectorImpl<Type>& types) {
  types.push_back(adaptor.getValue().getType());
  return success();
}

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

}  // namespace mlir::tsr

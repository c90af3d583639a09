// Reading float tsr.Constant operands (see constant_values.h).
#include "compiler/transforms/constant_values.h"

#include "compiler/dialect/tsr_dialect.h"
#include "mlir/IR/BuiltinAttributes.h"

namespace tsr {

std::optional<std::vector<double>> ConstantValues(mlir::Value v) {
  auto constant = v.getDefiningOp<mlir::tsr::ConstantOp>();
  if (!constant) return std::nullopt;
  auto dense = llvm::dyn_cast<mlir::DenseElementsAttr>(constant.getValue());
  if (!dense || !llvm::isa<mlir::FloatType>(dense.getElementType())) return std::nullopt;
  std::vector<double> values;
  for (const llvm::APFloat& f : dense.getValues<llvm::APFloat>()) values.push_back(f.convertToDouble());
  return values;
}

std::optional<double> ConstantScalar(mlir::Value v) {
  std::optional<std::vector<double>> values = ConstantValues(v);
  if (!values || values->size() != 1) return std::nullopt;
  return values->front();
}

}  // namespace tsr

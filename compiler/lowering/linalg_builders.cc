// Builders shared by the tsr -> linalg lowerings (linalg_builders.h).
#include "compiler/lowering/linalg_builders.h"

#include "llvm/ADT/SmallVector.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"

namespace tsr::lowering {

mlir::FailureOr<mlir::AffineMap> BroadcastMap(llvm::ArrayRef<int64_t> operand_shape, llvm::ArrayRef<int64_t> shape,
                                              mlir::MLIRContext* context) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  const int64_t operand_rank = static_cast<int64_t>(operand_shape.size());
  if (operand_rank > rank) return mlir::failure();
  llvm::SmallVector<mlir::AffineExpr> results;
  for (int64_t i = 0; i < operand_rank; ++i) {
    const int64_t dim = rank - operand_rank + i;
    if (operand_shape[i] == shape[dim]) {
      results.push_back(mlir::getAffineDimExpr(dim, context));
    } else if (operand_shape[i] == 1) {
      results.push_back(mlir::getAffineConstantExpr(0, context));
    } else {
      return mlir::failure();
    }
  }
  return mlir::AffineMap::get(rank, 0, results, context);
}

mlir::FailureOr<mlir::Value> BuildElementwise(mlir::OpBuilder& builder, mlir::Location loc,
                                              mlir::RankedTensorType result_type, mlir::ValueRange inputs,
                                              ScalarBody body) {
  mlir::MLIRContext* context = builder.getContext();
  const llvm::ArrayRef<int64_t> shape = result_type.getShape();
  llvm::SmallVector<mlir::Value> tensor_inputs;
  llvm::SmallVector<mlir::AffineMap> maps;
  // For each input: its scalar constant, or nullptr when it is read from a tensor.
  llvm::SmallVector<mlir::Value> scalars;
  for (mlir::Value input : inputs) {
    auto type = mlir::cast<mlir::RankedTensorType>(input.getType());
    mlir::FailureOr<mlir::AffineMap> map = BroadcastMap(type.getShape(), shape, context);
    if (mlir::failed(map)) return mlir::failure();
    mlir::DenseElementsAttr constant;
    if (mlir::matchPattern(input, mlir::m_Constant(&constant)) && constant.isSplat()) {
      scalars.push_back(builder.create<mlir::arith::ConstantOp>(
          loc, mlir::cast<mlir::TypedAttr>(constant.getSplatValue<mlir::Attribute>())));
      continue;
    }
    scalars.push_back(nullptr);
    tensor_inputs.push_back(input);
    maps.push_back(*map);
  }
  maps.push_back(builder.getMultiDimIdentityMap(result_type.getRank()));
  llvm::SmallVector<mlir::utils::IteratorType> iterators(result_type.getRank(), mlir::utils::IteratorType::parallel);
  mlir::Value init = builder.create<mlir::tensor::EmptyOp>(loc, shape, result_type.getElementType());
  // The tensor input the body returns unchanged, if any.
  std::optional<size_t> forwarded;
  auto generic = builder.create<mlir::linalg::GenericOp>(
      loc, mlir::TypeRange{result_type}, tensor_inputs, mlir::ValueRange{init}, maps, iterators,
      [&](mlir::OpBuilder& nested, mlir::Location nested_loc, mlir::ValueRange args) {
        llvm::SmallVector<mlir::Value> operands;
        int next = 0;
        for (mlir::Value scalar : scalars) operands.push_back(scalar != nullptr ? scalar : args[next++]);
        mlir::Value result = body(nested, nested_loc, operands);
        for (size_t i = 0; i < tensor_inputs.size(); ++i) {
          if (result == args[i]) forwarded = i;
        }
        nested.create<mlir::linalg::YieldOp>(nested_loc, result);
      });
  // An identity (Pow(x, 1), Expand to x's own shape, ...) is x itself: the canonicalizer would
  // erase the generic anyway, and the caller must know that no new tensor was computed.
  if (forwarded.has_value() && maps[*forwarded].isIdentity() && tensor_inputs[*forwarded].getType() == result_type) {
    mlir::Value input = tensor_inputs[*forwarded];
    generic.erase();
    return input;
  }
  return generic.getResult(0);
}

mlir::Value ReshapeTo(mlir::OpBuilder& builder, mlir::Location loc, mlir::Value value, mlir::RankedTensorType type) {
  auto source = mlir::cast<mlir::RankedTensorType>(value.getType());
  if (source.getShape() == type.getShape()) return value;
  // Rank 0 <-> all-ones shapes: an empty reassociation.
  if (source.getRank() == 0) {
    return builder.create<mlir::tensor::ExpandShapeOp>(loc, type, value, llvm::ArrayRef<mlir::ReassociationIndices>{});
  }
  if (type.getRank() == 0) {
    return builder.create<mlir::tensor::CollapseShapeOp>(loc, type, value,
                                                         llvm::ArrayRef<mlir::ReassociationIndices>{});
  }
  // Through one dimension: always valid for the same number of elements in row-major order.
  auto all = [](int64_t rank) {
    mlir::ReassociationIndices indices;
    for (int64_t i = 0; i < rank; ++i) indices.push_back(i);
    return llvm::SmallVector<mlir::ReassociationIndices>{indices};
  };
  mlir::Value flat = value;
  if (source.getRank() != 1) {
    auto flat_type = mlir::RankedTensorType::get({source.getNumElements()}, source.getElementType());
    flat = builder.create<mlir::tensor::CollapseShapeOp>(loc, flat_type, value, all(source.getRank()));
  }
  if (type.getRank() == 1) return flat;
  return builder.create<mlir::tensor::ExpandShapeOp>(loc, type, flat, all(type.getRank()));
}

mlir::Value CopyTensor(mlir::OpBuilder& builder, mlir::Location loc, mlir::Value value) {
  auto type = mlir::cast<mlir::RankedTensorType>(value.getType());
  mlir::Value init = builder.create<mlir::tensor::EmptyOp>(loc, type.getShape(), type.getElementType());
  // linalg.copy, not an identity linalg.generic: the canonicalizer erases the latter, and the
  // function would then return its argument.
  return builder.create<mlir::linalg::CopyOp>(loc, mlir::ValueRange{value}, mlir::ValueRange{init}).getResult(0);
}

mlir::Value F32(mlir::OpBuilder& builder, mlir::Location loc, double value) {
  return builder.create<mlir::arith::ConstantOp>(loc, builder.getF32FloatAttr(static_cast<float>(value)));
}

std::optional<double> SplatFloat(mlir::Value value) {
  mlir::DenseElementsAttr constant;
  if (!mlir::matchPattern(value, mlir::m_Constant(&constant)) || !constant.isSplat()) return std::nullopt;
  if (!mlir::isa<mlir::FloatType>(constant.getElementType())) return std::nullopt;
  return constant.getSplatValue<llvm::APFloat>().convertToDouble();
}

std::optional<int64_t> NormalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

}  // namespace tsr::lowering

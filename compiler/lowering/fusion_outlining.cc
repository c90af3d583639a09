// OutlineFusions and the tsr-outline-fusions pass: each tsr.Fusion's body is lowered op by op
// (elementwise_lowering.h, reduction_lowering.h) into a new private function whose arguments
// are the fusion's inputs and whose results are the yielded values; the fusion becomes a
// func.call of it.
#include "compiler/lowering/fusion_outlining.h"

#include <string>

#include "compiler/dialect/tsr_dialect.h"
#include "compiler/lowering/elementwise_lowering.h"
#include "compiler/lowering/fusion_tiling.h"
#include "compiler/lowering/linalg_builders.h"
#include "compiler/lowering/reduction_lowering.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Pass/PassRegistry.h"

namespace tsr {
namespace {

bool IsBoolTensor(mlir::Type type) {
  auto tensor = llvm::dyn_cast<mlir::RankedTensorType>(type);
  return tensor != nullptr && tensor.getElementType().isInteger(1);
}

// The same shape with i8 elements: how a bool tensor is laid out in memory (one byte per
// element, 0 or 1). LLVM packs vectors of i1 into bits, so a vectorized load of an i1
// buffer would read the wrong bytes: bool data enters the generated code as bytes.
mlir::RankedTensorType AsBytes(mlir::Type type) {
  auto tensor = llvm::cast<mlir::RankedTensorType>(type);
  return mlir::RankedTensorType::get(tensor.getShape(), mlir::IntegerType::get(type.getContext(), 8));
}

// bytes != 0, elementwise.
mlir::FailureOr<mlir::Value> BoolFromBytes(mlir::OpBuilder& builder, mlir::Location loc, mlir::Value bytes) {
  auto type = llvm::cast<mlir::RankedTensorType>(bytes.getType());
  auto bool_type = mlir::RankedTensorType::get(type.getShape(), builder.getI1Type());
  return lowering::BuildElementwise(
      builder, loc, bool_type, {bytes}, [](mlir::OpBuilder& b, mlir::Location l, mlir::ValueRange v) -> mlir::Value {
        mlir::Value zero = b.create<mlir::arith::ConstantIntOp>(l, 0, 8);
        return b.create<mlir::arith::CmpIOp>(l, mlir::arith::CmpIPredicate::ne, v[0], zero);
      });
}

// Lowers one op of a fusion body at `builder`'s insertion point.
mlir::LogicalResult LowerOp(mlir::OpBuilder& builder, mlir::Operation& op, mlir::IRMapping& mapping) {
  if (auto constant = llvm::dyn_cast<mlir::tsr::ConstantOp>(op)) {
    auto value = llvm::dyn_cast<mlir::DenseElementsAttr>(constant.getValue());
    if (value == nullptr) return op.emitOpError("cannot be outlined: only dense constants are lowered");
    if (IsBoolTensor(value.getType())) {
      // Stored as bytes (see AsBytes), compared back to bool.
      llvm::SmallVector<int8_t> bytes;
      for (bool b : value.getValues<bool>()) bytes.push_back(b ? 1 : 0);
      auto stored = mlir::DenseElementsAttr::get(AsBytes(value.getType()), llvm::ArrayRef<int8_t>(bytes));
      mlir::Value raw = builder.create<mlir::arith::ConstantOp>(op.getLoc(), stored).getResult();
      mlir::FailureOr<mlir::Value> flags = BoolFromBytes(builder, op.getLoc(), raw);
      if (mlir::failed(flags)) return op.emitOpError("cannot be outlined: bool constant");
      mapping.map(constant.getResult(), *flags);
      return mlir::success();
    }
    mapping.map(constant.getResult(), builder.create<mlir::arith::ConstantOp>(op.getLoc(), value).getResult());
    return mlir::success();
  }
  if (op.getDialect() == nullptr || op.getDialect()->getNamespace() != "tsr") {
    return op.emitOpError("cannot be outlined: not a tsr op");
  }
  const llvm::StringRef name = op.getName().stripDialect();
  if (lowering::IsLoweredElementwiseOp(name)) return lowering::LowerElementwiseOp(builder, &op, mapping);
  if (lowering::IsLoweredReductionOp(name)) return lowering::LowerReductionOp(builder, &op, mapping);
  return op.emitOpError("cannot be outlined: tsr-outline-fusions has no lowering for this op");
}

// The next free name fusion_<k>.
std::string FreeName(mlir::SymbolTable& symbols, int* next) {
  while (true) {
    std::string name = "fusion_" + std::to_string((*next)++);
    if (symbols.lookup(name) == nullptr) return name;
  }
}

// The function computing `fusion`'s body, its signature taken from the body's own types
// (those of one block, for a tiled copy), added to `symbols` as `name`.
mlir::FailureOr<mlir::func::FuncOp> BuildFunction(mlir::tsr::FusionOp fusion, const std::string& name,
                                                  mlir::SymbolTable& symbols) {
  mlir::MLIRContext* context = fusion.getContext();
  const mlir::Location loc = fusion.getLoc();
  mlir::OpBuilder builder(context);
  mlir::Block& body = fusion.getBody().front();
  // Bool inputs are passed as bytes (see AsBytes).
  llvm::SmallVector<mlir::Type> input_types;
  for (mlir::Type t : body.getArgumentTypes()) input_types.push_back(IsBoolTensor(t) ? AsBytes(t) : t);
  llvm::SmallVector<mlir::Type> result_types(body.getTerminator()->getOperandTypes());
  for (mlir::Type t : result_types) {
    if (IsBoolTensor(t)) return fusion.emitOpError("cannot be outlined: a bool result");
  }
  auto type = builder.getFunctionType(input_types, result_types);
  mlir::OwningOpRef<mlir::func::FuncOp> function = mlir::func::FuncOp::create(loc, name, type);
  function->setPrivate();
  mlir::Block* entry = function->addEntryBlock();
  builder.setInsertionPointToStart(entry);
  mlir::IRMapping mapping;
  for (auto [argument, parameter] : llvm::zip(body.getArguments(), entry->getArguments())) {
    mlir::Value value = parameter;
    if (IsBoolTensor(argument.getType())) {
      mlir::FailureOr<mlir::Value> flags = BoolFromBytes(builder, loc, parameter);
      if (mlir::failed(flags)) return fusion.emitOpError("cannot be outlined: bool input");
      value = *flags;
    }
    mapping.map(argument, value);
  }
  for (mlir::Operation& op : body.without_terminator()) {
    if (mlir::failed(LowerOp(builder, op, mapping))) return mlir::failure();
  }
  // Every result gets its own buffer written by the function (codegen turns results into
  // out-parameters): an argument, a constant, a reshape view or a value yielded twice is copied.
  llvm::SmallVector<mlir::Value> results;
  llvm::DenseSet<mlir::Value> returned;
  for (mlir::Value yielded : body.getTerminator()->getOperands()) {
    mlir::Value value = mapping.lookup(yielded);
    mlir::Operation* producer = value.getDefiningOp();
    const bool computed = producer != nullptr && llvm::isa<mlir::linalg::LinalgOp>(producer);
    if (!computed || !returned.insert(value).second) value = lowering::CopyTensor(builder, loc, value);
    results.push_back(value);
  }
  builder.create<mlir::func::ReturnOp>(loc, results);
  mlir::func::FuncOp created = function.release();
  symbols.insert(created);
  return created;
}

// The function of one block of a fusion marked by tsr-tile-fusions: a copy of the fusion
// whose split values have the block's types (splat constants re-made at those types),
// outlined and erased.
mlir::FailureOr<mlir::func::FuncOp> BuildTileFunction(mlir::tsr::FusionOp fusion, const FusionTiling& tiling,
                                                      const std::string& name, mlir::SymbolTable& symbols) {
  mlir::OpBuilder builder(fusion);
  auto copy = llvm::cast<mlir::tsr::FusionOp>(builder.clone(*fusion.getOperation()));
  mlir::Block& body = copy.getBody().front();
  for (mlir::BlockArgument argument : body.getArguments()) argument.setType(TileType(argument.getType(), tiling));
  for (mlir::Operation& op : body.without_terminator()) {
    for (mlir::OpResult result : op.getResults()) {
      const mlir::Type tiled = TileType(result.getType(), tiling);
      if (tiled == result.getType()) continue;
      if (auto value = op.getAttrOfType<mlir::DenseElementsAttr>("value");
          value != nullptr && llvm::isa<mlir::tsr::ConstantOp>(op)) {
        op.setAttr("value", mlir::DenseElementsAttr::get(llvm::cast<mlir::ShapedType>(tiled),
                                                         value.getSplatValue<mlir::Attribute>()));
      }
      result.setType(tiled);
    }
  }
  mlir::FailureOr<mlir::func::FuncOp> created = BuildFunction(copy, name, symbols);
  copy.erase();
  return created;
}

mlir::FailureOr<mlir::func::FuncOp> Outline(mlir::tsr::FusionOp fusion, mlir::SymbolTable& symbols, int* next) {
  const mlir::Location loc = fusion.getLoc();
  mlir::FailureOr<mlir::func::FuncOp> created = BuildFunction(fusion, FreeName(symbols, next), symbols);
  if (mlir::failed(created)) return mlir::failure();
  mlir::func::FuncOp tile_function;
  if (std::optional<FusionTiling> tiling = FusionTilingOf(fusion); tiling.has_value()) {
    std::string name = (created->getName() + "_tile").str();
    for (int k = 1; symbols.lookup(name) != nullptr; ++k)
      name = (created->getName() + "_tile" + std::to_string(k)).str();
    mlir::FailureOr<mlir::func::FuncOp> tiled = BuildTileFunction(fusion, *tiling, name, symbols);
    if (mlir::failed(tiled)) return mlir::failure();
    tile_function = *tiled;
  }
  mlir::OpBuilder builder(fusion);
  // Bool operands are reinterpreted as the bytes they are (no data moves).
  llvm::SmallVector<mlir::Value> operands;
  for (mlir::Value input : fusion.getInputs()) {
    if (IsBoolTensor(input.getType())) {
      input = builder.create<mlir::UnrealizedConversionCastOp>(loc, AsBytes(input.getType()), input).getResult(0);
    }
    operands.push_back(input);
  }
  auto call = builder.create<mlir::func::CallOp>(loc, *created, operands);
  if (tile_function) {
    call->setAttr(mlir::tsr::kTileCalleeAttrName, mlir::FlatSymbolRefAttr::get(tile_function));
    call->setAttr(mlir::tsr::kTilesAttrName, fusion->getAttr(mlir::tsr::kTilesAttrName));
  }
  fusion.replaceAllUsesWith(call.getResults());
  fusion.erase();
  return *created;
}

class OutlineFusionsPass : public mlir::PassWrapper<OutlineFusionsPass, mlir::OperationPass<mlir::ModuleOp>> {
 public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(OutlineFusionsPass)

  llvm::StringRef getArgument() const override { return "tsr-outline-fusions"; }
  llvm::StringRef getDescription() const override {
    return "Outline each tsr.Fusion into a private function in linalg/arith/math/tensor, called by func.call";
  }
  void getDependentDialects(mlir::DialectRegistry& registry) const override { RegisterOutlinedDialects(registry); }
  void runOnOperation() override {
    if (mlir::failed(OutlineFusions(getOperation()))) signalPassFailure();
  }
};

}  // namespace

mlir::FailureOr<std::vector<mlir::func::FuncOp>> OutlineFusions(mlir::ModuleOp module) {
  mlir::MLIRContext* context = module.getContext();
  context->loadDialect<mlir::arith::ArithDialect, mlir::func::FuncDialect, mlir::linalg::LinalgDialect,
                       mlir::math::MathDialect, mlir::tensor::TensorDialect>();
  llvm::SmallVector<mlir::tsr::FusionOp> fusions;
  module.walk([&](mlir::tsr::FusionOp fusion) { fusions.push_back(fusion); });
  mlir::SymbolTable symbols(module);
  std::vector<mlir::func::FuncOp> created;
  int next = 0;
  for (mlir::tsr::FusionOp fusion : fusions) {
    mlir::FailureOr<mlir::func::FuncOp> function = Outline(fusion, symbols, &next);
    if (mlir::failed(function)) return mlir::failure();
    created.push_back(*function);
  }
  return created;
}

std::unique_ptr<mlir::Pass> CreateOutlineFusionsPass() { return std::make_unique<OutlineFusionsPass>(); }

void RegisterOutlineFusionsPass() { mlir::PassRegistration<OutlineFusionsPass>(); }

void RegisterOutlinedDialects(mlir::DialectRegistry& registry) {
  registry.insert<mlir::arith::ArithDialect, mlir::func::FuncDialect, mlir::linalg::LinalgDialect,
                  mlir::math::MathDialect, mlir::tensor::TensorDialect>();
}

}  // namespace tsr

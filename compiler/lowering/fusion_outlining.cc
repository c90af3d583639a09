// OutlineFusions and the tsr-outline-fusions pass: each tsr.Fusion's body is lowered op by op
// (elementwise_lowering.h, reduction_lowering.h) into a new private function whose arguments
// are the fusion's inputs and whose results are the yielded values; the fusion becomes a
// func.call of it.
#include "compiler/lowering/fusion_outlining.h"

#include <string>

#include "compiler/dialect/tsr_dialect.h"
#include "compiler/lowering/elementwise_lowering.h"
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

// Lowers one op of a fusion body at `builder`'s insertion point.
mlir::LogicalResult LowerOp(mlir::OpBuilder& builder, mlir::Operation& op, mlir::IRMapping& mapping) {
  if (auto constant = llvm::dyn_cast<mlir::tsr::ConstantOp>(op)) {
    auto value = llvm::dyn_cast<mlir::DenseElementsAttr>(constant.getValue());
    if (value == nullptr) return op.emitOpError("cannot be outlined: only dense constants are lowered");
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

mlir::FailureOr<mlir::func::FuncOp> Outline(mlir::tsr::FusionOp fusion, mlir::SymbolTable& symbols, int* next) {
  mlir::MLIRContext* context = fusion.getContext();
  const mlir::Location loc = fusion.getLoc();
  mlir::OpBuilder builder(context);
  auto type = builder.getFunctionType(fusion.getInputs().getTypes(), fusion.getResultTypes());
  mlir::OwningOpRef<mlir::func::FuncOp> function = mlir::func::FuncOp::create(loc, FreeName(symbols, next), type);
  function->setPrivate();
  mlir::Block* entry = function->addEntryBlock();
  builder.setInsertionPointToStart(entry);
  mlir::IRMapping mapping;
  mlir::Block& body = fusion.getBody().front();
  for (auto [argument, parameter] : llvm::zip(body.getArguments(), entry->getArguments())) {
    mapping.map(argument, parameter);
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
  builder.setInsertionPoint(fusion);
  auto call = builder.create<mlir::func::CallOp>(loc, created, fusion.getInputs());
  fusion.replaceAllUsesWith(call.getResults());
  fusion.erase();
  return created;
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

// tsr-fold-transposes (see transpose_folding.h).
#include "compiler/transforms/transpose_folding.h"

#include <optional>
#include <utility>

#include "compiler/dialect/tsr_dialect.h"
#include "llvm/ADT/SmallVector.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace tsr {
namespace {

using mlir::failure;
using mlir::LogicalResult;
using mlir::PatternRewriter;
using mlir::RankedTensorType;
using mlir::success;
using mlir::Value;
namespace tsr_ops = mlir::tsr;

bool IsF32Matrix(Value v) {
  auto type = llvm::dyn_cast<RankedTensorType>(v.getType());
  return type && type.getRank() == 2 && type.getElementType().isF32();
}

// The matrix that `v` is the transpose of: the input of a Transpose that swaps the two dims
// of a matrix (perm [1, 0], or no perm: reversed), or nullopt.
std::optional<Value> TransposedMatrix(Value v) {
  auto transpose = v.getDefiningOp<tsr_ops::TransposeOp>();
  if (!transpose || !IsF32Matrix(transpose.getData())) return std::nullopt;
  if (std::optional<llvm::ArrayRef<int64_t>> perm = transpose.getPerm()) {
    // [0, 1] is the identity, which the op's own folder removes.
    if (perm->size() != 2 || (*perm)[0] != 1) return std::nullopt;
  }
  return transpose.getData();
}

// The operands and flags of the Gemm that replaces a product of a and b: a transposed
// operand's input with its flag flipped. Fails when neither operand is a transpose.
LogicalResult FoldOperands(Value& a, Value& b, int64_t& trans_a, int64_t& trans_b) {
  bool folded = false;
  if (std::optional<Value> x = TransposedMatrix(a)) {
    a = *x;
    trans_a = 1 - trans_a;
    folded = true;
  }
  if (std::optional<Value> x = TransposedMatrix(b)) {
    b = *x;
    trans_b = 1 - trans_b;
    folded = true;
  }
  return mlir::success(folded);
}

struct MatMulOfTranspose : mlir::OpRewritePattern<tsr_ops::MatMulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tsr_ops::MatMulOp op, PatternRewriter& rewriter) const override {
    Value a = op.getA(), b = op.getB();
    if (!IsF32Matrix(a) || !IsF32Matrix(b) || !IsF32Matrix(op.getY())) return failure();
    int64_t trans_a = 0, trans_b = 0;
    if (failed(FoldOperands(a, b, trans_a, trans_b))) return failure();
    llvm::SmallVector<mlir::NamedAttribute> attrs = {
        rewriter.getNamedAttr("transA", rewriter.getI64IntegerAttr(trans_a)),
        rewriter.getNamedAttr("transB", rewriter.getI64IntegerAttr(trans_b))};
    rewriter.replaceOpWithNewOp<tsr_ops::GemmOp>(op, mlir::TypeRange{op.getY().getType()}, mlir::ValueRange{a, b},
                                                 attrs);
    return success();
  }
};

struct GemmOfTranspose : mlir::OpRewritePattern<tsr_ops::GemmOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tsr_ops::GemmOp op, PatternRewriter& rewriter) const override {
    Value a = op.getA(), b = op.getB();
    if (!IsF32Matrix(a) || !IsF32Matrix(b) || !IsF32Matrix(op.getY())) return failure();
    int64_t trans_a = op.getTransA(), trans_b = op.getTransB();
    if (failed(FoldOperands(a, b, trans_a, trans_b))) return failure();
    rewriter.modifyOpInPlace(op, [&] {
      op->setOperand(0, a);
      op->setOperand(1, b);
      op.setTransA(trans_a);
      op.setTransB(trans_b);
    });
    return success();
  }
};

class TransposeFoldingPass : public mlir::PassWrapper<TransposeFoldingPass, mlir::OperationPass<mlir::func::FuncOp>> {
 public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TransposeFoldingPass)

  llvm::StringRef getArgument() const override { return "tsr-fold-transposes"; }
  llvm::StringRef getDescription() const override {
    return "Absorb matrix transposes into the MatMul / Gemm that reads them (Gemm transA / transB)";
  }
  void getDependentDialects(mlir::DialectRegistry& registry) const override { registry.insert<tsr_ops::TsrDialect>(); }

  mlir::LogicalResult initialize(mlir::MLIRContext* context) override {
    mlir::RewritePatternSet patterns(context);
    patterns.add<MatMulOfTranspose, GemmOfTranspose>(context);
    patterns_ = std::move(patterns);
    return mlir::success();
  }

  void runOnOperation() override {
    if (mlir::failed(mlir::applyPatternsAndFoldGreedily(getOperation(), patterns_))) {
      getOperation().emitError("tsr-fold-transposes did not converge");
      signalPassFailure();
    }
  }

 private:
  mlir::FrozenRewritePatternSet patterns_;
};

}  // namespace

std::unique_ptr<mlir::Pass> CreateTransposeFoldingPass() { return std::make_unique<TransposeFoldingPass>(); }

void RegisterTransposeFoldingPass() { mlir::PassRegistration<TransposeFoldingPass>(); }

}  // namespace tsr

// tsr-algebraic-simplify (see algebraic_simplify.h). Every rewrite here returns exactly the
// values the original ops compute, for every input: the comment on each pattern says why.
#include "compiler/transforms/algebraic_simplify.h"

#include <utility>

#include "compiler/dialect/tsr_dialect.h"
#include "llvm/ADT/SmallVector.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Matchers.h"
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

// The neutral elements this pass removes. Floats need the exact element: x + (-0.0) is x for
// every x (x + (+0.0) turns -0.0 into +0.0), x - (+0.0) is x (x - (-0.0) turns -0.0 into
// +0.0), x * 1.0 and x / 1.0 are x (both exact in IEEE arithmetic, NaN stays NaN, +-Inf stays
// +-Inf). Integers: x + 0, x - 0, x * 1 and x / 1 are x.
enum class Neutral { kNegZero, kPosZero, kOne };

bool IsNeutral(Value v, Neutral kind) {
  mlir::ElementsAttr attr;
  if (!mlir::matchPattern(v, mlir::m_Constant(&attr)) || !attr.isSplat()) return false;
  mlir::Attribute splat = attr.getSplatValue<mlir::Attribute>();
  if (auto f = llvm::dyn_cast<mlir::FloatAttr>(splat)) {
    const llvm::APFloat x = f.getValue();
    switch (kind) {
      case Neutral::kNegZero:
        return x.isZero() && x.isNegative();
      case Neutral::kPosZero:
        return x.isPosZero();
      case Neutral::kOne:
        return x.isExactlyValue(1.0);
    }
  }
  if (auto i = llvm::dyn_cast<mlir::IntegerAttr>(splat)) {
    return kind == Neutral::kOne ? i.getValue().isOne() : i.getValue().isZero();
  }
  return false;
}

// A 1-D i64 shape constant for `type`: its dims, with -1 for the (at most one) batch dim.
Value ShapeConstant(PatternRewriter& rewriter, mlir::Location loc, RankedTensorType type) {
  llvm::SmallVector<int64_t> dims;
  for (int64_t d : type.getShape()) dims.push_back(mlir::ShapedType::isDynamic(d) ? -1 : d);
  auto shape_type = RankedTensorType::get({static_cast<int64_t>(dims.size())}, rewriter.getI64Type());
  auto value = mlir::DenseElementsAttr::get(shape_type, llvm::ArrayRef<int64_t>(dims));
  return rewriter.create<tsr_ops::ConstantOp>(loc, shape_type, value);
}

// Replaces `op` (result type `type`) by `x`: x itself when it has that type; otherwise, when
// `neutral` is a constant that only broadcasts x, Expand(x, neutral's shape), which is the
// same broadcast (numpy rules on the same two shapes) without the arithmetic.
LogicalResult ReplaceByOperand(PatternRewriter& rewriter, mlir::Operation* op, Value x, Value neutral) {
  auto type = llvm::cast<RankedTensorType>(op->getResult(0).getType());
  if (x.getType() == type) {
    rewriter.replaceOp(op, x);
    return success();
  }
  auto neutral_type = llvm::cast<RankedTensorType>(neutral.getType());
  if (!neutral_type.hasStaticShape()) return failure();
  Value shape = ShapeConstant(rewriter, op->getLoc(), neutral_type);
  rewriter.replaceOpWithNewOp<tsr_ops::ExpandOp>(op, type, x, shape);
  return success();
}

bool IsFloat(Value v) { return llvm::isa<mlir::FloatType>(mlir::getElementTypeOrSelf(v.getType())); }

struct AddNeutral : mlir::OpRewritePattern<tsr_ops::AddOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tsr_ops::AddOp op, PatternRewriter& rewriter) const override {
    // -0.0 is the only float additive identity; integers use 0 (IsNeutral reads either as zero).
    const Neutral zero = IsFloat(op.getA()) ? Neutral::kNegZero : Neutral::kPosZero;
    if (IsNeutral(op.getB(), zero)) return ReplaceByOperand(rewriter, op, op.getA(), op.getB());
    if (IsNeutral(op.getA(), zero)) return ReplaceByOperand(rewriter, op, op.getB(), op.getA());
    return failure();
  }
};

struct SubNeutral : mlir::OpRewritePattern<tsr_ops::SubOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tsr_ops::SubOp op, PatternRewriter& rewriter) const override {
    // x - (+0.0) == x + (-0.0) == x; only the right operand is neutral for Sub.
    if (IsNeutral(op.getB(), Neutral::kPosZero)) return ReplaceByOperand(rewriter, op, op.getA(), op.getB());
    return failure();
  }
};

struct MulNeutral : mlir::OpRewritePattern<tsr_ops::MulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tsr_ops::MulOp op, PatternRewriter& rewriter) const override {
    // x * 0 is deliberately not folded: NaN * 0 and Inf * 0 are NaN, and x * 0 is -0.0 for x < 0.
    if (IsNeutral(op.getB(), Neutral::kOne)) return ReplaceByOperand(rewriter, op, op.getA(), op.getB());
    if (IsNeutral(op.getA(), Neutral::kOne)) return ReplaceByOperand(rewriter, op, op.getB(), op.getA());
    return failure();
  }
};

struct DivNeutral : mlir::OpRewritePattern<tsr_ops::DivOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tsr_ops::DivOp op, PatternRewriter& rewriter) const override {
    // IEEE division by 1 is exact (correctly rounded x / 1 is x); integer division by 1 too.
    if (IsNeutral(op.getB(), Neutral::kOne)) return ReplaceByOperand(rewriter, op, op.getA(), op.getB());
    return failure();
  }
};

// -(-x) == x: negation flips the sign bit (floats, NaN and zeros included) or negates in two's
// complement, which wraps back to x even for the most negative integer.
struct NegNeg : mlir::OpRewritePattern<tsr_ops::NegOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tsr_ops::NegOp op, PatternRewriter& rewriter) const override {
    auto inner = op.getX().getDefiningOp<tsr_ops::NegOp>();
    if (!inner || inner.getX().getType() != op.getType()) return failure();
    rewriter.replaceOp(op, inner.getX());
    return success();
  }
};

// An op that moves or copies elements into a result of the operand's own type is the identity:
// a dynamic dim is Tessera's one batch size N, so equal types mean equal shapes; a reshape keeps
// the row-major order, an Expand or Tile to the same shape copies every element once (all
// repeats 1), a Cast to the same dtype converts nothing.
template <typename OpTy>
struct SameTypeIsIdentity : mlir::OpRewritePattern<OpTy> {
  using mlir::OpRewritePattern<OpTy>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpTy op, PatternRewriter& rewriter) const override {
    Value x = op->getOperand(0);
    if (x.getType() != op->getResult(0).getType()) return failure();
    rewriter.replaceOp(op, x);
    return success();
  }
};

bool IsView(mlir::Operation* op) {
  return op != nullptr &&
         llvm::isa<tsr_ops::ReshapeOp, tsr_ops::SqueezeOp, tsr_ops::UnsqueezeOp, tsr_ops::FlattenOp>(op);
}

int NumDynamic(RankedTensorType type) {
  int n = 0;
  for (int64_t d : type.getShape()) n += mlir::ShapedType::isDynamic(d);
  return n;
}

// Replaces `op` by Reshape(source, shape of `type`) when a constant shape can say it: a -1
// stands for the one batch dim (the registry infers it back as N from the element count, which
// the reshape preserves), and allowzero keeps a 0-sized dim from copying the source's dim.
LogicalResult ReplaceByReshape(PatternRewriter& rewriter, mlir::Operation* op, Value source) {
  auto type = llvm::cast<RankedTensorType>(op->getResult(0).getType());
  auto source_type = llvm::cast<RankedTensorType>(source.getType());
  const int dynamic = NumDynamic(type);
  if (dynamic > 1 || dynamic != NumDynamic(source_type)) return failure();
  const bool has_zero = llvm::is_contained(type.getShape(), 0);
  if (has_zero && dynamic > 0) return failure();  // allowzero forbids 0 together with -1
  Value shape = ShapeConstant(rewriter, op->getLoc(), type);
  rewriter.replaceOpWithNewOp<tsr_ops::ReshapeOp>(op, type, source, shape, has_zero ? 1 : 0);
  return success();
}

// Reshape, Squeeze, Unsqueeze and Flatten all keep the row-major element order and only change
// the shape, so a chain of them is one Reshape from the chain's source to the last shape; a lone
// Squeeze / Unsqueeze / Flatten becomes a Reshape too, the one form later passes handle.
struct ViewChainToReshape : mlir::RewritePattern {
  explicit ViewChainToReshape(mlir::MLIRContext* context)
      : RewritePattern(mlir::Pattern::MatchAnyOpTypeTag(), /*benefit=*/1, context) {}
  LogicalResult matchAndRewrite(mlir::Operation* op, PatternRewriter& rewriter) const override {
    if (!IsView(op)) return failure();
    Value source = op->getOperand(0);
    while (IsView(source.getDefiningOp())) source = source.getDefiningOp()->getOperand(0);
    if (llvm::isa<tsr_ops::ReshapeOp>(op) && source == op->getOperand(0)) return failure();  // already one Reshape
    return ReplaceByReshape(rewriter, op, source);
  }
};

// A Transpose that keeps the relative order of every dim that is not statically 1 reads the
// elements in their stored order: it is a Reshape. (A batch dim counts as not 1.)
struct TransposeOfUnitDimsToReshape : mlir::OpRewritePattern<tsr_ops::TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tsr_ops::TransposeOp op, PatternRewriter& rewriter) const override {
    auto in = llvm::cast<RankedTensorType>(op.getData().getType());
    const int64_t rank = in.getRank();
    llvm::SmallVector<int64_t> perm;
    if (std::optional<llvm::ArrayRef<int64_t>> p = op.getPerm()) {
      for (int64_t a : *p) perm.push_back(a < 0 ? a + rank : a);
    } else {
      for (int64_t i = rank - 1; i >= 0; --i) perm.push_back(i);
    }
    int64_t last = -1;
    for (int64_t axis : perm) {
      if (in.getDimSize(axis) == 1) continue;
      if (axis < last) return failure();
      last = axis;
    }
    return ReplaceByReshape(rewriter, op, op.getData());
  }
};

// Whether every value of `narrow` converts to `wide` exactly, so converting back restores it:
// float widenings (NaN, Inf and -0.0 included) and integer widenings that keep the sign.
bool WidensExactly(mlir::Type narrow, mlir::Type wide) {
  const unsigned n = narrow.getIntOrFloatBitWidth(), w = wide.getIntOrFloatBitWidth();
  if (narrow.isF16() || narrow.isBF16()) return wide.isF32() || wide.isF64();
  if (narrow.isF32()) return wide.isF64();
  if (narrow.isSignlessInteger() && n > 1) return wide.isSignlessInteger() && w > n;
  if (narrow.isUnsignedInteger()) return wide.isSignlessInteger() && w > n;  // ui8 -> i32/i64: 0..255 fits
  return false;
}

struct CastRoundTrip : mlir::OpRewritePattern<tsr_ops::CastOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tsr_ops::CastOp op, PatternRewriter& rewriter) const override {
    auto inner = op.getInput().getDefiningOp<tsr_ops::CastOp>();
    if (!inner) return failure();
    Value x = inner.getInput();
    if (x.getType() != op.getType()) return failure();
    if (!WidensExactly(mlir::getElementTypeOrSelf(x.getType()), mlir::getElementTypeOrSelf(inner.getType()))) {
      return failure();
    }
    rewriter.replaceOp(op, x);
    return success();
  }
};

bool IsConstantBool(Value v, bool expected) {
  mlir::ElementsAttr attr;
  if (!mlir::matchPattern(v, mlir::m_Constant(&attr)) || !attr.isSplat()) return false;
  auto i = llvm::dyn_cast<mlir::IntegerAttr>(attr.getSplatValue<mlir::Attribute>());
  return i && i.getValue().getBoolValue() == expected;
}

// Dropout outside training is the identity (ONNX; the reference kernel copies the input and sets
// the mask all true). So is training with ratio 0: every draw is kept and scaled by 1 / (1 - 0),
// which is exact. Dropout is stateful, so the greedy driver never erases it by itself.
struct DropoutToIdentity : mlir::OpRewritePattern<tsr_ops::DropoutOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tsr_ops::DropoutOp op, PatternRewriter& rewriter) const override {
    const bool inference = !op.getTrainingMode() || IsConstantBool(op.getTrainingMode(), false);
    const bool keeps_all = op.getRatio() && IsNeutral(op.getRatio(), Neutral::kPosZero);
    if (!inference && !keeps_all) return failure();
    if (op.getOutput().getType() != op.getData().getType()) return failure();
    Value mask = op.getMask();
    if (!mask || mask.use_empty()) {
      rewriter.replaceAllUsesWith(op.getOutput(), op.getData());
      rewriter.eraseOp(op);
      return success();
    }
    auto mask_type = llvm::cast<RankedTensorType>(mask.getType());
    if (!mask_type.hasStaticShape()) return failure();  // a constant cannot have the batch dim
    Value all_true =
        rewriter.create<tsr_ops::ConstantOp>(op.getLoc(), mask_type, mlir::DenseElementsAttr::get(mask_type, true));
    rewriter.replaceOp(op, {op.getData(), all_true});
    return success();
  }
};

class AlgebraicSimplifyPass : public mlir::PassWrapper<AlgebraicSimplifyPass, mlir::OperationPass<mlir::func::FuncOp>> {
 public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(AlgebraicSimplifyPass)

  llvm::StringRef getArgument() const override { return "tsr-algebraic-simplify"; }
  llvm::StringRef getDescription() const override {
    return "Remove neutral arithmetic, identity reshapes/broadcasts/casts and inference-mode Dropout";
  }
  void getDependentDialects(mlir::DialectRegistry& registry) const override { registry.insert<tsr_ops::TsrDialect>(); }

  mlir::LogicalResult initialize(mlir::MLIRContext* context) override {
    mlir::RewritePatternSet patterns(context);
    patterns.add<AddNeutral, SubNeutral, MulNeutral, DivNeutral, NegNeg, ViewChainToReshape,
                 TransposeOfUnitDimsToReshape, CastRoundTrip, DropoutToIdentity>(context);
    patterns.add<SameTypeIsIdentity<tsr_ops::ReshapeOp>, SameTypeIsIdentity<tsr_ops::SqueezeOp>,
                 SameTypeIsIdentity<tsr_ops::UnsqueezeOp>, SameTypeIsIdentity<tsr_ops::FlattenOp>,
                 SameTypeIsIdentity<tsr_ops::ExpandOp>, SameTypeIsIdentity<tsr_ops::TileOp>,
                 SameTypeIsIdentity<tsr_ops::CastOp>>(context, /*benefit=*/2);
    // Transpose chains compose with the op's own canonicalization pattern.
    tsr_ops::TransposeOp::getCanonicalizationPatterns(patterns, context);
    patterns_ = std::move(patterns);
    return mlir::success();
  }

  void runOnOperation() override {
    if (mlir::failed(mlir::applyPatternsAndFoldGreedily(getOperation(), patterns_))) {
      getOperation().emitError("tsr-algebraic-simplify did not converge");
      signalPassFailure();
    }
  }

 private:
  mlir::FrozenRewritePatternSet patterns_;
};

}  // namespace

std::unique_ptr<mlir::Pass> CreateAlgebraicSimplifyPass() { return std::make_unique<AlgebraicSimplifyPass>(); }

void RegisterAlgebraicSimplifyPass() { mlir::PassRegistration<AlgebraicSimplifyPass>(); }

}  // namespace tsr

// Folders and canonicalization patterns of the tsr ops that have them (listed in
// tsr_ods_generator.cc's ExtraOdsLines, which sets hasFolder / hasCanonicalizer):
//   Identity(x) -> x
//   Add(x, zero) -> x, Mul(x, one) -> x (either side) when the result type is x's type
//     (no broadcast). Floats fold only with IEEE-exact neutral elements: x + -0.0 (x + +0.0
//     would turn -0.0 into +0.0) and x * 1.0.
//   Transpose(x) -> x for the identity permutation; Transpose(Transpose(x, p), q) ->
//     Transpose(x, p o q), or x when the composition is the identity.
//   Reshape(x) -> x when the static result type is x's; Reshape(Reshape(x, s1), s2) ->
//     Reshape(x, s2) when s2 is a constant without 0 entries (a 0 copies a dimension of the
//     reshaped input, which the rewrite changes) or allowzero is set.
#include <numeric>
#include <vector>

#include "compiler/dialect/tsr_dialect.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::tsr {
namespace {

enum class Neutral { kAdditive, kMultiplicative };

// Whether `attr` is a splat constant that is the neutral element of the operation.
bool IsNeutral(Attribute attr, Neutral kind) {
  auto splat = llvm::dyn_cast_or_null<SplatElementsAttr>(attr);
  if (!splat) return false;
  Type element = splat.getElementType();
  if (llvm::isa<FloatType>(element)) {
    const llvm::APFloat v = splat.getSplatValue<llvm::APFloat>();
    return kind == Neutral::kAdditive ? v.isZero() && v.isNegative() : v.isExactlyValue(1.0);
  }
  if (llvm::isa<IntegerType>(element)) {
    const llvm::APInt v = splat.getSplatValue<llvm::APInt>();
    return kind == Neutral::kAdditive ? v.isZero() : v.isOne();
  }
  return false;
}

OpFoldResult FoldNeutral(Operation* op, Attribute lhs_attr, Attribute rhs_attr, Neutral kind) {
  Value lhs = op->getOperand(0), rhs = op->getOperand(1);
  const Type result = op->getResult(0).getType();
  if (IsNeutral(rhs_attr, kind) && lhs.getType() == result) return lhs;
  if (IsNeutral(lhs_attr, kind) && rhs.getType() == result) return rhs;
  return {};
}

// The permutation of a Transpose (reversed axes when absent, as the registry's default).
std::vector<int64_t> Permutation(TransposeOp op) {
  const int64_t rank = llvm::cast<RankedTensorType>(op.getData().getType()).getRank();
  if (std::optional<llvm::ArrayRef<int64_t>> perm = op.getPerm()) {
    std::vector<int64_t> p(perm->begin(), perm->end());
    // The verifier ran the registry's checks; normalize negative axes it accepted.
    for (int64_t& a : p) {
      if (a < 0) a += rank;
    }
    return p;
  }
  std::vector<int64_t> p(rank);
  std::iota(p.rbegin(), p.rend(), 0);
  return p;
}

bool IsIdentity(const std::vector<int64_t>& perm) {
  for (size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

struct FoldTransposeChain : public OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp outer, PatternRewriter& rewriter) const override {
    auto inner = outer.getData().getDefiningOp<TransposeOp>();
    if (!inner) return failure();
    const std::vector<int64_t> p = Permutation(inner), q = Permutation(outer);
    // outer output dim i = inner output dim q[i] = input dim p[q[i]].
    std::vector<int64_t> composed(q.size());
    for (size_t i = 0; i < q.size(); ++i) composed[i] = p[q[i]];
    if (IsIdentity(composed) && inner.getData().getType() == outer.getType()) {
      rewriter.replaceOp(outer, inner.getData());
      return success();
    }
    rewriter.replaceOpWithNewOp<TransposeOp>(outer, outer.getType(), inner.getData(),
                                             rewriter.getDenseI64ArrayAttr(composed));
    return success();
  }
};

struct FoldReshapeChain : public OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReshapeOp outer, PatternRewriter& rewriter) const override {
    auto inner = outer.getData().getDefiningOp<ReshapeOp>();
    if (!inner) return failure();
    if (outer.getAllowzero() == 0) {
      DenseIntElementsAttr shape;
      if (!matchPattern(outer.getShape(), m_Constant(&shape))) return failure();
      for (const llvm::APInt& d : shape.getValues<llvm::APInt>()) {
        if (d.isZero()) return failure();
      }
    }
    rewriter.modifyOpInPlace(outer, [&] { outer.getDataMutable().assign(inner.getData()); });
    return success();
  }
};

}  // namespace

OpFoldResult IdentityOp::fold(FoldAdaptor) {
  return getInput().getType() == getType() ? OpFoldResult(getInput()) : OpFoldResult();
}

OpFoldResult AddOp::fold(FoldAdaptor adaptor) {
  return FoldNeutral(*this, adaptor.getA(), adaptor.getB(), Neutral::kAdditive);
}

OpFoldResult MulOp::fold(FoldAdaptor adaptor) {
  return FoldNeutral(*this, adaptor.getA(), adaptor.getB(), Neutral::kMultiplicative);
}

OpFoldResult TransposeOp::fold(FoldAdaptor) {
  if (IsIdentity(Permutation(*this)) && getData().getType() == getType()) return getData();
  return {};
}

void TransposeOp::getCanonicalizationPatterns(RewritePatternSet& patterns, MLIRContext* context) {
  patterns.add<FoldTransposeChain>(context);
}

OpFoldResult ReshapeOp::fold(FoldAdaptor) {
  auto type = llvm::cast<RankedTensorType>(getType());
  if (type.hasStaticShape() && getData().getType() == type) return getData();
  return {};
}

void ReshapeOp::getCanonicalizationPatterns(RewritePatternSet& patterns, MLIRContext* context) {
  patterns.add<FoldReshapeChain>(context);
}

}  // namespace mlir::tsr

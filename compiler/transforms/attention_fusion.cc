// tsr-fuse-attention (see attention_fusion.h): each Softmax that sits in the attention chain
// -- heads split off q, k and v, the scores' MatMul, scale and mask before it, the MatMul
// with v and the heads merged after it -- becomes one MultiHeadAttention with the chain's
// scale and mask, reading q, k and v (or the packed projection they were split from) as
// the projections wrote them.
#include "compiler/transforms/attention_fusion.h"

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/dialect/tsr_dialect.h"
#include "compiler/dialect/tsr_op_signature.h"
#include "compiler/transforms/constant_values.h"
#include "compiler/transforms/match_helpers.h"
#include "graph/op_registry.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/Pass/Pass.h"

namespace tsr {
namespace {

using mlir::Operation;
using mlir::Value;

using match::Is;
using match::SingleUseProducer;
using match::SingleUser;
using match::TypeOf;

bool HasPerm(Operation* transpose, std::initializer_list<int64_t> perm) {
  auto attr = transpose->getAttrOfType<mlir::DenseI64ArrayAttr>("perm");
  return attr && llvm::equal(attr.asArrayRef(), perm);
}

// Whether `split` [B, S, C] -> [B, S, C/heads... ] reshapes: the first two dims kept, the
// last one cut into [heads, size] -- the order a model's Reshape into heads keeps.
bool SplitsLastDim(mlir::RankedTensorType flat, mlir::RankedTensorType split) {
  return flat && split && flat.hasStaticShape() && split.hasStaticShape() && flat.getRank() == 3 &&
         split.getRank() == 4 && flat.getDimSize(0) == split.getDimSize(0) &&
         flat.getDimSize(1) == split.getDimSize(1) && split.getDimSize(2) * split.getDimSize(3) == flat.getDimSize(2);
}

// q, k or v split into heads: Transpose(Reshape(x [B,S,H*D] -> [B,S,H,D]), perm).
struct Heads {
  Operation* transpose = nullptr;
  Operation* reshape = nullptr;
  Value x;
  int64_t heads = 0, size = 0;
};

std::optional<Heads> ReadHeads(Value v, std::initializer_list<int64_t> perm) {
  Heads h;
  h.transpose = SingleUseProducer(v, "tsr.Transpose");
  if (h.transpose == nullptr || !HasPerm(h.transpose, perm)) return std::nullopt;
  h.reshape = SingleUseProducer(h.transpose->getOperand(0), "tsr.Reshape");
  if (h.reshape == nullptr) return std::nullopt;
  h.x = h.reshape->getOperand(0);
  const auto split = TypeOf(h.reshape->getResult(0));
  if (!SplitsLastDim(TypeOf(h.x), split)) return std::nullopt;
  h.heads = split.getDimSize(2);
  h.size = split.getDimSize(3);
  return h;
}

// One attention chain, from the heads split off q, k and v to the heads merged back.
struct Chain {
  Heads q, k, v;
  Operation* scores = nullptr;    // MatMul(qh, kt)
  Operation* scale_op = nullptr;  // Mul or Div by a scalar constant, if any
  Operation* where = nullptr;     // Where(mask, fill, scores), if any
  Operation* softmax = nullptr;
  Operation* context = nullptr;  // MatMul(softmax, vh)
  Operation* merge_transpose = nullptr;
  Operation* merge_reshape = nullptr;  // the chain's result
  Operation* split = nullptr;          // packed: the Split that cut q, k and v from one value
  double scale = 1.0, mask_value = 0.0;
  Value mask;
  bool keep_mask = false;  // the mask is true where the scores are kept

  std::vector<Operation*> Ops() const {
    std::vector<Operation*> ops = {merge_reshape, merge_transpose, context, softmax};
    for (Operation* op : {where, scale_op}) {
      if (op != nullptr) ops.push_back(op);
    }
    ops.push_back(scores);
    for (const Heads* h : {&q, &k, &v}) {
      ops.push_back(h->transpose);
      ops.push_back(h->reshape);
    }
    if (split != nullptr) ops.push_back(split);
    return ops;  // users before producers: erasable in this order
  }
};

// The scale between the scores' MatMul and `s` (a Mul by, or a Div by, a positive scalar
// constant), recorded in `c`; `s` moves to the MatMul's result. False when `s` comes from
// some other Mul or Div.
bool ReadScale(Value& s, Chain& c) {
  const auto type = TypeOf(s);
  if (Operation* mul = SingleUseProducer(s, "tsr.Mul")) {
    for (int i = 0; i < 2; ++i) {
      std::optional<double> value = ConstantScalar(mul->getOperand(i));
      if (value && TypeOf(mul->getOperand(1 - i)) == type) {
        c.scale_op = mul;
        c.scale = *value;
        s = mul->getOperand(1 - i);
        return true;
      }
    }
    return false;
  }
  if (Operation* div = SingleUseProducer(s, "tsr.Div")) {
    std::optional<double> divisor = ConstantScalar(div->getOperand(1));
    if (!divisor || *divisor == 0.0 || TypeOf(div->getOperand(0)) != type) return false;
    c.scale_op = div;
    c.scale = 1.0 / *divisor;
    s = div->getOperand(0);
  }
  return true;
}

// The negation of a keep-mask, for MultiHeadAttention's replace-where-true mask: a
// constant's values negated, otherwise a Not before the fused op.
Value ReplaceMask(mlir::OpBuilder& builder, Value keep, mlir::Location loc) {
  if (auto constant = keep.getDefiningOp<mlir::tsr::ConstantOp>()) {
    if (auto dense = llvm::dyn_cast<mlir::DenseElementsAttr>(constant.getValue())) {
      llvm::SmallVector<bool> negated;
      for (bool b : dense.getValues<bool>()) negated.push_back(!b);
      return builder.create<mlir::tsr::ConstantOp>(loc, mlir::DenseElementsAttr::get(dense.getType(), negated));
    }
  }
  mlir::OperationState state(loc, "tsr.Not");
  state.addOperands(keep);
  state.addTypes(keep.getType());
  return builder.create(state)->getResult(0);
}

// Whether q, k and v are the three equal parts of one Split along the last axis, each used
// only by its head split: then the Split's input feeds the fused op, packed.
Operation* PackedSplit(const Chain& c) {
  Operation* split = c.q.x.getDefiningOp();
  if (!Is(split, "tsr.Split") || split->getNumResults() != 3 || split->hasAttr(mlir::tsr::kShardingAttrName)) {
    return nullptr;
  }
  const Value parts[] = {c.q.x, c.k.x, c.v.x};
  for (int i = 0; i < 3; ++i) {
    if (parts[i] != split->getResult(i) || !parts[i].hasOneUse()) return nullptr;
  }
  const auto in = TypeOf(split->getOperand(0));
  if (!in || !in.hasStaticShape() || in.getRank() != 3) return nullptr;
  auto axis = split->getAttrOfType<mlir::IntegerAttr>("axis");
  const int64_t a = axis ? axis.getInt() : 0;
  if (a != 2 && a != -1) return nullptr;
  const int64_t width = TypeOf(c.q.x).getDimSize(2);
  if (TypeOf(c.k.x).getDimSize(2) != width || TypeOf(c.v.x).getDimSize(2) != width || in.getDimSize(2) != 3 * width) {
    return nullptr;
  }
  return split;
}

std::optional<Chain> ReadChain(Operation* softmax) {
  Chain c;
  c.softmax = softmax;
  const auto probs = TypeOf(softmax->getResult(0));
  if (!probs || !probs.hasStaticShape() || probs.getRank() != 4 ||
      !(probs.getElementType().isF32() || probs.getElementType().isF64()) ||
      softmax->hasAttr(mlir::tsr::kShardingAttrName)) {
    return std::nullopt;
  }
  auto axis = softmax->getAttrOfType<mlir::IntegerAttr>("axis");
  if (axis && axis.getInt() != -1 && axis.getInt() != 3) return std::nullopt;
  // After: MatMul(probs, vh), heads merged.
  c.context = SingleUser(softmax, "tsr.MatMul");
  if (c.context == nullptr || c.context->getOperand(0) != softmax->getResult(0)) return std::nullopt;
  c.merge_transpose = SingleUser(c.context, "tsr.Transpose");
  if (c.merge_transpose == nullptr || !HasPerm(c.merge_transpose, {0, 2, 1, 3})) return std::nullopt;
  c.merge_reshape = SingleUser(c.merge_transpose, "tsr.Reshape");
  if (c.merge_reshape == nullptr ||
      !SplitsLastDim(TypeOf(c.merge_reshape->getResult(0)), TypeOf(c.merge_transpose->getResult(0)))) {
    return std::nullopt;
  }
  // Before: Where(mask, fill, scaled scores).
  Value s = softmax->getOperand(0);
  if (Operation* where = SingleUseProducer(s, "tsr.Where")) {
    // Where(mask, fill, s) replaces the scores where the mask is true; Where(keep, s, fill)
    // (HuggingFace's form) where it is false.
    const int fill_slot = ConstantScalar(where->getOperand(1)) ? 1 : 2;
    std::optional<double> fill = ConstantScalar(where->getOperand(fill_slot));
    const Value scores = where->getOperand(3 - fill_slot);
    const auto mask = TypeOf(where->getOperand(0));
    if (!fill || !mask || !mask.getElementType().isInteger(1) || mask.getRank() > 4 || TypeOf(scores) != probs) {
      return std::nullopt;
    }
    c.where = where;
    c.mask = where->getOperand(0);
    c.keep_mask = fill_slot == 2;
    c.mask_value = *fill;
    s = scores;
  }
  if (!ReadScale(s, c) || !std::isfinite(c.scale) || c.scale <= 0.0) return std::nullopt;
  c.scores = SingleUseProducer(s, "tsr.MatMul");
  if (c.scores == nullptr) return std::nullopt;
  std::optional<Heads> q = ReadHeads(c.scores->getOperand(0), {0, 2, 1, 3});
  std::optional<Heads> k = ReadHeads(c.scores->getOperand(1), {0, 2, 3, 1});
  std::optional<Heads> v = ReadHeads(c.context->getOperand(1), {0, 2, 1, 3});
  if (!q || !k || !v) return std::nullopt;
  c.q = *q;
  c.k = *k;
  c.v = *v;
  if (q->heads != k->heads || q->heads != v->heads || q->size != k->size ||
      TypeOf(c.merge_reshape->getResult(0)).getDimSize(2) != v->heads * v->size) {
    return std::nullopt;
  }
  for (Value x : {q->x, k->x, v->x}) {
    if (TypeOf(x).getElementType() != probs.getElementType()) return std::nullopt;
  }
  c.split = PackedSplit(c);
  return c;
}

class AttentionFusionPass : public mlir::PassWrapper<AttentionFusionPass, mlir::OperationPass<mlir::func::FuncOp>> {
 public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(AttentionFusionPass)

  AttentionFusionPass() = default;
  AttentionFusionPass(const AttentionFusionPass& other) : PassWrapper(other) {}

  llvm::StringRef getArgument() const override { return "tsr-fuse-attention"; }
  llvm::StringRef getDescription() const override {
    return "Fuses the scaled dot-product attention chain (heads split, MatMul, scale, mask, Softmax, MatMul, heads "
           "merged) into MultiHeadAttention";
  }
  void getDependentDialects(mlir::DialectRegistry& registry) const override {
    registry.insert<mlir::tsr::TsrDialect>();
  }

  void runOnOperation() override {
    const OpDef* def = OpRegistry::Global().Find("MultiHeadAttention");
    if (def == nullptr) {
      getOperation().emitError() << "tsr-fuse-attention: MultiHeadAttention is not registered";
      return signalPassFailure();
    }
    std::vector<Operation*> softmaxes;
    getOperation().walk([&](Operation* op) {
      if (Is(op, "tsr.Softmax")) softmaxes.push_back(op);
    });
    mlir::OpBuilder builder(&getContext());
    // Chains share no ops (each intermediate has one use), so fusing one leaves the
    // others' Softmax ops in place.
    for (Operation* softmax : softmaxes) {
      std::optional<Chain> chain = ReadChain(softmax);
      if (chain && !Fuse(builder, *def, *chain)) return signalPassFailure();
    }
  }

 private:
  bool Fuse(mlir::OpBuilder& builder, const OpDef& def, const Chain& c) {
    mlir::MLIRContext* context = &getContext();
    std::vector<std::optional<Value>> slots;
    if (c.split != nullptr) {
      slots = {c.split->getOperand(0), std::nullopt, std::nullopt};
    } else {
      slots = {c.q.x, c.k.x, c.v.x};
    }
    builder.setInsertionPoint(c.merge_reshape);
    if (c.mask) slots.push_back(c.keep_mask ? ReplaceMask(builder, c.mask, c.where->getLoc()) : c.mask);
    absl::StatusOr<mlir::tsr::OperandLayout> layout = mlir::tsr::OperandsFromSlots(def, slots);
    if (!layout.ok()) {
      c.softmax->emitOpError() << "tsr-fuse-attention: " << std::string(layout.status().message());
      return false;
    }
    const std::vector<Operation*> ops = c.Ops();
    llvm::SmallVector<mlir::Location> parts;
    for (auto it = ops.rbegin(); it != ops.rend(); ++it) parts.push_back((*it)->getLoc());
    mlir::Location loc = mlir::FusedLoc::get(parts, mlir::StringAttr::get(context, kAttentionLocMetadata), context);
    if (auto name = llvm::dyn_cast<mlir::NameLoc>(c.merge_reshape->getLoc())) {
      loc = mlir::NameLoc::get(name.getName(), loc);
    }
    mlir::OperationState state(loc, "tsr.MultiHeadAttention");
    state.addOperands(layout->operands);
    state.addTypes(c.merge_reshape->getResult(0).getType());
    state.addAttribute("operandSegmentSizes", builder.getDenseI32ArrayAttr(layout->segment_sizes));
    state.addAttribute("num_heads", builder.getI64IntegerAttr(c.q.heads));
    state.addAttribute("scale", builder.getF64FloatAttr(c.scale));
    if (c.mask) state.addAttribute("mask_value", builder.getF64FloatAttr(c.mask_value));
    Operation* fused = builder.create(state);
    c.merge_reshape->getResult(0).replaceAllUsesWith(fused->getResult(0));
    for (Operation* op : ops) op->erase();
    ++num_fused_;
    return true;
  }

  Statistic num_fused_{this, "attention", "attention chains fused into MultiHeadAttention"};
};

}  // namespace

std::unique_ptr<mlir::Pass> CreateAttentionFusionPass() { return std::make_unique<AttentionFusionPass>(); }

void RegisterAttentionFusionPass() { mlir::PassRegistration<AttentionFusionPass>(); }

}  // namespace tsr

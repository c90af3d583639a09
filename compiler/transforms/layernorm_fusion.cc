// tsr-fuse-layernorm (see layernorm_fusion.h): from each ReduceMean over the last axis, the
// written-out layer normalization chain is read forward; when every intermediate is used
// only inside it, the chain's last op is replaced by one LayerNormalization.
#include "compiler/transforms/layernorm_fusion.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/dialect/tsr_dialect.h"
#include "compiler/dialect/tsr_op_signature.h"
#include "compiler/transforms/constant_values.h"
#include "compiler/transforms/match_helpers.h"
#include "graph/op_registry.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/Pass/Pass.h"

namespace tsr {
namespace {

using match::Is;
using match::SingleUseProducer;
using match::SingleUser;
using match::TypeOf;
using mlir::Operation;
using mlir::Value;

// Whether `reduce` is a ReduceMean over the last axis only, keeping it (size 1).
bool MeansLastAxis(Operation* reduce) {
  if (!Is(reduce, "tsr.ReduceMean") || reduce->getNumOperands() != 2) return false;
  auto keepdims = reduce->getAttrOfType<mlir::IntegerAttr>("keepdims");
  if (keepdims && keepdims.getInt() != 1) return false;
  const auto in = TypeOf(reduce->getOperand(0));
  if (!in || !in.hasStaticShape() || in.getRank() < 1 || !in.getElementType().isF32()) return false;
  auto constant = reduce->getOperand(1).getDefiningOp<mlir::tsr::ConstantOp>();
  auto axes = constant ? llvm::dyn_cast<mlir::DenseIntElementsAttr>(constant.getValue()) : nullptr;
  if (!axes || axes.getNumElements() != 1) return false;
  const int64_t axis = (*axes.getValues<llvm::APInt>().begin()).getSExtValue();
  return axis == -1 || axis == in.getRank() - 1;
}

// x * x as Pow(x, 2) or Mul(x, x).
bool Squares(Operation* op, Value x) {
  if (Is(op, "tsr.Pow")) return op->getOperand(0) == x && ConstantScalar(op->getOperand(1)) == 2.0;
  return Is(op, "tsr.Mul") && op->getOperand(0) == x && op->getOperand(1) == x;
}

// Of the binary `op`, the operand other than `v` when it has exactly `type` (gamma, beta:
// one value per element of the normalized axis), else null.
Value OtherOperand(Operation* op, Value v, mlir::RankedTensorType type) {
  for (int i = 0; i < 2; ++i) {
    if (op->getOperand(i) == v && TypeOf(op->getOperand(1 - i)) == type) return op->getOperand(1 - i);
  }
  return nullptr;
}

struct Chain {
  Value x, gamma, beta;
  double epsilon = 0.0;
  Operation* mean = nullptr;    // ReduceMean(x): its type is LayerNormalization's Mean's
  std::vector<Operation*> ops;  // from the first to the last
};

std::optional<Chain> ReadChain(Operation* mean) {
  if (!MeansLastAxis(mean)) return std::nullopt;
  Chain c;
  c.mean = mean;
  c.x = mean->getOperand(0);
  Operation* sub = SingleUser(mean, "tsr.Sub");
  if (sub == nullptr || sub->getOperand(0) != c.x || sub->getOperand(1) != mean->getResult(0)) return std::nullopt;
  const Value d = sub->getResult(0);
  if (TypeOf(d) != TypeOf(c.x)) return std::nullopt;
  // d's users: its square and the Div (Mul(d, d) counts twice).
  Operation *square = nullptr, *div = nullptr;
  for (Operation* user : d.getUsers()) {
    if (Squares(user, d) && (square == nullptr || square == user)) {
      square = user;
    } else if (Is(user, "tsr.Div") && user->getOperand(0) == d && div == nullptr) {
      div = user;
    } else {
      return std::nullopt;
    }
  }
  if (square == nullptr || div == nullptr) return std::nullopt;
  Operation* var = SingleUser(square, "tsr.ReduceMean");
  if (var == nullptr || !MeansLastAxis(var) || TypeOf(var->getResult(0)) != TypeOf(mean->getResult(0))) {
    return std::nullopt;
  }
  Operation* add_eps = SingleUser(var, "tsr.Add");
  if (add_eps == nullptr) return std::nullopt;
  const int var_slot = add_eps->getOperand(0) == var->getResult(0) ? 0 : 1;
  std::optional<double> eps = ConstantScalar(add_eps->getOperand(1 - var_slot));
  if (!eps || *eps < 0.0 || TypeOf(add_eps->getResult(0)) != TypeOf(var->getResult(0))) return std::nullopt;
  c.epsilon = *eps;
  Operation* sqrt = SingleUser(add_eps, "tsr.Sqrt");
  if (sqrt == nullptr || !sqrt->getResult(0).hasOneUse() || *sqrt->getResult(0).getUsers().begin() != div ||
      div->getOperand(1) != sqrt->getResult(0)) {
    return std::nullopt;
  }
  c.ops = {mean, sub, square, var, add_eps, sqrt, div};
  // Then gamma and beta, each optional: one value per element of the last axis.
  const auto x_type = TypeOf(c.x);
  const auto param = mlir::RankedTensorType::get({x_type.getShape().back()}, x_type.getElementType());
  Operation* last = div;
  if (Operation* mul = SingleUser(last, "tsr.Mul")) {
    if (Value gamma = OtherOperand(mul, last->getResult(0), param)) {
      c.gamma = gamma;
      c.ops.push_back(mul);
      last = mul;
    }
  }
  if (Operation* add = SingleUser(last, "tsr.Add")) {
    if (Value beta = OtherOperand(add, last->getResult(0), param)) {
      c.beta = beta;
      c.ops.push_back(add);
      last = add;
    }
  }
  if (TypeOf(last->getResult(0)) != x_type) return std::nullopt;
  return c;
}

class LayerNormFusionPass : public mlir::PassWrapper<LayerNormFusionPass, mlir::OperationPass<mlir::func::FuncOp>> {
 public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(LayerNormFusionPass)

  LayerNormFusionPass() = default;
  LayerNormFusionPass(const LayerNormFusionPass& other) : PassWrapper(other) {}

  llvm::StringRef getArgument() const override { return "tsr-fuse-layernorm"; }
  llvm::StringRef getDescription() const override {
    return "Fuses written-out layer normalization (ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div, Mul, Add) into "
           "LayerNormalization";
  }
  void getDependentDialects(mlir::DialectRegistry& registry) const override {
    registry.insert<mlir::tsr::TsrDialect>();
  }

  void runOnOperation() override {
    const OpDef* def = OpRegistry::Global().Find("LayerNormalization");
    if (def == nullptr) {
      getOperation().emitError() << "tsr-fuse-layernorm: LayerNormalization is not registered";
      return signalPassFailure();
    }
    std::vector<Operation*> means;
    getOperation().walk([&](Operation* op) {
      if (Is(op, "tsr.ReduceMean")) means.push_back(op);
    });
    llvm::DenseSet<Operation*> erased;
    mlir::OpBuilder builder(&getContext());
    for (Operation* mean : means) {
      if (erased.contains(mean)) continue;
      std::optional<Chain> chain = ReadChain(mean);
      if (!chain) continue;
      for (Operation* op : chain->ops) erased.insert(op);
      if (!Fuse(builder, *def, *chain)) return signalPassFailure();
    }
  }

 private:
  bool Fuse(mlir::OpBuilder& builder, const OpDef& def, const Chain& c) {
    mlir::MLIRContext* context = &getContext();
    Operation* last = c.ops.back();
    llvm::SmallVector<mlir::Location> parts;
    for (Operation* op : c.ops) parts.push_back(op->getLoc());
    mlir::Location loc = mlir::FusedLoc::get(parts, mlir::StringAttr::get(context, kLayerNormLocMetadata), context);
    if (auto name = llvm::dyn_cast<mlir::NameLoc>(last->getLoc())) loc = mlir::NameLoc::get(name.getName(), loc);
    builder.setInsertionPoint(last);
    Value gamma = c.gamma;
    if (!gamma) {
      const auto x_type = TypeOf(c.x);
      const auto type = mlir::RankedTensorType::get({x_type.getShape().back()}, x_type.getElementType());
      gamma = builder.create<mlir::tsr::ConstantOp>(loc, mlir::DenseElementsAttr::get(type, 1.0f));
    }
    std::vector<std::optional<Value>> slots = {c.x, gamma, c.beta ? std::optional<Value>(c.beta) : std::nullopt};
    absl::StatusOr<mlir::tsr::OperandLayout> layout = mlir::tsr::OperandsFromSlots(def, slots);
    if (!layout.ok()) {
      last->emitOpError() << "tsr-fuse-layernorm: " << std::string(layout.status().message());
      return false;
    }
    mlir::OperationState state(loc, "tsr.LayerNormalization");
    state.addOperands(layout->operands);
    if (mlir::tsr::NeedsSegmentSizes(def.inputs)) {
      state.addAttribute("operandSegmentSizes", builder.getDenseI32ArrayAttr(layout->segment_sizes));
    }
    const mlir::Type stats = c.mean->getResult(0).getType();
    state.addTypes({last->getResult(0).getType(), stats, stats});
    state.addAttribute("axis", builder.getI64IntegerAttr(-1));
    state.addAttribute("epsilon", builder.getF64FloatAttr(c.epsilon));
    Operation* fused = builder.create(state);
    last->getResult(0).replaceAllUsesWith(fused->getResult(0));
    for (auto it = c.ops.rbegin(); it != c.ops.rend(); ++it) (*it)->erase();
    ++num_fused_;
    return true;
  }

  Statistic num_fused_{this, "layernorms", "written-out layer normalizations fused into LayerNormalization"};
};

}  // namespace

std::unique_ptr<mlir::Pass> CreateLayerNormFusionPass() { return std::make_unique<LayerNormFusionPass>(); }

void RegisterLayerNormFusionPass() { mlir::PassRegistration<LayerNormFusionPass>(); }

}  // namespace tsr

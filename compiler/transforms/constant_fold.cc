// tsr-constant-fold (see constant_fold.h): ops whose operands are all constants are run once at
// compile time with the graph's own reference kernels (RunOp), so the folded value is exactly
// what the interpreter would compute at run time, bit for bit.
#include "compiler/transforms/constant_fold.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/dialect/tsr_dialect.h"
#include "compiler/dialect/tsr_op_signature.h"
#include "compiler/dialect/tsr_type_conversion.h"
#include "graph/op_registry.h"
#include "kernels/run_op.h"
#include "llvm/ADT/SetVector.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Pass/Pass.h"

namespace tsr {
namespace {

using mlir::Operation;

// Static element count of a result, or nullopt when a dimension is dynamic.
std::optional<int64_t> StaticElements(mlir::Type type) {
  auto ranked = llvm::dyn_cast<mlir::RankedTensorType>(type);
  if (!ranked || !ranked.hasStaticShape()) return std::nullopt;
  return ranked.getNumElements();
}

// Shape(x)[start:end] and Size(x) depend only on x's type: they fold whenever the dims they read
// are static, even though x itself is computed at run time. This is what turns the
// Shape -> Gather -> Concat -> Reshape chains of ONNX exports into constants once the batch is
// bound.
std::optional<mlir::DenseElementsAttr> FoldShapeQuery(Operation* op) {
  if (auto shape_op = llvm::dyn_cast<mlir::tsr::ShapeOp>(op)) {
    auto in = llvm::cast<mlir::RankedTensorType>(shape_op.getData().getType());
    const int64_t rank = in.getRank();
    // As the registry's InferShape (ONNX): negative bounds count from the end, then clamp.
    auto clamp = [rank](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank); };
    const int64_t start = clamp(shape_op.getStart());
    const int64_t end = shape_op.getEnd().has_value() ? clamp(*shape_op.getEnd()) : rank;
    llvm::SmallVector<int64_t> dims;
    for (int64_t i = start; i < end; ++i) {
      if (in.isDynamicDim(i)) return std::nullopt;
      dims.push_back(in.getDimSize(i));
    }
    auto type = llvm::cast<mlir::RankedTensorType>(shape_op.getType());
    if (type.getRank() != 1 || type.getDimSize(0) != static_cast<int64_t>(dims.size())) return std::nullopt;
    return mlir::DenseElementsAttr::get(type, llvm::ArrayRef<int64_t>(dims));
  }
  if (auto size_op = llvm::dyn_cast<mlir::tsr::SizeOp>(op)) {
    std::optional<int64_t> n = StaticElements(size_op.getData().getType());
    if (!n.has_value()) return std::nullopt;
    auto type = llvm::cast<mlir::RankedTensorType>(size_op.getType());
    return mlir::DenseElementsAttr::get(type, llvm::ArrayRef<int64_t>(*n));
  }
  return std::nullopt;
}

class ConstantFoldPass : public mlir::PassWrapper<ConstantFoldPass, mlir::OperationPass<mlir::func::FuncOp>> {
 public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ConstantFoldPass)

  ConstantFoldPass() = default;
  explicit ConstantFoldPass(const ConstantFoldOptions& options) { max_elements_ = options.max_elements; }
  ConstantFoldPass(const ConstantFoldPass& other) : PassWrapper(other) {}

  llvm::StringRef getArgument() const override { return "tsr-constant-fold"; }
  llvm::StringRef getDescription() const override {
    return "Evaluate tsr ops whose operands are all constants with the reference kernels";
  }
  void getDependentDialects(mlir::DialectRegistry& registry) const override {
    registry.insert<mlir::tsr::TsrDialect>();
  }

  void runOnOperation() override {
    // Program order: by the time an op is visited, the producers of its operands have been
    // folded already, so a whole chain of constant computations folds in one sweep.
    llvm::SmallVector<Operation*> ops;
    getOperation().walk([&](Operation* op) { ops.push_back(op); });
    llvm::SetVector<Operation*> maybe_dead;
    for (Operation* op : ops) {
      llvm::SmallVector<Operation*> producers;
      for (mlir::Value v : op->getOperands()) {
        if (Operation* def = v.getDefiningOp(); def != nullptr && llvm::isa<mlir::tsr::ConstantOp>(def)) {
          producers.push_back(def);
        }
      }
      if (!TryFold(op)) continue;
      maybe_dead.insert(producers.begin(), producers.end());
    }
    // Constants only the folded ops read are dead now; the rest of the function is untouched.
    for (Operation* op : maybe_dead) {
      if (op->use_empty()) op->erase();
    }
  }

 private:
  // Replaces `op` by constants and erases it; false (and nothing changed) when it does not fold.
  bool TryFold(Operation* op) {
    mlir::Dialect* dialect = op->getDialect();
    if (dialect == nullptr || dialect->getNamespace() != "tsr") return false;
    if (llvm::isa<mlir::tsr::ConstantOp, mlir::tsr::FusionOp, mlir::tsr::YieldOp>(op)) return false;
    if (op->getNumRegions() > 0 || op->getNumResults() == 0 || !mlir::isMemoryEffectFree(op)) return false;
    const OpDef* def = OpRegistry::Global().Find(op->getName().stripDialect().str());
    // The dialect marks stateful ops as not Pure already; the registry is the source of truth.
    if (def == nullptr || def->stateful || !def->variable_updates.empty()) return false;

    int64_t total = 0;
    for (mlir::Type t : op->getResultTypes()) {
      std::optional<int64_t> n = StaticElements(t);
      if (!n.has_value()) return false;
      total += *n;
    }
    if (total > max_elements_) return false;

    llvm::SmallVector<mlir::Attribute> values;
    if (std::optional<mlir::DenseElementsAttr> query = FoldShapeQuery(op)) {
      values.push_back(*query);
    } else if (!Evaluate(op, *def, values)) {
      return false;
    }
    mlir::OpBuilder builder(op);
    for (unsigned i = 0; i < op->getNumResults(); ++i) {
      auto value = llvm::cast<mlir::ElementsAttr>(values[i]);
      auto constant = builder.create<mlir::tsr::ConstantOp>(op->getLoc(), value.getType(), value);
      op->getResult(i).replaceAllUsesWith(constant.getResult());
    }
    op->erase();
    return true;
  }

  // Runs the op's reference kernel on its constant operands; false when an operand is not a
  // constant, the kernel fails or its outputs do not have the op's result types.
  bool Evaluate(Operation* op, const OpDef& def, llvm::SmallVectorImpl<mlir::Attribute>& values) {
    absl::StatusOr<std::vector<std::optional<mlir::Value>>> slots = mlir::tsr::InputSlots(op, def);
    if (!slots.ok()) return false;
    std::vector<std::optional<Tensor>> inputs;
    for (const std::optional<mlir::Value>& slot : *slots) {
      if (!slot.has_value()) {
        inputs.push_back(std::nullopt);
        continue;
      }
      mlir::ElementsAttr attr;
      if (!mlir::matchPattern(*slot, mlir::m_Constant(&attr))) return false;
      absl::StatusOr<Tensor> tensor = mlir::tsr::ToTensor(attr);
      if (!tensor.ok()) return false;
      inputs.push_back(*std::move(tensor));
    }
    AttrMap attrs;
    for (const AttrDef& a : def.attrs) {
      std::optional<mlir::Attribute> attr = op->getInherentAttr(a.name);
      if (!attr.has_value() || !*attr) continue;
      absl::StatusOr<AttrValue> value = mlir::tsr::ToAttrValue(*attr, a.type);
      if (!value.ok()) return false;
      attrs.emplace(a.name, *std::move(value));
    }
    RunOpOptions run_options;
    run_options.device = kReferenceDevice;
    absl::StatusOr<std::vector<Tensor>> outputs = RunOp(def.name, inputs, attrs, run_options);
    if (!outputs.ok() || outputs->size() < op->getNumResults()) return false;
    for (unsigned i = 0; i < op->getNumResults(); ++i) {
      mlir::DenseElementsAttr value = mlir::tsr::ToElementsAttr(op->getContext(), (*outputs)[i]);
      if (value.getType() != op->getResult(i).getType()) return false;
      values.push_back(value);
    }
    return true;
  }

  Option<int64_t> max_elements_{*this, "max-elements",
                                llvm::cl::desc("Leave ops whose results hold more elements than this unfolded"),
                                llvm::cl::init(ConstantFoldOptions().max_elements)};
};

}  // namespace

std::unique_ptr<mlir::Pass> CreateConstantFoldPass(const ConstantFoldOptions& options) {
  return std::make_unique<ConstantFoldPass>(options);
}

void RegisterConstantFoldPass() { mlir::PassRegistration<ConstantFoldPass>(); }

}  // namespace tsr

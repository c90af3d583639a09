// tsr-fuse-inverted-residuals (see inverted_residual_fusion.h): each pointwise BlockedConv
// whose input is a single-use depthwise BlockedConv -- with, behind it, a single-use
// pointwise expansion when there is one -- becomes one BlockedInvertedResidual where the
// fused kernel takes the three geometries and the expanded activations are large.
#include "compiler/transforms/inverted_residual_fusion.h"

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/dialect/tsr_dialect.h"
#include "compiler/dialect/tsr_op_signature.h"
#include "graph/op_registry.h"
#include "graph/ops/blocked_layout.h"
#include "kernels/cpu/conv_blocked.h"
#include "kernels/cpu/conv_blocked_inverted_residual.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Pass/Pass.h"

namespace tsr {
namespace {

using mlir::Operation;
using mlir::Value;

// A BlockedConv with a blocked, static f32 input and constant weights, its geometry.
struct Stage {
  Operation* op = nullptr;
  Value x, w, bias, z;
  ConvGeometry geometry;
};

Shape ShapeOf(mlir::RankedTensorType t) {
  return Shape(std::vector<int64_t>(t.getShape().begin(), t.getShape().end()));
}

std::optional<Stage> ReadStage(Operation* op, const OpDef& def) {
  if (op == nullptr || op->getName().getStringRef() != "tsr.BlockedConv" || op->getNumResults() != 1 ||
      op->hasAttr(mlir::tsr::kShardingAttrName)) {
    return std::nullopt;
  }
  absl::StatusOr<std::vector<std::optional<Value>>> slots = mlir::tsr::InputSlots(op, def);
  absl::StatusOr<AttrMap> attrs = mlir::tsr::NodeAttrs(op, def);
  if (!slots.ok() || !attrs.ok() || slots->size() < 2 || !(*slots)[0] || !(*slots)[1]) return std::nullopt;
  if (auto blocked = attrs->find("input_blocked"); blocked != attrs->end() && blocked->second.i() == 0) {
    return std::nullopt;
  }
  Stage s;
  s.op = op;
  s.x = *(*slots)[0];
  s.w = *(*slots)[1];
  if (slots->size() > 2 && (*slots)[2]) s.bias = *(*slots)[2];
  if (slots->size() > 3 && (*slots)[3]) s.z = *(*slots)[3];
  auto x = llvm::dyn_cast<mlir::RankedTensorType>(s.x.getType());
  auto w = llvm::dyn_cast<mlir::RankedTensorType>(s.w.getType());
  if (!x || !w || !x.hasStaticShape() || !w.hasStaticShape() || !x.getElementType().isF32()) return std::nullopt;
  mlir::ElementsAttr weights;
  if (!mlir::matchPattern(s.w, mlir::m_Constant(&weights))) return std::nullopt;
  AttrMap conv_attrs = *attrs;
  if (conv_attrs.find("group") == conv_attrs.end()) conv_attrs["group"] = AttrValue::Int(1);
  absl::StatusOr<std::optional<ConvGeometry>> g = BlockedConvGeometryOf(conv_attrs, ShapeOf(x), true, ShapeOf(w));
  if (!g.ok() || !g->has_value()) return std::nullopt;
  s.geometry = **g;
  return s;
}

// The graph ops a stage stands for: the parts of its fused epilogue, or itself.
void AppendParts(Operation* op, llvm::SmallVectorImpl<mlir::Location>& parts) {
  mlir::Location loc = op->getLoc();
  if (auto name = llvm::dyn_cast<mlir::NameLoc>(loc)) {
    if (auto fused = llvm::dyn_cast<mlir::FusedLoc>(name.getChildLoc())) {
      parts.append(fused.getLocations().begin(), fused.getLocations().end());
      return;
    }
  }
  parts.push_back(loc);
}

class InvertedResidualFusionPass
    : public mlir::PassWrapper<InvertedResidualFusionPass, mlir::OperationPass<mlir::func::FuncOp>> {
 public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(InvertedResidualFusionPass)

  InvertedResidualFusionPass() = default;
  InvertedResidualFusionPass(const InvertedResidualFusionPass& other) : PassWrapper(other) {}

  llvm::StringRef getArgument() const override { return "tsr-fuse-inverted-residuals"; }
  llvm::StringRef getDescription() const override {
    return "Fuses expand / depthwise / project chains of BlockedConv into BlockedInvertedResidual where it pays";
  }
  void getDependentDialects(mlir::DialectRegistry& registry) const override {
    registry.insert<mlir::tsr::TsrDialect>();
  }

  void runOnOperation() override {
    const OpDef* conv_def = OpRegistry::Global().Find("BlockedConv");
    const OpDef* fused_def = OpRegistry::Global().Find("BlockedInvertedResidual");
    if (conv_def == nullptr || fused_def == nullptr) {
      getOperation().emitError() << "tsr-fuse-inverted-residuals: BlockedConv or BlockedInvertedResidual is not "
                                    "registered";
      return signalPassFailure();
    }
    std::vector<Operation*> convs;
    getOperation().walk([&](Operation* op) {
      if (op->getName().getStringRef() == "tsr.BlockedConv") convs.push_back(op);
    });
    llvm::DenseSet<Operation*> erased;
    mlir::OpBuilder builder(&getContext());
    for (Operation* op : convs) {
      if (erased.contains(op)) continue;
      std::optional<Stage> project = ReadStage(op, *conv_def);
      if (!project) continue;
      Operation* d_op = project->x.getDefiningOp();
      std::optional<Stage> depthwise = d_op != nullptr && d_op->hasOneUse() ? ReadStage(d_op, *conv_def) : std::nullopt;
      if (!depthwise || depthwise->z) continue;
      Operation* e_op = depthwise->x.getDefiningOp();
      std::optional<Stage> expand = e_op != nullptr && e_op->hasOneUse() ? ReadStage(e_op, *conv_def) : std::nullopt;
      if (expand &&
          (expand->z || !BlockedInvertedResidualApplies(&expand->geometry, depthwise->geometry, project->geometry))) {
        expand.reset();  // the depthwise convolution reads the expansion's result as it is
      }
      if (!BlockedInvertedResidualApplies(expand ? &expand->geometry : nullptr, depthwise->geometry,
                                          project->geometry)) {
        continue;
      }
      const auto dw_in = llvm::cast<mlir::RankedTensorType>(depthwise->x.getType());
      if (dw_in.getNumElements() / dw_in.getDimSize(0) * static_cast<int64_t>(sizeof(float)) <
          kMinInvertedResidualBytes) {
        continue;
      }
      // The stages are erased: later entries of `convs` naming them are skipped.
      if (expand) erased.insert(expand->op);
      erased.insert(depthwise->op);
      erased.insert(project->op);
      if (!Fuse(builder, *fused_def, expand, *depthwise, *project)) return signalPassFailure();
    }
  }

 private:
  // Replaces the stages by one BlockedInvertedResidual; false (after an error on the
  // projection) when the operands do not fit the op's signature.
  bool Fuse(mlir::OpBuilder& builder, const OpDef& def, const std::optional<Stage>& expand, const Stage& depthwise,
            const Stage& project) {
    mlir::MLIRContext* context = &getContext();
    const auto opt = [](Value v) { return v ? std::optional<Value>(v) : std::nullopt; };
    std::vector<std::optional<Value>> slots = {expand ? expand->x : depthwise.x,
                                               expand ? opt(expand->w) : std::nullopt,
                                               expand ? opt(expand->bias) : std::nullopt,
                                               depthwise.w,
                                               opt(depthwise.bias),
                                               project.w,
                                               opt(project.bias),
                                               opt(project.z)};
    absl::StatusOr<mlir::tsr::OperandLayout> layout = mlir::tsr::OperandsFromSlots(def, slots);
    if (!layout.ok()) {
      project.op->emitOpError() << "tsr-fuse-inverted-residuals: " << std::string(layout.status().message());
      return false;
    }
    llvm::SmallVector<mlir::Location> parts;
    if (expand) AppendParts(expand->op, parts);
    AppendParts(depthwise.op, parts);
    AppendParts(project.op, parts);
    mlir::Location loc =
        mlir::FusedLoc::get(parts, mlir::StringAttr::get(context, kInvertedResidualLocMetadata), context);
    if (auto name = llvm::dyn_cast<mlir::NameLoc>(project.op->getLoc())) {
      loc = mlir::NameLoc::get(name.getName(), loc);
    }
    builder.setInsertionPoint(project.op);
    mlir::OperationState state(loc, "tsr.BlockedInvertedResidual");
    state.addOperands(layout->operands);
    state.addTypes(project.op->getResult(0).getType());
    state.addAttribute("operandSegmentSizes", builder.getDenseI32ArrayAttr(layout->segment_sizes));
    for (const char* window : {"strides", "pads"}) {
      if (mlir::Attribute a = depthwise.op->getAttr(window)) state.addAttribute(window, a);
    }
    const std::pair<const char*, const Stage*> stages[] = {
        {"expand_", expand ? &*expand : nullptr}, {"depthwise_", &depthwise}, {"project_", &project}};
    for (const auto& [prefix, stage] : stages) {
      if (stage == nullptr) continue;
      for (const char* name : {"activation", "alpha", "min", "max"}) {
        if (mlir::Attribute a = stage->op->getAttr(name)) state.addAttribute(std::string(prefix) + name, a);
      }
    }
    Operation* fused = builder.create(state);
    project.op->getResult(0).replaceAllUsesWith(fused->getResult(0));
    project.op->erase();
    depthwise.op->erase();
    if (expand) expand->op->erase();
    ++num_fused_;
    return true;
  }

  Statistic num_fused_{this, "inverted-residuals", "BlockedConv chains fused into BlockedInvertedResidual"};
};

}  // namespace

std::unique_ptr<mlir::Pass> CreateInvertedResidualFusionPass() {
  return std::make_unique<InvertedResidualFusionPass>();
}

void RegisterInvertedResidualFusionPass() { mlir::PassRegistration<InvertedResidualFusionPass>(); }

}  // namespace tsr

// tsr-fuse-regions (see region_fusion.h): groups fusible ops with a union-find over each
// block, then wraps every group into a tsr.Fusion.
#include "compiler/transforms/region_fusion.h"

#include <algorithm>
#include <vector>

#include "compiler/dialect/tsr_dialect.h"
#include "compiler/transforms/fusible_ops.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "mlir/Analysis/TopologicalSortUtils.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Pass/Pass.h"

namespace tsr {
namespace {

using mlir::Operation;
using mlir::Value;

struct FusionCounts {
  int fusions = 0;
  int fused_ops = 0;
  int multi_output = 0;
  int recomputed = 0;
};

// The fusion of one block: analysis (groups) first, then the rewrite.
class BlockFusion {
 public:
  explicit BlockFusion(mlir::Block& block) : block_(block) {}

  mlir::LogicalResult Run(FusionCounts& counts);

 private:
  struct Group {
    std::vector<Operation*> members;  // owned ops, in block order
    std::vector<Operation*> copies;   // cheap ops of other groups recomputed here
    int reductions = 0;
    mlir::Attribute device;
    bool materialize = false;
  };

  int Find(int i) {
    while (parent_[i] != i) i = parent_[i] = parent_[parent_[i]];
    return i;
  }
  // The group of a fusible op, or -1.
  int GroupOf(Operation* op) {
    auto it = index_.find(op);
    return it == index_.end() ? -1 : Find(it->second);
  }
  int Position(Operation* op) const { return position_.lookup(op); }

  bool CanMerge(int a, int b, std::vector<Operation*>& merged);
  bool ShapesFitReduction(const std::vector<Operation*>& ops) const;
  bool CreatesCycle(const std::vector<Operation*>& ops);
  void PlanRecomputation(FusionCounts& counts);
  bool IsCopiedInto(Operation* user, Operation* op) {
    const int g = GroupOf(user);
    if (g < 0 || !groups_[g].materialize) return false;
    return llvm::is_contained(groups_[g].copies, op);
  }
  // Creates the group's tsr.Fusion (none when no value of the group is read outside it) and
  // redirects the outside uses of its values to the fusion's results.
  void Materialize(Group& group, FusionCounts& counts);

  mlir::Block& block_;
  llvm::DenseMap<Operation*, int> position_;
  llvm::DenseMap<Operation*, int> index_;
  std::vector<Operation*> candidates_;
  std::vector<int> parent_;
  std::vector<Group> groups_;  // by candidate index; meaningful at union-find roots
  llvm::SetVector<Operation*> fused_constants_;
};

// The rules on the shape of a reduction group: every op that reads the reduction's result
// (directly or through other members) keeps that result's shape, so that the epilogue runs in
// the reduction's output loop.
bool BlockFusion::ShapesFitReduction(const std::vector<Operation*>& ops) const {
  Operation* reduction = nullptr;
  for (Operation* op : ops) {
    if (ClassifyFusible(op) == FusibleClass::kReduction) reduction = op;
  }
  if (reduction == nullptr) return true;
  const mlir::Type shape = reduction->getResult(0).getType();
  llvm::SmallPtrSet<Operation*, 16> after = {reduction};
  for (Operation* op : ops) {
    if (Position(op) <= Position(reduction)) continue;
    const bool reads = llvm::any_of(op->getOperands(), [&](Value v) { return after.contains(v.getDefiningOp()); });
    if (!reads) continue;
    if (op->getResult(0).getType() != shape) return false;
    after.insert(op);
  }
  return true;
}

// Whether some op outside `ops` reads a value of `ops` and (transitively) feeds `ops`: then the
// group could not run as one kernel. Only ops before the group's last member can feed it.
bool BlockFusion::CreatesCycle(const std::vector<Operation*>& ops) {
  llvm::SmallPtrSet<Operation*, 32> in_group(ops.begin(), ops.end());
  const int last = Position(ops.back());
  llvm::SmallPtrSet<Operation*, 32> seen;
  llvm::SmallVector<Operation*> worklist;
  auto visit_users = [&](Operation* op) {
    for (Value result : op->getResults()) {
      for (Operation* user : result.getUsers()) {
        Operation* u = block_.findAncestorOpInBlock(*user);
        if (u == nullptr) continue;
        if (in_group.contains(u)) {
          if (!in_group.contains(op)) return true;
          continue;
        }
        if (Position(u) < last && seen.insert(u).second) worklist.push_back(u);
      }
    }
    return false;
  };
  for (Operation* op : ops) {
    if (visit_users(op)) return true;
  }
  while (!worklist.empty()) {
    if (visit_users(worklist.pop_back_val())) return true;
  }
  return false;
}

bool BlockFusion::CanMerge(int a, int b, std::vector<Operation*>& merged) {
  const Group& ga = groups_[a];
  const Group& gb = groups_[b];
  if (ga.device != gb.device) return false;
  if (ga.reductions + gb.reductions > 1) return false;
  merged.clear();
  std::merge(ga.members.begin(), ga.members.end(), gb.members.begin(), gb.members.end(), std::back_inserter(merged),
             [&](Operation* x, Operation* y) { return Position(x) < Position(y); });
  return ShapesFitReduction(merged) && !CreatesCycle(merged);
}

// A cheap op whose value leaves its group only towards other fusions is recomputed in each of
// them (its input is loaded there anyway), so its group need not write it out. Not done for an
// op that reads or feeds another recomputed op, so that every copy's operands stay available.
void BlockFusion::PlanRecomputation(FusionCounts& counts) {
  llvm::SmallPtrSet<Operation*, 16> recomputed;
  for (Operation* op : candidates_) {
    const int g = GroupOf(op);
    if (!groups_[g].materialize || !IsCheapToRecompute(op)) continue;
    bool ok = true;
    for (Value operand : op->getOperands()) {
      Operation* def = operand.getDefiningOp();
      if (def != nullptr && (GroupOf(def) == g || recomputed.contains(def))) ok = false;
    }
    llvm::SmallVector<int> targets;
    for (Operation* user : op->getUsers()) {
      const int h = GroupOf(user);
      if (h == g) continue;
      if (h < 0 || !groups_[h].materialize || groups_[h].device != groups_[g].device || recomputed.contains(user)) {
        ok = false;
        break;
      }
      if (!llvm::is_contained(targets, h)) targets.push_back(h);
    }
    if (!ok || targets.empty()) continue;
    recomputed.insert(op);
    for (int h : targets) groups_[h].copies.push_back(op);
    counts.recomputed += static_cast<int>(targets.size());
  }
}

void BlockFusion::Materialize(Group& group, FusionCounts& counts) {
  std::vector<Operation*> ops = group.members;
  ops.insert(ops.end(), group.copies.begin(), group.copies.end());
  std::sort(ops.begin(), ops.end(), [&](Operation* x, Operation* y) { return Position(x) < Position(y); });
  llvm::SmallPtrSet<Operation*, 32> in_group(ops.begin(), ops.end());

  llvm::SetVector<Value> inputs;
  llvm::SetVector<Operation*> cloned_constants;
  bool has_reduction = false;
  for (Operation* op : ops) {
    has_reduction |= ClassifyFusible(op) == FusibleClass::kReduction;
    for (Value operand : op->getOperands()) {
      Operation* def = operand.getDefiningOp();
      if (def != nullptr && in_group.contains(def)) continue;
      if (IsSmallConstant(def)) {
        cloned_constants.insert(def);
        fused_constants_.insert(def);
      } else {
        inputs.insert(operand);
      }
    }
  }
  // Results: owned values read outside the group (copies are yielded by their own group).
  llvm::SmallVector<Value> results;
  for (Operation* op : group.members) {
    for (Value value : op->getResults()) {
      const bool escapes = llvm::any_of(
          value.getUsers(), [&](Operation* user) { return !in_group.contains(user) && !IsCopiedInto(user, op); });
      if (escapes) results.push_back(value);
    }
  }

  // Every value of the group is recomputed where it is read: nothing to run here (the members
  // are erased with the other fused ops).
  if (results.empty()) return;

  llvm::SmallVector<mlir::Location> locs;
  for (Operation* op : group.members) locs.push_back(op->getLoc());
  mlir::OpBuilder builder(block_.getParentOp()->getContext());
  builder.setInsertionPointAfter(group.members.back());
  llvm::SmallVector<mlir::Type> result_types;
  for (Value v : results) result_types.push_back(v.getType());
  auto fusion = builder.create<mlir::tsr::FusionOp>(builder.getFusedLoc(locs), has_reduction ? "reduction" : "loop",
                                                    inputs.getArrayRef(), result_types);
  if (group.device) fusion->setAttr(mlir::tsr::kDeviceAttrName, group.device);

  mlir::Block& body = fusion.getBody().front();
  mlir::IRMapping mapping;
  for (auto [input, argument] : llvm::zip(inputs, body.getArguments())) mapping.map(input, argument);
  builder.setInsertionPointToEnd(&body);
  for (Operation* constant : cloned_constants) builder.clone(*constant, mapping);
  for (Operation* op : ops) builder.clone(*op, mapping);
  llvm::SmallVector<Value> yielded;
  for (Value v : results) yielded.push_back(mapping.lookup(v));
  builder.create<mlir::tsr::YieldOp>(fusion.getLoc(), yielded);

  for (auto [value, replacement] : llvm::zip(results, fusion.getResults())) {
    Operation* def = value.getDefiningOp();
    value.replaceUsesWithIf(replacement, [&](mlir::OpOperand& use) {
      Operation* user = use.getOwner();
      return user != fusion && !in_group.contains(user) && !IsCopiedInto(user, def);
    });
  }
  ++counts.fusions;
  counts.fused_ops += static_cast<int>(group.members.size());
  if (results.size() > 1) ++counts.multi_output;
}

mlir::LogicalResult BlockFusion::Run(FusionCounts& counts) {
  int position = 0;
  for (Operation& op : block_) {
    position_[&op] = position++;
    if (ClassifyFusible(&op) == FusibleClass::kNotFusible) continue;
    index_[&op] = static_cast<int>(candidates_.size());
    candidates_.push_back(&op);
  }
  parent_.resize(candidates_.size());
  groups_.resize(candidates_.size());
  for (size_t i = 0; i < candidates_.size(); ++i) {
    parent_[i] = static_cast<int>(i);
    groups_[i].members = {candidates_[i]};
    groups_[i].reductions = ClassifyFusible(candidates_[i]) == FusibleClass::kReduction;
    groups_[i].device = candidates_[i]->getAttr(mlir::tsr::kDeviceAttrName);
  }

  // Consumers join their producers' groups, in block order.
  std::vector<Operation*> merged;
  for (Operation* consumer : candidates_) {
    for (Value operand : consumer->getOperands()) {
      Operation* producer = operand.getDefiningOp();
      if (producer == nullptr || !index_.count(producer)) continue;
      const int a = GroupOf(consumer);
      const int b = GroupOf(producer);
      if (a == b || !CanMerge(a, b, merged)) continue;
      parent_[b] = a;
      groups_[a].members = merged;
      groups_[a].reductions += groups_[b].reductions;
      groups_[b].members.clear();
    }
  }

  std::vector<int> roots;
  for (size_t i = 0; i < candidates_.size(); ++i) {
    if (Find(static_cast<int>(i)) != static_cast<int>(i)) continue;
    Group& group = groups_[i];
    group.materialize =
        llvm::any_of(group.members, [](Operation* op) { return ClassifyFusible(op) != FusibleClass::kDataMovement; });
    if (group.materialize) roots.push_back(static_cast<int>(i));
  }
  if (roots.empty()) return mlir::success();
  PlanRecomputation(counts);
  for (int root : roots) Materialize(groups_[root], counts);

  // The fused originals, last first so that each is dead when erased.
  std::vector<Operation*> fused;
  for (int root : roots) fused.insert(fused.end(), groups_[root].members.begin(), groups_[root].members.end());
  std::sort(fused.begin(), fused.end(), [&](Operation* x, Operation* y) { return Position(x) > Position(y); });
  for (Operation* op : fused) {
    if (!op->use_empty()) {
      return op->emitOpError() << "region fusion left a use of a fused op (internal error)";
    }
    op->erase();
  }
  for (Operation* constant : fused_constants_) {
    if (constant->use_empty()) constant->erase();
  }
  if (!mlir::sortTopologically(&block_)) {
    return block_.getParentOp()->emitOpError() << "region fusion produced a cyclic block (internal error)";
  }
  return mlir::success();
}

class RegionFusionPass : public mlir::PassWrapper<RegionFusionPass, mlir::OperationPass<mlir::func::FuncOp>> {
 public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(RegionFusionPass)

  RegionFusionPass() = default;
  RegionFusionPass(const RegionFusionPass& other) : PassWrapper(other) {}

  llvm::StringRef getArgument() const override { return "tsr-fuse-regions"; }
  llvm::StringRef getDescription() const override {
    return "Wraps chains of elementwise ops and reductions with their elementwise producers and consumers into "
           "tsr.Fusion ops";
  }
  void getDependentDialects(mlir::DialectRegistry& registry) const override {
    registry.insert<mlir::tsr::TsrDialect>();
  }

  void runOnOperation() override {
    FusionCounts counts;
    for (mlir::Block& block : getOperation().getBody()) {
      if (mlir::failed(BlockFusion(block).Run(counts))) return signalPassFailure();
    }
    num_fusions_ += counts.fusions;
    num_fused_ops_ += counts.fused_ops;
    num_multi_output_ += counts.multi_output;
    num_recomputed_ += counts.recomputed;
    if (counts.fusions == 0) markAllAnalysesPreserved();
  }

 private:
  Statistic num_fusions_{this, "fusions", "tsr.Fusion ops created"};
  Statistic num_fused_ops_{this, "fused-ops", "Ops moved into tsr.Fusion ops"};
  Statistic num_multi_output_{this, "multi-output-fusions", "Fusions with more than one result"};
  Statistic num_recomputed_{this, "recomputed-ops", "Cheap ops recomputed in another fusion instead of written out"};
};

}  // namespace

std::unique_ptr<mlir::Pass> CreateRegionFusionPass() { return std::make_unique<RegionFusionPass>(); }

void RegisterRegionFusionPass() { mlir::PassRegistration<RegionFusionPass>(); }

}  // namespace tsr

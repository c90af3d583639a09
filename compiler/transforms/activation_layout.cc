// tsr-activation-layout (see activation_layout.h): one walk collects the convolutions the
// blocked kernels take; a second, in program order, replaces each by a BlockedConv fed by
// the blocked results of the ones before it, with layout changes only where a value
// enters or leaves the chain.
#include "compiler/transforms/activation_layout.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/dialect/tsr_dialect.h"
#include "compiler/dialect/tsr_op_signature.h"
#include "graph/op_registry.h"
#include "kernels/cpu/conv_blocked.h"
#include "kernels/cpu/node_window.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Pass/Pass.h"

namespace tsr {
namespace {

using mlir::Operation;
using mlir::Value;

// A convolution whose output channels leave more than this share of their blocks'
// lanes empty stays as it is: the blocked kernels would compute the empty lanes too
// (6 channels in a block of 16: 2.7 times the work).
constexpr double kMaxEmptyLaneShare = 0.25;

// An f32 tensor whose dimensions are static except perhaps the first (the batch).
mlir::RankedTensorType StaticF32(Value v) {
  auto t = llvm::dyn_cast<mlir::RankedTensorType>(v.getType());
  if (!t || !t.getElementType().isF32() || t.getRank() < 1) return nullptr;
  for (int64_t i = 1; i < t.getRank(); ++i) {
    if (t.isDynamicDim(i)) return nullptr;
  }
  return t;
}

// [N, ceil(C/16), spatial..., 16] of a plain [N, C, spatial...].
mlir::RankedTensorType BlockedType(mlir::RankedTensorType plain) {
  llvm::SmallVector<int64_t> dims = {plain.getDimSize(0), ChannelBlocks(plain.getDimSize(1))};
  for (int64_t i = 2; i < plain.getRank(); ++i) dims.push_back(plain.getDimSize(i));
  dims.push_back(kChannelBlock);
  return mlir::RankedTensorType::get(dims, plain.getElementType());
}

struct Candidate {
  Operation* op = nullptr;
  Value x, w, bias, z;
  ConvGeometry geometry;
};

// The convolution of a Conv / FusedConv the blocked kernels take, or nullopt.
std::optional<Candidate> ReadCandidate(Operation* op) {
  const llvm::StringRef name = op->getName().getStringRef();
  if ((name != "tsr.Conv" && name != "tsr.FusedConv") || op->getNumResults() != 1 ||
      op->hasAttr(mlir::tsr::kShardingAttrName)) {
    return std::nullopt;
  }
  const OpDef* def = OpRegistry::Global().Find(name.drop_front(4).str());
  if (def == nullptr) return std::nullopt;
  absl::StatusOr<std::vector<std::optional<Value>>> slots = mlir::tsr::InputSlots(op, *def);
  if (!slots.ok() || slots->size() < 2 || !(*slots)[0] || !(*slots)[1]) return std::nullopt;
  Candidate c;
  c.op = op;
  c.x = *(*slots)[0];
  c.w = *(*slots)[1];
  if (slots->size() > 2 && (*slots)[2]) c.bias = *(*slots)[2];
  if (slots->size() > 3 && (*slots)[3]) c.z = *(*slots)[3];
  auto x = StaticF32(c.x), w = StaticF32(c.w), y = StaticF32(op->getResult(0));
  if (!x || !w || !y || !w.hasStaticShape() || (x.getRank() != 3 && x.getRank() != 4) || w.getRank() != x.getRank())
    return std::nullopt;
  mlir::ElementsAttr weights;
  if (!mlir::matchPattern(c.w, mlir::m_Constant(&weights))) return std::nullopt;
  absl::StatusOr<AttrMap> attrs = mlir::tsr::NodeAttrs(op, *def);
  if (!attrs.ok()) return std::nullopt;
  const std::vector<int64_t> in_spatial(x.getShape().begin() + 2, x.getShape().end());
  absl::StatusOr<std::optional<Window3d>> w3 =
      AttrsWindow3d(*attrs, in_spatial, llvm::ArrayRef<int64_t>(w.getShape()).drop_front(2));
  if (!w3.ok() || !w3->has_value()) return std::nullopt;
  const auto group_attr = op->getAttrOfType<mlir::IntegerAttr>("group");
  c.geometry.window = **w3;
  c.geometry.group = group_attr ? group_attr.getInt() : 1;
  c.geometry.channels = x.getDimSize(1);
  c.geometry.out_channels = w.getDimSize(0);
  if (!BlockedConvApplies(c.geometry)) return std::nullopt;
  // Winograd does a 3x3 stride-1 convolution in fewer multiplications than any direct
  // kernel; the blocked layout has its own (conv_blocked.h), faster than the plain one.
  // Where the plain layout would run Winograd and the blocked one would not, the
  // convolution stays plain and the chain converts around it.
  if (BlockedConvWinogradTile(c.geometry) == 0 && PreparedConvAlgorithm(c.geometry) == ConvAlgorithm::kWinograd) {
    return std::nullopt;
  }
  const int64_t lanes = ChannelBlocks(c.geometry.out_channels) * kChannelBlock;
  if (static_cast<double>(lanes - c.geometry.out_channels) > kMaxEmptyLaneShare * static_cast<double>(lanes)) {
    return std::nullopt;
  }
  return c;
}

// A name for an op the pass adds next to `op`: op's name with `suffix`.
mlir::Location DerivedLoc(Operation* op, Value v, llvm::StringRef suffix) {
  std::string base = "value";
  if (auto name = llvm::dyn_cast<mlir::NameLoc>(v.getLoc())) base = name.getName().str();
  if (auto name = llvm::dyn_cast<mlir::NameLoc>(op->getLoc())) base = name.getName().str();
  return mlir::NameLoc::get(mlir::StringAttr::get(op->getContext(), base + suffix.str()));
}

class ActivationLayoutPass : public mlir::PassWrapper<ActivationLayoutPass, mlir::OperationPass<mlir::func::FuncOp>> {
 public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ActivationLayoutPass)

  ActivationLayoutPass() = default;
  ActivationLayoutPass(const ActivationLayoutPass& other) : PassWrapper(other) {}

  llvm::StringRef getArgument() const override { return "tsr-activation-layout"; }
  llvm::StringRef getDescription() const override {
    return "Runs chains of convolutions as BlockedConv in the channel-blocked layout [N, C/16, H, W, 16]";
  }
  void getDependentDialects(mlir::DialectRegistry& registry) const override {
    registry.insert<mlir::tsr::TsrDialect>();
  }

  void runOnOperation() override {
    std::vector<Candidate> candidates;
    llvm::DenseMap<Operation*, int> index;
    getOperation().walk([&](Operation* op) {
      if (std::optional<Candidate> c = ReadCandidate(op)) {
        index[op] = static_cast<int>(candidates.size());
        candidates.push_back(*c);
      }
    });
    if (candidates.empty()) return;
    const OpDef* def = OpRegistry::Global().Find("BlockedConv");
    if (def == nullptr) {
      getOperation().emitError() << "tsr-activation-layout: the graph op BlockedConv is not registered";
      return signalPassFailure();
    }
    mlir::OpBuilder builder(&getContext());
    llvm::DenseMap<Value, Value> blocked;  // a value -> the same value blocked
    const auto is_candidate = [&](Operation* op) { return op != nullptr && index.count(op) > 0; };
    // `v` blocked: a chain's result as it is, anything else through one BlockChannels.
    const auto blocked_value = [&](Value v, Operation* user) -> Value {
      if (Value b = blocked.lookup(v)) return b;
      builder.setInsertionPoint(user);
      mlir::OperationState state(DerivedLoc(user, v, "/block_channels"), "tsr.BlockChannels");
      state.addOperands(v);
      state.addTypes(BlockedType(llvm::cast<mlir::RankedTensorType>(v.getType())));
      Value b = builder.create(state)->getResult(0);
      ++num_conversions_;
      blocked[v] = b;
      return b;
    };

    for (Candidate& c : candidates) {
      Operation* op = c.op;
      const bool depthwise = c.geometry.group > 1;
      const bool x_from_chain = is_candidate(c.x.getDefiningOp());
      // Depthwise and Winograd kernels read whole channel vectors: their input is blocked.
      const bool x_blocked = x_from_chain || depthwise || BlockedConvWinogradTile(c.geometry) != 0;
      Value x = x_blocked ? blocked_value(c.x, op) : c.x;
      Value z = c.z ? blocked_value(c.z, op) : Value();
      absl::StatusOr<mlir::tsr::OperandLayout> layout = mlir::tsr::OperandsFromSlots(
          *def,
          {x, c.w, c.bias ? std::optional<Value>(c.bias) : std::nullopt, z ? std::optional<Value>(z) : std::nullopt});
      if (!layout.ok()) {
        op->emitOpError() << "tsr-activation-layout: " << std::string(layout.status().message());
        return signalPassFailure();
      }
      builder.setInsertionPoint(op);
      mlir::OperationState state(op->getLoc(), "tsr.BlockedConv");
      state.addOperands(layout->operands);
      const auto y_type = llvm::cast<mlir::RankedTensorType>(op->getResult(0).getType());
      state.addTypes(BlockedType(y_type));
      for (const mlir::NamedAttribute& attr : op->getAttrs()) {
        if (attr.getName() != "operandSegmentSizes") state.addAttribute(attr.getName(), attr.getValue());
      }
      state.addAttribute("operandSegmentSizes", builder.getDenseI32ArrayAttr(layout->segment_sizes));
      if (!x_blocked) state.addAttribute("input_blocked", builder.getI64IntegerAttr(0));
      Operation* conv = builder.create(state);
      Value y = op->getResult(0);
      blocked[y] = conv->getResult(0);
      ++num_convolutions_;
      // Users outside the chain read the plain result, unblocked once; the chain's own
      // users (X or Z of a later candidate) are rewritten when their turn comes.
      const auto stays_blocked = [&](mlir::OpOperand& use) {
        if (!is_candidate(use.getOwner())) return false;
        const Candidate& user = candidates[index.lookup(use.getOwner())];
        return use.get() == user.x || use.get() == user.z;
      };
      if (!llvm::all_of(y.getUses(), stays_blocked)) {
        builder.setInsertionPointAfter(conv);
        mlir::OperationState unblock(DerivedLoc(op, y, "/unblock_channels"), "tsr.UnblockChannels");
        unblock.addOperands(conv->getResult(0));
        unblock.addTypes(y_type);
        unblock.addAttribute("channels", builder.getI64IntegerAttr(c.geometry.out_channels));
        Value plain = builder.create(unblock)->getResult(0);
        ++num_conversions_;
        y.replaceUsesWithIf(plain, [&](mlir::OpOperand& use) { return !stays_blocked(use); });
      }
    }
    // Every use of the old convolutions is gone: later candidates read the blocked results.
    for (Candidate& c : llvm::reverse(candidates)) {
      if (c.op->use_empty()) c.op->erase();
    }
  }

 private:
  Statistic num_convolutions_{this, "blocked-convolutions", "Convolutions turned into BlockedConv"};
  Statistic num_conversions_{this, "layout-conversions", "BlockChannels / UnblockChannels inserted"};
};

}  // namespace

std::unique_ptr<mlir::Pass> CreateActivationLayoutPass() { return std::make_unique<ActivationLayoutPass>(); }

void RegisterActivationLayoutPass() { mlir::PassRegistration<ActivationLayoutPass>(); }

}  // namespace tsr

// AnalyzeFusionTiling, TileType and the tsr-tile-fusions pass (see fusion_tiling.h).
#include "compiler/lowering/fusion_tiling.h"

#include <algorithm>

#include "compiler/dialect/tsr_dialect.h"
#include "compiler/lowering/linalg_builders.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Pass/Pass.h"

namespace tsr {
namespace {

enum class Cut { kWhole, kSplit, kInvalid };

// The index of the split axis in a value of rank `rank` (aligned to the right against the
// results' rank), negative when the value has no such axis.
int64_t AlignedAxis(const FusionTiling& t, int64_t rank) { return t.axis - (t.result_rank - rank); }

Cut Classify(mlir::Type type, const FusionTiling& t) {
  auto tensor = llvm::dyn_cast<mlir::RankedTensorType>(type);
  if (tensor == nullptr || !tensor.hasStaticShape() || tensor.getRank() > t.result_rank) return Cut::kInvalid;
  const int64_t i = AlignedAxis(t, tensor.getRank());
  if (i < 0 || tensor.getDimSize(i) == 1) return Cut::kWhole;
  if (tensor.getDimSize(i) != t.extent) return Cut::kInvalid;
  // Only then is each block one contiguous slice of the value.
  for (int64_t d = 0; d < i; ++d) {
    if (tensor.getDimSize(d) != 1) return Cut::kInvalid;
  }
  return Cut::kSplit;
}

// Whether the op, reading (some of) its operands split, acts along later axes only.
bool ActsAlongLaterAxes(mlir::Operation* op, const FusionTiling& t) {
  const llvm::StringRef name = op->getName().stripDialect();
  if (name == "Reshape" || name == "Expand") return false;
  if (op->hasAttr("perm")) return false;
  const bool normalizes = name == "Softmax" || name == "LogSoftmax" || name == "LayerNormalization";
  if (!normalizes) return !op->hasAttr("axis");
  auto input = llvm::dyn_cast<mlir::RankedTensorType>(op->getOperand(0).getType());
  auto axis = op->getAttrOfType<mlir::IntegerAttr>("axis");
  if (input == nullptr) return false;
  std::optional<int64_t> normalized = lowering::NormalizeAxis(axis ? axis.getInt() : -1, input.getRank());
  return normalized.has_value() && *normalized > AlignedAxis(t, input.getRank());
}

bool SplatConstant(mlir::Operation* op) {
  auto value = op->getAttrOfType<mlir::DenseElementsAttr>("value");
  return value != nullptr && value.isSplat();
}

// The tiling of `fusion` along `axis` of its first result (T not yet chosen), or nullopt
// when that result is not a static tensor with such an axis.
std::optional<FusionTiling> AlongAxis(mlir::Operation* fusion, int64_t axis) {
  if (fusion->getNumResults() == 0) return std::nullopt;
  auto first = llvm::dyn_cast<mlir::RankedTensorType>(fusion->getResult(0).getType());
  if (first == nullptr || !first.hasStaticShape() || axis < 0 || axis >= first.getRank()) return std::nullopt;
  FusionTiling t;
  t.axis = axis;
  t.extent = first.getDimSize(axis);
  t.result_rank = first.getRank();
  return t;
}

}  // namespace

std::optional<FusionTiling> AnalyzeFusionTiling(mlir::Operation* op) {
  auto fusion = llvm::dyn_cast<mlir::tsr::FusionOp>(op);
  if (!fusion || fusion->getNumResults() == 0) return std::nullopt;
  auto first = llvm::dyn_cast<mlir::RankedTensorType>(fusion->getResult(0).getType());
  if (first == nullptr) return std::nullopt;
  const llvm::ArrayRef<int64_t> shape = first.getShape();
  // The first axis of extent > 1.
  std::optional<FusionTiling> along =
      AlongAxis(fusion, std::find_if(shape.begin(), shape.end(), [](int64_t d) { return d > 1; }) - shape.begin());
  if (!along.has_value()) return std::nullopt;
  FusionTiling t = *along;
  // Every result is cut (a whole one would be written by every block).
  for (mlir::Type type : fusion->getResultTypes()) {
    auto tensor = llvm::dyn_cast<mlir::RankedTensorType>(type);
    if (tensor == nullptr || tensor.getRank() != t.result_rank || Classify(type, t) != Cut::kSplit) {
      return std::nullopt;
    }
  }

  // The work: the largest value of the body (a reduction's input, not its result).
  int64_t elements = 0;
  const auto count = [&](mlir::Type type) {
    if (auto tensor = llvm::dyn_cast<mlir::RankedTensorType>(type); tensor && tensor.hasStaticShape()) {
      elements = std::max(elements, tensor.getNumElements());
    }
  };
  mlir::Block& body = fusion.getBody().front();
  for (mlir::BlockArgument argument : body.getArguments()) {
    if (Classify(argument.getType(), t) == Cut::kInvalid) return std::nullopt;
    count(argument.getType());
  }
  for (mlir::Operation& inner : body.without_terminator()) {
    bool split_in = false, split_out = false, whole_out = false;
    for (mlir::Value operand : inner.getOperands()) {
      const Cut cut = Classify(operand.getType(), t);
      if (cut == Cut::kInvalid) return std::nullopt;
      split_in |= cut == Cut::kSplit;
    }
    for (mlir::Value result : inner.getResults()) {
      count(result.getType());
      const Cut cut = Classify(result.getType(), t);
      if (cut == Cut::kInvalid) return std::nullopt;
      split_out |= cut == Cut::kSplit;
      whole_out |= cut == Cut::kWhole;
    }
    if (llvm::isa<mlir::tsr::ConstantOp>(inner)) {
      if (split_out && !SplatConstant(&inner)) return std::nullopt;
      continue;
    }
    // A split input and a whole result: a reduction over the axis (or a reshape); a
    // split result from whole inputs: something that makes the axis (Expand).
    if (split_in && whole_out) return std::nullopt;
    if (split_out && !split_in) return std::nullopt;
    if (split_in && !ActsAlongLaterAxes(&inner, t)) return std::nullopt;
  }

  const int64_t most = std::min({t.extent, kMaxFusionTiles, elements / kMinFusionTileElements});
  for (int64_t tiles = most; tiles >= 2; --tiles) {
    if (t.extent % tiles == 0) {
      t.tiles = tiles;
      return t;
    }
  }
  return std::nullopt;
}

std::optional<FusionTiling> FusionTilingOf(mlir::Operation* fusion) {
  auto tiles = fusion->getAttrOfType<mlir::IntegerAttr>(mlir::tsr::kTilesAttrName);
  auto axis = fusion->getAttrOfType<mlir::IntegerAttr>(mlir::tsr::kTileAxisAttrName);
  if (!tiles || !axis) return std::nullopt;
  std::optional<FusionTiling> t = AlongAxis(fusion, axis.getInt());
  if (!t.has_value() || tiles.getInt() < 2 || t->extent % tiles.getInt() != 0) return std::nullopt;
  t->tiles = tiles.getInt();
  return t;
}

mlir::Type TileType(mlir::Type type, const FusionTiling& t) {
  if (Classify(type, t) != Cut::kSplit) return type;
  auto tensor = llvm::cast<mlir::RankedTensorType>(type);
  llvm::SmallVector<int64_t> shape(tensor.getShape());
  shape[AlignedAxis(t, tensor.getRank())] = t.extent / t.tiles;
  return mlir::RankedTensorType::get(shape, tensor.getElementType());
}

namespace {

class FusionTilingPass : public mlir::PassWrapper<FusionTilingPass, mlir::OperationPass<mlir::func::FuncOp>> {
 public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(FusionTilingPass)

  llvm::StringRef getArgument() const override { return "tsr-tile-fusions"; }
  llvm::StringRef getDescription() const override {
    return "Mark each tsr.Fusion whose work splits into independent blocks of rows with tsr.tiles / tsr.tile_axis";
  }

  void runOnOperation() override {
    mlir::Builder builder(&getContext());
    getOperation().walk([&](mlir::tsr::FusionOp fusion) {
      fusion->removeAttr(mlir::tsr::kTilesAttrName);
      fusion->removeAttr(mlir::tsr::kTileAxisAttrName);
      std::optional<FusionTiling> tiling = AnalyzeFusionTiling(fusion);
      if (!tiling.has_value()) return;
      fusion->setAttr(mlir::tsr::kTilesAttrName, builder.getI64IntegerAttr(tiling->tiles));
      fusion->setAttr(mlir::tsr::kTileAxisAttrName, builder.getI64IntegerAttr(tiling->axis));
    });
  }
};

}  // namespace

std::unique_ptr<mlir::Pass> CreateFusionTilingPass() { return std::make_unique<FusionTilingPass>(); }

void RegisterFusionTilingPass() { mlir::PassRegistration<FusionTilingPass>(); }

}  // namespace tsr

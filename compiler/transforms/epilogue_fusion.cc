// tsr-fuse-epilogues (see epilogue_fusion.h): one forward walk over each block; every bias
// add, residual add or activation whose operand is the only use of a convolution or matmul
// result is absorbed into a FusedConv / FusedMatMul that replaces it.
#include "compiler/transforms/epilogue_fusion.h"

#include <optional>
#include <string>
#include <vector>

#include "compiler/dialect/tsr_dialect.h"
#include "compiler/dialect/tsr_op_signature.h"
#include "compiler/transforms/constant_values.h"
#include "graph/op_registry.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringExtras.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"

namespace tsr {
namespace {

using mlir::Operation;
using mlir::Value;

constexpr const char* kConvAttrs[] = {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"};

struct EpilogueCounts {
  int fused_ops = 0;
  int bias_adds = 0;
  int residual_adds = 0;
  int activations = 0;
};

// A FusedConv / FusedMatMul being assembled: the producer's contribution plus what the
// consumers add.
struct FusedState {
  bool conv = false;
  Value x, w, bias, z;
  // A constant bias to create ([M] or [N]); takes the place of `bias` when set.
  std::optional<std::vector<double>> bias_values;
  llvm::SmallVector<mlir::NamedAttribute> conv_attrs;
  int64_t transpose_b = 0;
  std::string activation = "None";
  std::optional<double> alpha, min, max;
};

mlir::RankedTensorType TensorTypeOf(Value v) { return llvm::dyn_cast<mlir::RankedTensorType>(v.getType()); }

bool IsF32OrF64(Value v) {
  auto t = TensorTypeOf(v);
  return t && (t.getElementType().isF32() || t.getElementType().isF64());
}

std::optional<double> F64Attr(Operation* op, llvm::StringRef name) {
  if (auto attr = op->getAttrOfType<mlir::FloatAttr>(name)) return attr.getValueAsDouble();
  return std::nullopt;
}

int64_t I64Attr(Operation* op, llvm::StringRef name, int64_t default_value) {
  if (auto attr = op->getAttrOfType<mlir::IntegerAttr>(name)) return attr.getInt();
  return default_value;
}

// The operands of a registry op by input slot (absent optional inputs are empty Values).
std::optional<std::vector<Value>> Slots(Operation* op) {
  const OpDef* def = OpRegistry::Global().Find(op->getName().stripDialect().str());
  if (def == nullptr) return std::nullopt;
  absl::StatusOr<std::vector<std::optional<Value>>> slots = mlir::tsr::InputSlots(op, *def);
  if (!slots.ok()) return std::nullopt;
  std::vector<Value> values;
  for (const std::optional<Value>& v : *slots) values.push_back(v.value_or(Value()));
  values.resize(4);
  return values;
}

// The bias values a constant `c` stands for when it broadcasts along `channel_dim` of an output
// of `out` (every other dimension of `c`, right-aligned, is 1): `channels` values.
std::optional<std::vector<double>> BiasValues(Value c, mlir::RankedTensorType out, int64_t channel_dim) {
  auto type = TensorTypeOf(c);
  std::optional<std::vector<double>> values = ConstantValues(c);
  if (!type || !values || type.getRank() > out.getRank() || out.isDynamicDim(channel_dim)) return std::nullopt;
  const int64_t channels = out.getDimSize(channel_dim);
  const int64_t offset = out.getRank() - type.getRank();
  for (int64_t i = 0; i < type.getRank(); ++i) {
    const int64_t d = type.getDimSize(i);
    if (d != 1 && !(i + offset == channel_dim && d == channels)) return std::nullopt;
  }
  if (values->size() == 1) return std::vector<double>(channels, values->front());
  if (static_cast<int64_t>(values->size()) != channels) return std::nullopt;
  return values;
}

// What a producer contributes, or nullopt when it cannot take epilogues.
std::optional<FusedState> ReadProducer(Operation* op) {
  if (op->getNumResults() != 1 || !IsF32OrF64(op->getResult(0))) return std::nullopt;
  const llvm::StringRef name = op->getName().stripDialect();
  auto out = TensorTypeOf(op->getResult(0));
  FusedState s;
  if (name == "Conv" || name == "FusedConv") {
    std::optional<std::vector<Value>> slots = Slots(op);
    if (!slots || out.getRank() < 3) return std::nullopt;
    s.conv = true;
    s.x = (*slots)[0], s.w = (*slots)[1], s.bias = (*slots)[2], s.z = (*slots)[3];
    for (const char* attr : kConvAttrs) {
      if (mlir::Attribute a = op->getAttr(attr))
        s.conv_attrs.emplace_back(mlir::StringAttr::get(op->getContext(), attr), a);
    }
  } else if (name == "MatMul") {
    auto a = TensorTypeOf(op->getOperand(0));
    auto b = TensorTypeOf(op->getOperand(1));
    if (!a || !b || a.getRank() < 2 || b.getRank() != 2) return std::nullopt;
    s.x = op->getOperand(0), s.w = op->getOperand(1);
  } else if (name == "FusedMatMul") {
    std::optional<std::vector<Value>> slots = Slots(op);
    if (!slots) return std::nullopt;
    s.x = (*slots)[0], s.w = (*slots)[1], s.bias = (*slots)[2], s.z = (*slots)[3];
    s.transpose_b = I64Attr(op, "transpose_b", 0);
  } else if (name == "Gemm") {
    if (F64Attr(op, "alpha").value_or(1.0) != 1.0 || I64Attr(op, "transA", 0) != 0) return std::nullopt;
    s.x = op->getOperand(0), s.w = op->getOperand(1);
    s.transpose_b = I64Attr(op, "transB", 0);
    if (op->getNumOperands() == 3) {
      if (F64Attr(op, "beta").value_or(1.0) != 1.0) return std::nullopt;
      Value c = op->getOperand(2);
      auto c_type = TensorTypeOf(c);
      if (c_type.getRank() == 1 && c_type.getDimSize(0) == out.getDimSize(1)) {
        s.bias = c;
      } else if (auto values = BiasValues(c, out, 1)) {
        s.bias_values = std::move(values);
      } else if (c.getType() == out) {
        s.z = c;
      } else {
        return std::nullopt;
      }
    }
  } else {
    return std::nullopt;
  }
  if (name == "FusedConv" || name == "FusedMatMul") {
    if (auto act = op->getAttrOfType<mlir::StringAttr>("activation")) s.activation = act.str();
    s.alpha = F64Attr(op, "alpha");
    s.min = F64Attr(op, "min");
    s.max = F64Attr(op, "max");
  }
  return s;
}

// The parts a fused op stands for, from its location (see epilogue_fusion.h).
void AppendParts(mlir::Location loc, llvm::SmallVectorImpl<mlir::Location>& parts) {
  mlir::Location inner = loc;
  if (auto name = llvm::dyn_cast<mlir::NameLoc>(loc)) inner = name.getChildLoc();
  if (auto fused = llvm::dyn_cast<mlir::FusedLoc>(inner)) {
    auto tag = llvm::dyn_cast_or_null<mlir::StringAttr>(fused.getMetadata());
    if (tag && tag.getValue() == kEpilogueLocMetadata) {
      parts.append(fused.getLocations().begin(), fused.getLocations().end());
      return;
    }
  }
  parts.push_back(loc);
}

mlir::Location FusedLocation(Operation* producer, Operation* consumer) {
  mlir::MLIRContext* context = producer->getContext();
  llvm::SmallVector<mlir::Location> parts;
  AppendParts(producer->getLoc(), parts);
  parts.push_back(consumer->getLoc());
  llvm::SmallVector<std::string> names;
  for (mlir::Location part : parts) {
    if (auto name = llvm::dyn_cast<mlir::NameLoc>(part)) names.push_back(name.getName().str());
  }
  mlir::Location fused = mlir::FusedLoc::get(parts, mlir::StringAttr::get(context, kEpilogueLocMetadata), context);
  if (names.empty()) return fused;
  return mlir::NameLoc::get(mlir::StringAttr::get(context, llvm::join(names, "+")), fused);
}

class EpilogueFuser {
 public:
  EpilogueFuser(mlir::RewriterBase& rewriter, EpilogueCounts& counts) : rewriter_(rewriter), counts_(counts) {}

  // Whether a fusion failed with an error (emitted on the op), rather than merely not matching.
  bool error() const { return error_; }

  // Absorbs `consumer` into the producer of its operand when the rules allow it.
  mlir::LogicalResult TryAbsorb(Operation* consumer) {
    const llvm::StringRef name = consumer->getName().stripDialect();
    if (name == "Add" && consumer->getNumOperands() == 2) {
      for (int side = 0; side < 2; ++side) {
        if (mlir::succeeded(TryAdd(consumer, consumer->getOperand(side), consumer->getOperand(1 - side)))) {
          return mlir::success();
        }
      }
      return mlir::failure();
    }
    if (consumer->getNumOperands() < 1) return mlir::failure();
    Value y = consumer->getOperand(0);
    std::optional<FusedState> s = Producer(consumer, y);
    if (!s || s->activation != "None") return mlir::failure();
    if (name == "Relu" || name == "Sigmoid" || name == "Tanh") {
      s->activation = name.str();
    } else if (name == "LeakyRelu") {
      s->activation = "LeakyRelu";
      s->alpha = F64Attr(consumer, "alpha").value_or(0.01);
    } else if (name == "Clip" && consumer->getNumOperands() == 1) {
      s->activation = "Clip";
    } else if (name == "Clip") {
      std::optional<std::vector<Value>> slots = Slots(consumer);
      if (!slots) return mlir::failure();
      std::optional<double> min, max;
      if ((*slots)[1] && !(min = ConstantScalar((*slots)[1]))) return mlir::failure();
      if ((*slots)[2] && !(max = ConstantScalar((*slots)[2]))) return mlir::failure();
      s->activation = "Clip";
      s->min = min;
      s->max = max;
    } else {
      return mlir::failure();
    }
    ++counts_.activations;
    return Replace(consumer, y, *s);
  }

 private:
  // The producer's state when `y` (an operand of `consumer`) is its only result's only use and
  // the consumer keeps y's type; nullopt otherwise.
  std::optional<FusedState> Producer(Operation* consumer, Value y) {
    Operation* producer = y.getDefiningOp();
    if (producer == nullptr || !y.hasOneUse() || consumer->getNumResults() != 1 ||
        consumer->getResult(0).getType() != y.getType()) {
      return std::nullopt;
    }
    if (producer->getAttr(mlir::tsr::kDeviceAttrName) != consumer->getAttr(mlir::tsr::kDeviceAttrName) ||
        producer->hasAttr(mlir::tsr::kShardingAttrName) || consumer->hasAttr(mlir::tsr::kShardingAttrName)) {
      return std::nullopt;
    }
    return ReadProducer(producer);
  }

  mlir::LogicalResult TryAdd(Operation* add, Value y, Value t) {
    std::optional<FusedState> s = Producer(add, y);
    if (!s || s->activation != "None" || s->z) return mlir::failure();
    auto out = TensorTypeOf(y);
    const int64_t channel_dim = s->conv ? 1 : out.getRank() - 1;
    if (std::optional<std::vector<double>> values = BiasValues(t, out, channel_dim)) {
      // Summed with the bias the producer has: pending constant values or a constant operand.
      std::optional<std::vector<double>> existing = s->bias_values;
      if (!existing && s->bias) existing = ConstantValues(s->bias);
      if (s->bias && !s->bias_values && !existing) return mlir::failure();
      if (existing) {
        for (size_t i = 0; i < values->size(); ++i) (*values)[i] += (*existing)[i];
      }
      s->bias_values = std::move(values);
      ++counts_.bias_adds;
      return Replace(add, y, *s);
    }
    auto t_type = TensorTypeOf(t);
    if (!s->conv && !s->bias && !s->bias_values && t_type && t_type.getRank() == 1 &&
        t_type.getElementType() == out.getElementType() && !out.isDynamicDim(channel_dim) &&
        t_type.getDimSize(0) == out.getDimSize(channel_dim) && !ConstantValues(t)) {
      s->bias = t;
      ++counts_.bias_adds;
      return Replace(add, y, *s);
    }
    if (t.getType() == y.getType() && t != y) {
      s->z = t;
      ++counts_.residual_adds;
      return Replace(add, y, *s);
    }
    return mlir::failure();
  }

  // Replaces `consumer` by the fused op of `s`; the producer of `y` and constants that lost
  // their last use go away.
  mlir::LogicalResult Replace(Operation* consumer, Value y, FusedState& s) {
    Operation* producer = y.getDefiningOp();
    mlir::MLIRContext* context = consumer->getContext();
    const std::string op_name = s.conv ? "FusedConv" : "FusedMatMul";
    const OpDef* def = OpRegistry::Global().Find(op_name);
    if (def == nullptr) {
      error_ = true;
      return consumer->emitOpError() << "cannot fuse: the graph op " << op_name << " is not registered";
    }
    const mlir::Location loc = FusedLocation(producer, consumer);
    rewriter_.setInsertionPoint(consumer);
    Value old_bias = s.bias;
    if (s.bias_values) {
      auto element = TensorTypeOf(y).getElementType();
      auto type = mlir::RankedTensorType::get({static_cast<int64_t>(s.bias_values->size())}, element);
      mlir::DenseElementsAttr value;
      if (element.isF32()) {
        std::vector<float> f(s.bias_values->begin(), s.bias_values->end());
        value = mlir::DenseElementsAttr::get(type, llvm::ArrayRef<float>(f));
      } else {
        value = mlir::DenseElementsAttr::get(type, llvm::ArrayRef<double>(*s.bias_values));
      }
      mlir::Location bias_loc = loc;
      if (auto name = llvm::dyn_cast<mlir::NameLoc>(loc)) {
        bias_loc = mlir::NameLoc::get(mlir::StringAttr::get(context, name.getName().str() + "/bias"));
      }
      s.bias = rewriter_.create<mlir::tsr::ConstantOp>(bias_loc, value);
    }
    absl::StatusOr<mlir::tsr::OperandLayout> layout =
        mlir::tsr::OperandsFromSlots(*def, {s.x, s.w, s.bias ? std::optional<Value>(s.bias) : std::nullopt,
                                            s.z ? std::optional<Value>(s.z) : std::nullopt});
    if (!layout.ok()) {
      error_ = true;
      return consumer->emitOpError() << "cannot fuse: " << std::string(layout.status().message());
    }

    mlir::OperationState state(loc, "tsr." + op_name);
    state.addOperands(layout->operands);
    state.addTypes(y.getType());
    if (mlir::tsr::NeedsSegmentSizes(def->inputs)) {
      state.addAttribute("operandSegmentSizes", rewriter_.getDenseI32ArrayAttr(layout->segment_sizes));
    }
    state.addAttributes(s.conv_attrs);
    if (!s.conv && s.transpose_b != 0) state.addAttribute("transpose_b", rewriter_.getI64IntegerAttr(s.transpose_b));
    if (s.activation != "None") state.addAttribute("activation", rewriter_.getStringAttr(s.activation));
    if (s.alpha && s.activation == "LeakyRelu") state.addAttribute("alpha", rewriter_.getF64FloatAttr(*s.alpha));
    if (s.min && s.activation == "Clip") state.addAttribute("min", rewriter_.getF64FloatAttr(*s.min));
    if (s.max && s.activation == "Clip") state.addAttribute("max", rewriter_.getF64FloatAttr(*s.max));
    if (mlir::Attribute device = producer->getAttr(mlir::tsr::kDeviceAttrName)) {
      state.addAttribute(mlir::tsr::kDeviceAttrName, device);
    }
    Operation* fused = rewriter_.create(state);
    const llvm::StringRef producer_op = producer->getName().stripDialect();
    if (producer_op != "FusedConv" && producer_op != "FusedMatMul") ++counts_.fused_ops;

    // Constants that may have lost their last use (each once: x and w may be one constant).
    llvm::SetVector<Operation*> maybe_dead;
    for (Value v : consumer->getOperands()) maybe_dead.insert(v.getDefiningOp());
    for (Value v : producer->getOperands()) maybe_dead.insert(v.getDefiningOp());
    if (old_bias) maybe_dead.insert(old_bias.getDefiningOp());
    rewriter_.replaceOp(consumer, fused->getResults());
    rewriter_.eraseOp(producer);
    for (Operation* op : maybe_dead) {
      if (op != nullptr && op != producer && llvm::isa<mlir::tsr::ConstantOp>(op) && op->use_empty()) {
        rewriter_.eraseOp(op);
      }
    }
    return mlir::success();
  }

  mlir::RewriterBase& rewriter_;
  EpilogueCounts& counts_;
  bool error_ = false;
};

class EpilogueFusionPass : public mlir::PassWrapper<EpilogueFusionPass, mlir::OperationPass<mlir::func::FuncOp>> {
 public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(EpilogueFusionPass)

  EpilogueFusionPass() = default;
  EpilogueFusionPass(const EpilogueFusionPass& other) : PassWrapper(other) {}

  llvm::StringRef getArgument() const override { return "tsr-fuse-epilogues"; }
  llvm::StringRef getDescription() const override {
    return "Fuses bias adds, residual adds and activations into Conv / MatMul / Gemm as FusedConv / FusedMatMul";
  }
  void getDependentDialects(mlir::DialectRegistry& registry) const override {
    registry.insert<mlir::tsr::TsrDialect>();
  }

  void runOnOperation() override {
    EpilogueCounts counts;
    mlir::IRRewriter rewriter(&getContext());
    EpilogueFuser fuser(rewriter, counts);
    for (mlir::Block& block : getOperation().getBody()) {
      // The fused op replaces its consumer in place, so a later consumer meets it as producer.
      for (Operation& op : llvm::make_early_inc_range(block)) (void)fuser.TryAbsorb(&op);
    }
    if (fuser.error()) return signalPassFailure();
    num_fused_ops_ += counts.fused_ops;
    num_bias_adds_ += counts.bias_adds;
    num_residual_adds_ += counts.residual_adds;
    num_activations_ += counts.activations;
  }

 private:
  Statistic num_fused_ops_{this, "fused-ops", "Conv / MatMul / Gemm turned into FusedConv / FusedMatMul"};
  Statistic num_bias_adds_{this, "bias-adds", "Bias adds absorbed"};
  Statistic num_residual_adds_{this, "residual-adds", "Residual adds absorbed"};
  Statistic num_activations_{this, "activations", "Activations absorbed"};
};

}  // namespace

std::unique_ptr<mlir::Pass> CreateEpilogueFusionPass() { return std::make_unique<EpilogueFusionPass>(); }

void RegisterEpilogueFusionPass() { mlir::PassRegistration<EpilogueFusionPass>(); }

}  // namespace tsr

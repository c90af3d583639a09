// Reductions and normalizations -> linalg.generic reductions (parallel kept dims,
// "reduction" reduced dims, accumulator in a rank-reduced tensor) plus elementwise
// linalg.generic ops that read the per-row statistics through projected indexing maps.
// Softmax/LogSoftmax and LayerNormalization follow kernels/reference/normalization_kernels.cc:
// max-shifted exp, sum, then exp(x - max) * (1 / sum) or x - max - log(sum); mean, population
// variance of x - mean (two passes), (x - mean) * (1 / sqrt(var + epsilon)) * scale + bias.
#include "compiler/lowering/reduction_lowering.h"

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <utility>

#include "compiler/lowering/linalg_builders.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringSet.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"

namespace tsr::lowering {
namespace {

using mlir::AffineMap;
using mlir::Location;
using mlir::OpBuilder;
using mlir::RankedTensorType;
using mlir::Value;
using mlir::ValueRange;

enum class Combine { kSum, kMax, kMin };

// (builder, loc, element of x, element of `extra` or nullptr) -> the value to accumulate.
using PreMap = std::function<Value(OpBuilder&, Location, Value, Value)>;

// The dims of `x` that survive a reduction over `reduced`, as a map from x's loops.
AffineMap KeptMap(int64_t rank, llvm::ArrayRef<bool> reduced, mlir::MLIRContext* context) {
  llvm::SmallVector<mlir::AffineExpr> exprs;
  for (int64_t d = 0; d < rank; ++d) {
    if (!reduced[d]) exprs.push_back(mlir::getAffineDimExpr(d, context));
  }
  return AffineMap::get(rank, 0, exprs, context);
}

RankedTensorType KeptType(RankedTensorType type, llvm::ArrayRef<bool> reduced) {
  llvm::SmallVector<int64_t> shape;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    if (!reduced[d]) shape.push_back(type.getDimSize(d));
  }
  return RankedTensorType::get(shape, type.getElementType());
}

// One linalg.generic reducing `x` over the dims `reduced` into a tensor of the other dims;
// `extra` (optional) is read through `extra_map` alongside each element for `pre`.
Value ReduceGeneric(OpBuilder& b, Location loc, Value x, llvm::ArrayRef<bool> reduced, Combine combine, Value extra,
                    AffineMap extra_map, const PreMap& pre) {
  auto type = mlir::cast<RankedTensorType>(x.getType());
  const int64_t rank = type.getRank();
  mlir::MLIRContext* context = b.getContext();
  const RankedTensorType kept_type = KeptType(type, reduced);
  const AffineMap kept = KeptMap(rank, reduced, context);
  const double init = combine == Combine::kSum   ? 0.0
                      : combine == Combine::kMax ? -std::numeric_limits<double>::infinity()
                                                 : std::numeric_limits<double>::infinity();
  Value empty = b.create<mlir::tensor::EmptyOp>(loc, kept_type.getShape(), kept_type.getElementType());
  Value filled = b.create<mlir::linalg::FillOp>(loc, F32(b, loc, init), empty).getResult(0);
  llvm::SmallVector<Value> inputs = {x};
  llvm::SmallVector<AffineMap> maps = {b.getMultiDimIdentityMap(rank)};
  if (extra != nullptr) {
    inputs.push_back(extra);
    maps.push_back(extra_map);
  }
  maps.push_back(kept);
  llvm::SmallVector<mlir::utils::IteratorType> iterators;
  for (int64_t d = 0; d < rank; ++d) {
    iterators.push_back(reduced[d] ? mlir::utils::IteratorType::reduction : mlir::utils::IteratorType::parallel);
  }
  auto generic = b.create<mlir::linalg::GenericOp>(
      loc, mlir::TypeRange{kept_type}, inputs, mlir::ValueRange{filled}, maps, iterators,
      [&](OpBuilder& nested, Location nested_loc, ValueRange args) {
        Value v = pre ? pre(nested, nested_loc, args[0], extra != nullptr ? args[1] : nullptr) : args[0];
        Value acc = args.back();
        Value combined;
        switch (combine) {
          case Combine::kSum:
            combined = nested.create<mlir::arith::AddFOp>(nested_loc, acc, v);
            break;
          case Combine::kMax:
            combined = nested.create<mlir::arith::MaximumFOp>(nested_loc, acc, v);
            break;
          case Combine::kMin:
            combined = nested.create<mlir::arith::MinimumFOp>(nested_loc, acc, v);
            break;
        }
        nested.create<mlir::linalg::YieldOp>(nested_loc, combined);
      });
  return generic.getResult(0);
}

// Reduces `x` over the dims `reduced` into a tensor of the kept dims. `extra` (optional) is a
// tensor of the kept dims read alongside each element for `pre`.
//
// When the innermost dim is reduced and splits into chunks of `lanes` (64..8) elements, the
// reduction runs in two stages: x viewed as [..., K / lanes, lanes] is first reduced over the
// chunks into [kept..., lanes] (vector adds across chunks), then over the lanes. Codegen
// vectorizes a reduction along the innermost dim into one serial chain per tile; the first
// stage has none, and the second is `lanes` times shorter.
Value Reduce(OpBuilder& b, Location loc, Value x, llvm::ArrayRef<bool> reduced, Combine combine, Value extra = nullptr,
             PreMap pre = nullptr) {
  auto type = mlir::cast<RankedTensorType>(x.getType());
  const int64_t rank = type.getRank();
  mlir::MLIRContext* context = b.getContext();
  int64_t lanes = 0;
  if (rank > 0 && reduced.back()) {
    const int64_t extent = type.getDimSize(rank - 1);
    for (int64_t candidate : {64, 32, 16, 8}) {
      if (extent % candidate == 0 && extent / candidate >= 2) {
        lanes = candidate;
        break;
      }
    }
  }
  if (lanes == 0) return ReduceGeneric(b, loc, x, reduced, combine, extra, KeptMap(rank, reduced, context), pre);
  // x as [..., K / lanes, lanes]: loops d0 .. d(rank), d(rank-1) the chunk, d(rank) the lane.
  llvm::SmallVector<int64_t> split_shape(type.getShape().drop_back());
  split_shape.push_back(type.getDimSize(rank - 1) / lanes);
  split_shape.push_back(lanes);
  llvm::SmallVector<mlir::ReassociationIndices> reassociation;
  for (int64_t d = 0; d + 1 < rank; ++d) reassociation.push_back({d});
  reassociation.push_back({rank - 1, rank});
  Value split = b.create<mlir::tensor::ExpandShapeOp>(loc, RankedTensorType::get(split_shape, type.getElementType()), x,
                                                      reassociation);
  llvm::SmallVector<bool> stage1(reduced.drop_back());
  stage1.push_back(true);   // the chunks
  stage1.push_back(false);  // the lanes
  // `extra` is indexed by the kept dims, which are all below rank - 1.
  llvm::SmallVector<bool> not_lanes(stage1);
  not_lanes.back() = true;
  Value partial = ReduceGeneric(b, loc, split, stage1, combine, extra, KeptMap(rank + 1, not_lanes, context), pre);
  const int64_t partial_rank = mlir::cast<RankedTensorType>(partial.getType()).getRank();
  llvm::SmallVector<bool> stage2(partial_rank, false);
  stage2.back() = true;
  return ReduceGeneric(b, loc, partial, stage2, combine, nullptr, AffineMap(), nullptr);
}

// An elementwise generic over `result_type`'s shape reading each input through its map.
Value Map(OpBuilder& b, Location loc, RankedTensorType result_type, llvm::ArrayRef<std::pair<Value, AffineMap>> inputs,
          const std::function<Value(OpBuilder&, Location, ValueRange)>& body) {
  llvm::SmallVector<Value> values;
  llvm::SmallVector<AffineMap> maps;
  for (const auto& [value, map] : inputs) {
    values.push_back(value);
    maps.push_back(map);
  }
  maps.push_back(b.getMultiDimIdentityMap(result_type.getRank()));
  llvm::SmallVector<mlir::utils::IteratorType> iterators(result_type.getRank(), mlir::utils::IteratorType::parallel);
  Value empty = b.create<mlir::tensor::EmptyOp>(loc, result_type.getShape(), result_type.getElementType());
  auto generic = b.create<mlir::linalg::GenericOp>(
      loc, mlir::TypeRange{result_type}, values, mlir::ValueRange{empty}, maps, iterators,
      [&](OpBuilder& nested, Location nested_loc, ValueRange args) {
        nested.create<mlir::linalg::YieldOp>(nested_loc, body(nested, nested_loc, args.drop_back()));
      });
  return generic.getResult(0);
}

int64_t IntAttr(mlir::Operation* op, llvm::StringRef name, int64_t fallback) {
  if (auto attr = op->getAttrOfType<mlir::IntegerAttr>(name)) return attr.getValue().getSExtValue();
  return fallback;
}

bool IsF32Tensor(mlir::Type type) {
  auto tensor = mlir::dyn_cast<RankedTensorType>(type);
  return tensor != nullptr && tensor.hasStaticShape() && tensor.getElementType().isF32();
}

// ReduceSum / ReduceMean / ReduceMax / ReduceMin / ReduceSumSquare (opset 18: axes as an
// optional constant operand, keepdims, noop_with_empty_axes).
mlir::FailureOr<Value> LowerReduce(OpBuilder& b, mlir::Operation* op, llvm::StringRef name, Value x) {
  const Location loc = op->getLoc();
  auto type = mlir::cast<RankedTensorType>(x.getType());
  auto result_type = mlir::cast<RankedTensorType>(op->getResult(0).getType());
  const int64_t rank = type.getRank();
  llvm::SmallVector<int64_t> axes;
  if (op->getNumOperands() > 1) {
    mlir::DenseIntElementsAttr attr;
    if (!mlir::matchPattern(op->getOperand(1), mlir::m_Constant(&attr))) {
      op->emitOpError("cannot be outlined: 'axes' is not a constant");
      return mlir::failure();
    }
    for (const llvm::APInt& axis : attr.getValues<llvm::APInt>()) axes.push_back(axis.getSExtValue());
  }
  if (axes.empty() && IntAttr(op, "noop_with_empty_axes", 0) == 1) {
    if (result_type.getShape() != type.getShape()) {
      op->emitOpError("cannot be outlined: a no-op reduction changes the shape");
      return mlir::failure();
    }
    return x;
  }
  llvm::SmallVector<bool> reduced(rank, axes.empty());
  for (int64_t axis : axes) {
    std::optional<int64_t> normalized = NormalizeAxis(axis, rank);
    if (!normalized.has_value()) {
      op->emitOpError("cannot be outlined: axis ") << axis << " is out of range for rank " << rank;
      return mlir::failure();
    }
    reduced[*normalized] = true;
  }
  PreMap square = [](OpBuilder& nb, Location nl, Value v, Value) -> Value {
    return nb.create<mlir::arith::MulFOp>(nl, v, v);
  };
  const Combine combine = name == "ReduceMax" ? Combine::kMax : name == "ReduceMin" ? Combine::kMin : Combine::kSum;
  Value r = Reduce(b, loc, x, reduced, combine, nullptr, name == "ReduceSumSquare" ? square : nullptr);
  if (name == "ReduceMean") {
    int64_t count = 1;
    for (int64_t d = 0; d < rank; ++d) count *= reduced[d] ? type.getDimSize(d) : 1;
    auto kept_type = mlir::cast<RankedTensorType>(r.getType());
    r = Map(b, loc, kept_type, {{r, b.getMultiDimIdentityMap(kept_type.getRank())}},
            [count](OpBuilder& nb, Location nl, ValueRange v) -> Value {
              return nb.create<mlir::arith::DivFOp>(nl, v[0], F32(nb, nl, static_cast<double>(count)));
            });
  }
  const int64_t kept_elements = mlir::cast<RankedTensorType>(r.getType()).getNumElements();
  if (kept_elements != result_type.getNumElements()) {
    op->emitOpError("cannot be outlined: the reduction gives ") << r.getType() << " for result type " << result_type;
    return mlir::failure();
  }
  return ReshapeTo(b, loc, r, result_type);  // keepdims: the reduced dims back as 1s
}

// Softmax / LogSoftmax along one axis.
mlir::FailureOr<Value> LowerSoftmax(OpBuilder& b, mlir::Operation* op, bool log, Value x) {
  const Location loc = op->getLoc();
  auto type = mlir::cast<RankedTensorType>(x.getType());
  const int64_t rank = type.getRank();
  const int64_t axis_attr = IntAttr(op, "axis", -1);
  std::optional<int64_t> axis = NormalizeAxis(axis_attr, rank);
  if (!axis.has_value()) {
    op->emitOpError("cannot be outlined: axis ") << axis_attr << " is out of range for rank " << rank;
    return mlir::failure();
  }
  llvm::SmallVector<bool> reduced(rank, false);
  reduced[*axis] = true;
  const AffineMap id = b.getMultiDimIdentityMap(rank);
  const AffineMap kept = KeptMap(rank, reduced, b.getContext());
  Value max = Reduce(b, loc, x, reduced, Combine::kMax);
  PreMap shifted_exp = [](OpBuilder& nb, Location nl, Value v, Value m) -> Value {
    return nb.create<mlir::math::ExpOp>(nl, nb.create<mlir::arith::SubFOp>(nl, v, m));
  };
  if (!log) {
    // exp(x - max) once, kept for the output (the exponential is most of the work), then
    // its sum, then one multiply by the sum's reciprocal per element instead of a divide.
    Value e = Map(b, loc, type, {{x, id}, {max, kept}},
                  [&](OpBuilder& nb, Location nl, ValueRange v) -> Value { return shifted_exp(nb, nl, v[0], v[1]); });
    Value sum = Reduce(b, loc, e, reduced, Combine::kSum);
    auto kept_type = mlir::cast<RankedTensorType>(sum.getType());
    Value inverse = Map(b, loc, kept_type, {{sum, b.getMultiDimIdentityMap(kept_type.getRank())}},
                        [](OpBuilder& nb, Location nl, ValueRange v) -> Value {
                          return nb.create<mlir::arith::DivFOp>(nl, F32(nb, nl, 1.0), v[0]);
                        });
    return Map(b, loc, type, {{e, id}, {inverse, kept}}, [](OpBuilder& nb, Location nl, ValueRange v) -> Value {
      return nb.create<mlir::arith::MulFOp>(nl, v[0], v[1]);
    });
  }
  Value sum = Reduce(b, loc, x, reduced, Combine::kSum, max, shifted_exp);
  auto kept_type = mlir::cast<RankedTensorType>(sum.getType());
  Value log_sum =
      Map(b, loc, kept_type, {{sum, b.getMultiDimIdentityMap(kept_type.getRank())}},
          [](OpBuilder& nb, Location nl, ValueRange v) -> Value { return nb.create<mlir::math::LogOp>(nl, v[0]); });
  return Map(b, loc, type, {{x, id}, {max, kept}, {log_sum, kept}},
             [](OpBuilder& nb, Location nl, ValueRange v) -> Value {
               Value shifted = nb.create<mlir::arith::SubFOp>(nl, v[0], v[1]);
               return nb.create<mlir::arith::SubFOp>(nl, shifted, v[2]);
             });
}

// LayerNormalization's Y (its Mean and InvStdDev outputs must be unused).
mlir::FailureOr<Value> LowerLayerNorm(OpBuilder& b, mlir::Operation* op, Value x, Value scale, Value bias) {
  const Location loc = op->getLoc();
  if (!op->getResult(1).use_empty() || !op->getResult(2).use_empty()) {
    op->emitOpError("cannot be outlined: only output Y is lowered, but Mean or InvStdDev is used");
    return mlir::failure();
  }
  if (IntAttr(op, "stash_type", 1) != 1) {
    op->emitOpError("cannot be outlined: only stash_type = 1 (f32) is lowered");
    return mlir::failure();
  }
  auto type = mlir::cast<RankedTensorType>(x.getType());
  const int64_t rank = type.getRank();
  const int64_t axis_attr = IntAttr(op, "axis", -1);
  std::optional<int64_t> axis = NormalizeAxis(axis_attr, rank);
  if (!axis.has_value()) {
    op->emitOpError("cannot be outlined: axis ") << axis_attr << " is out of range for rank " << rank;
    return mlir::failure();
  }
  double epsilon = 1e-5;
  if (auto attr = op->getAttrOfType<mlir::FloatAttr>("epsilon")) epsilon = attr.getValueAsDouble();
  llvm::SmallVector<bool> reduced(rank, false);
  int64_t count = 1;
  for (int64_t d = *axis; d < rank; ++d) {
    reduced[d] = true;
    count *= type.getDimSize(d);
  }
  const AffineMap id = b.getMultiDimIdentityMap(rank);
  const AffineMap kept = KeptMap(rank, reduced, b.getContext());
  // Scale and B broadcast onto the normalized dims [axis, rank).
  llvm::SmallVector<std::pair<Value, AffineMap>> params;
  for (auto [value, what] : {std::pair<Value, const char*>{scale, "Scale"}, {bias, "B"}}) {
    if (value == nullptr) continue;
    auto param_type = mlir::cast<RankedTensorType>(value.getType());
    mlir::FailureOr<AffineMap> map = BroadcastMap(param_type.getShape(), type.getShape(), b.getContext());
    if (param_type.getRank() > rank - *axis || mlir::failed(map)) {
      op->emitOpError("cannot be outlined: ")
          << what << " of type " << param_type << " does not broadcast onto the normalized dims of " << type;
      return mlir::failure();
    }
    params.push_back({value, *map});
  }
  const bool has_bias = bias != nullptr;
  const auto n = static_cast<double>(count);
  Value sum = Reduce(b, loc, x, reduced, Combine::kSum);
  auto kept_type = mlir::cast<RankedTensorType>(sum.getType());
  const AffineMap kept_id = b.getMultiDimIdentityMap(kept_type.getRank());
  Value mean = Map(b, loc, kept_type, {{sum, kept_id}}, [n](OpBuilder& nb, Location nl, ValueRange v) -> Value {
    return nb.create<mlir::arith::DivFOp>(nl, v[0], F32(nb, nl, n));
  });
  PreMap centered_square = [](OpBuilder& nb, Location nl, Value v, Value m) -> Value {
    Value d = nb.create<mlir::arith::SubFOp>(nl, v, m);
    return nb.create<mlir::arith::MulFOp>(nl, d, d);
  };
  Value squares = Reduce(b, loc, x, reduced, Combine::kSum, mean, centered_square);
  Value inv_std =
      Map(b, loc, kept_type, {{squares, kept_id}}, [n, epsilon](OpBuilder& nb, Location nl, ValueRange v) -> Value {
        Value variance = nb.create<mlir::arith::DivFOp>(nl, v[0], F32(nb, nl, n));
        Value sqrt =
            nb.create<mlir::math::SqrtOp>(nl, nb.create<mlir::arith::AddFOp>(nl, variance, F32(nb, nl, epsilon)));
        return nb.create<mlir::arith::DivFOp>(nl, F32(nb, nl, 1.0), sqrt);
      });
  llvm::SmallVector<std::pair<Value, AffineMap>> inputs = {{x, id}, {mean, kept}, {inv_std, kept}};
  inputs.append(params.begin(), params.end());
  return Map(b, loc, type, inputs, [has_bias](OpBuilder& nb, Location nl, ValueRange v) -> Value {
    Value centered = nb.create<mlir::arith::SubFOp>(nl, v[0], v[1]);
    Value scaled = nb.create<mlir::arith::MulFOp>(nl, nb.create<mlir::arith::MulFOp>(nl, centered, v[2]), v[3]);
    return has_bias ? nb.create<mlir::arith::AddFOp>(nl, scaled, v[4]) : scaled;
  });
}

const llvm::StringSet<>& Names() {
  static const llvm::StringSet<> names = {"ReduceSum",       "ReduceMean", "ReduceMax",  "ReduceMin",
                                          "ReduceSumSquare", "Softmax",    "LogSoftmax", "LayerNormalization"};
  return names;
}

}  // namespace

bool IsLoweredReductionOp(llvm::StringRef name) { return Names().contains(name); }

mlir::LogicalResult LowerReductionOp(mlir::OpBuilder& builder, mlir::Operation* op, mlir::IRMapping& mapping) {
  const llvm::StringRef name = op->getName().stripDialect();
  if (!IsF32Tensor(op->getResult(0).getType())) {
    return op->emitOpError("cannot be outlined: only static f32 tensor results are lowered");
  }
  // Data operands: X (all), Scale and B (LayerNormalization). Reductions' axes are read as
  // constants from the tsr operand itself.
  const unsigned data_operands = name == "LayerNormalization" ? op->getNumOperands() : 1;
  llvm::SmallVector<Value> inputs;
  for (unsigned i = 0; i < data_operands; ++i) {
    if (!IsF32Tensor(op->getOperand(i).getType())) {
      return op->emitOpError("cannot be outlined: operand #") << i << " is not a static f32 tensor";
    }
    Value lowered = mapping.lookupOrNull(op->getOperand(i));
    if (lowered == nullptr) return op->emitOpError("cannot be outlined: operand #") << i << " was not lowered";
    inputs.push_back(lowered);
  }
  mlir::FailureOr<Value> result = mlir::failure();
  if (name == "Softmax" || name == "LogSoftmax") {
    result = LowerSoftmax(builder, op, name == "LogSoftmax", inputs[0]);
  } else if (name == "LayerNormalization") {
    if (inputs.size() < 2) return op->emitOpError("cannot be outlined: Scale is missing");
    result = LowerLayerNorm(builder, op, inputs[0], inputs[1], inputs.size() > 2 ? inputs[2] : nullptr);
  } else if (IsLoweredReductionOp(name)) {
    result = LowerReduce(builder, op, name, inputs[0]);
  } else {
    return op->emitOpError("cannot be outlined: no reduction lowering for '") << name << "'";
  }
  if (mlir::failed(result)) return mlir::failure();
  mapping.map(op->getResult(0), *result);
  return mlir::success();
}

}  // namespace tsr::lowering

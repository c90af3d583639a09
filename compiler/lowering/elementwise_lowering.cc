// Elementwise tsr ops -> one linalg.generic each (numpy broadcasting through the indexing
// maps of linalg_builders.h); Reshape -> tensor.collapse_shape/expand_shape, Identity and
// identity Cast -> their operand. Each scalar body follows the formula of the op's reference
// kernel (kernels/reference/*) in f32: the numerically stable forms of Sigmoid and Softplus,
// expm1 for Elu/Selu/Celu, NaN kept by Relu/Clip/Max/Min/HardSigmoid/Sign.
#include "compiler/lowering/elementwise_lowering.h"

#include <cmath>
#include <functional>
#include <optional>
#include <string>

#include "compiler/dialect/tsr_dialect.h"
#include "compiler/lowering/linalg_builders.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringSet.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

namespace tsr::lowering {
namespace {

using mlir::Location;
using mlir::OpBuilder;
using mlir::Value;
using mlir::ValueRange;
using Pred = mlir::arith::CmpFPredicate;

// Scalar helpers (f32 values inside a linalg.generic body).
struct Scalar {
  OpBuilder& b;
  Location loc;
  Value C(double v) const { return F32(b, loc, v); }
  Value Add(Value x, Value y) const { return b.create<mlir::arith::AddFOp>(loc, x, y); }
  Value Sub(Value x, Value y) const { return b.create<mlir::arith::SubFOp>(loc, x, y); }
  Value Mul(Value x, Value y) const { return b.create<mlir::arith::MulFOp>(loc, x, y); }
  Value Div(Value x, Value y) const { return b.create<mlir::arith::DivFOp>(loc, x, y); }
  Value Neg(Value x) const { return b.create<mlir::arith::NegFOp>(loc, x); }
  Value Max(Value x, Value y) const { return b.create<mlir::arith::MaximumFOp>(loc, x, y); }  // NaN wins
  Value Min(Value x, Value y) const { return b.create<mlir::arith::MinimumFOp>(loc, x, y); }  // NaN wins
  Value Cmp(Pred p, Value x, Value y) const { return b.create<mlir::arith::CmpFOp>(loc, p, x, y); }
  Value Select(Value c, Value x, Value y) const { return b.create<mlir::arith::SelectOp>(loc, c, x, y); }
  Value Exp(Value x) const { return b.create<mlir::math::ExpOp>(loc, x); }
  Value Expm1(Value x) const { return b.create<mlir::math::ExpM1Op>(loc, x); }
  Value Sqrt(Value x) const { return b.create<mlir::math::SqrtOp>(loc, x); }
  // 1 / (1 + e^-x): e^-x overflows to inf for x < -88 and the quotient is then 0, never NaN.
  Value Sigmoid(Value x) const { return Div(C(1.0), Add(C(1.0), Exp(Neg(x)))); }
  // x if x > 0 else alpha * expm1(x * scale).
  Value ExpLinear(Value x, double alpha, double scale) const {
    Value inner = scale == 1.0 ? x : Mul(x, C(scale));
    return Select(Cmp(Pred::OGT, x, C(0.0)), x, Mul(C(alpha), Expm1(inner)));
  }
  // min(max(v, 0), 1), NaN kept.
  Value Clamp01(Value v) const { return Min(Max(v, C(0.0)), C(1.0)); }
};

double FloatAttr(mlir::Operation* op, llvm::StringRef name, double fallback) {
  if (auto attr = op->getAttrOfType<mlir::FloatAttr>(name)) return attr.getValueAsDouble();
  return fallback;
}

using Body = std::function<Value(const Scalar&, ValueRange)>;

// The body of the unary op `op` named `name`; failure (with an error on `op`) for an
// unsupported attribute value or name.
// Attributes default as in the op's ODS definition (TsrGeneratedOps.td).
mlir::FailureOr<Body> UnaryBody(mlir::Operation* op, llvm::StringRef name) {
  if (name == "Neg") return Body([](const Scalar& s, ValueRange v) { return s.Neg(v[0]); });
  if (name == "Abs")
    return Body([](const Scalar& s, ValueRange v) -> Value { return s.b.create<mlir::math::AbsFOp>(s.loc, v[0]); });
  if (name == "Exp") return Body([](const Scalar& s, ValueRange v) { return s.Exp(v[0]); });
  if (name == "Log")
    return Body([](const Scalar& s, ValueRange v) -> Value { return s.b.create<mlir::math::LogOp>(s.loc, v[0]); });
  if (name == "Sqrt") return Body([](const Scalar& s, ValueRange v) { return s.Sqrt(v[0]); });
  // 1 / sqrt(x) as the reference computes it (math.rsqrt may be an estimate).
  if (name == "Rsqrt") return Body([](const Scalar& s, ValueRange v) { return s.Div(s.C(1.0), s.Sqrt(v[0])); });
  if (name == "Reciprocal") return Body([](const Scalar& s, ValueRange v) { return s.Div(s.C(1.0), v[0]); });
  if (name == "Tanh")
    return Body([](const Scalar& s, ValueRange v) -> Value { return s.b.create<mlir::math::TanhOp>(s.loc, v[0]); });
  if (name == "Erf")
    return Body([](const Scalar& s, ValueRange v) -> Value { return s.b.create<mlir::math::ErfOp>(s.loc, v[0]); });
  if (name == "Floor")
    return Body([](const Scalar& s, ValueRange v) -> Value { return s.b.create<mlir::math::FloorOp>(s.loc, v[0]); });
  if (name == "Ceil")
    return Body([](const Scalar& s, ValueRange v) -> Value { return s.b.create<mlir::math::CeilOp>(s.loc, v[0]); });
  if (name == "Sigmoid") return Body([](const Scalar& s, ValueRange v) { return s.Sigmoid(v[0]); });
  if (name == "Silu") return Body([](const Scalar& s, ValueRange v) { return s.Mul(v[0], s.Sigmoid(v[0])); });
  // x < 0 ? 0 : x (NaN < 0 is false: NaN stays).
  if (name == "Relu")
    return Body(
        [](const Scalar& s, ValueRange v) { return s.Select(s.Cmp(Pred::OLT, v[0], s.C(0.0)), s.C(0.0), v[0]); });
  if (name == "LeakyRelu") {
    const double alpha = FloatAttr(op, "alpha", 0.01);
    return Body([alpha](const Scalar& s, ValueRange v) {
      return s.Select(s.Cmp(Pred::OGE, v[0], s.C(0.0)), v[0], s.Mul(s.C(alpha), v[0]));
    });
  }
  // max(x, 0) + log1p(e^-|x|): no overflow for large |x|.
  if (name == "Softplus")
    return Body([](const Scalar& s, ValueRange v) -> Value {
      Value abs = s.b.create<mlir::math::AbsFOp>(s.loc, v[0]);
      Value log1p = s.b.create<mlir::math::Log1pOp>(s.loc, s.Exp(s.Neg(abs)));
      Value positive = s.Select(s.Cmp(Pred::OGT, v[0], s.C(0.0)), v[0], s.C(0.0));
      // NaN: the select gives 0 but log1p(e^NaN) is NaN, so the sum is NaN.
      return s.Add(positive, log1p);
    });
  if (name == "HardSigmoid") {
    const double alpha = FloatAttr(op, "alpha", 0.2), beta = FloatAttr(op, "beta", 0.5);
    return Body(
        [alpha, beta](const Scalar& s, ValueRange v) { return s.Clamp01(s.Add(s.Mul(s.C(alpha), v[0]), s.C(beta))); });
  }
  if (name == "HardSwish")
    return Body(
        [](const Scalar& s, ValueRange v) { return s.Mul(v[0], s.Clamp01(s.Add(s.Div(v[0], s.C(6.0)), s.C(0.5)))); });
  if (name == "Elu") {
    const double alpha = FloatAttr(op, "alpha", 1.0);
    return Body([alpha](const Scalar& s, ValueRange v) { return s.ExpLinear(v[0], alpha, 1.0); });
  }
  if (name == "Selu") {
    const double alpha = FloatAttr(op, "alpha", 1.6732631921768188), gamma = FloatAttr(op, "gamma", 1.0507010221481323);
    return Body(
        [alpha, gamma](const Scalar& s, ValueRange v) { return s.Mul(s.C(gamma), s.ExpLinear(v[0], alpha, 1.0)); });
  }
  if (name == "Celu") {
    const double alpha = FloatAttr(op, "alpha", 1.0);
    if (alpha == 0) {
      op->emitOpError("cannot be outlined: attribute 'alpha' is 0 (Celu divides by it)");
      return mlir::failure();
    }
    return Body([alpha](const Scalar& s, ValueRange v) { return s.ExpLinear(v[0], alpha, 1.0 / alpha); });
  }
  if (name == "Gelu") {
    std::string approximate = "none";
    if (auto attr = op->getAttrOfType<mlir::StringAttr>("approximate")) approximate = attr.getValue().str();
    if (approximate == "none") {
      // 0.5 x (1 + erf(x / sqrt(2)))
      return Body([](const Scalar& s, ValueRange v) -> Value {
        Value erf = s.b.create<mlir::math::ErfOp>(s.loc, s.Mul(v[0], s.C(M_SQRT1_2)));
        return s.Mul(s.Mul(s.C(0.5), v[0]), s.Add(s.C(1.0), erf));
      });
    }
    if (approximate == "tanh") {
      // 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))
      return Body([](const Scalar& s, ValueRange v) -> Value {
        Value cube = s.Mul(s.Mul(v[0], v[0]), v[0]);
        Value inner = s.Mul(s.C(std::sqrt(2.0 / M_PI)), s.Add(v[0], s.Mul(s.C(0.044715), cube)));
        Value tanh = s.b.create<mlir::math::TanhOp>(s.loc, inner);
        return s.Mul(s.Mul(s.C(0.5), v[0]), s.Add(s.C(1.0), tanh));
      });
    }
    op->emitOpError("cannot be outlined: attribute 'approximate' is \"")
        << approximate << "\" but \"none\" or \"tanh\" is required";
    return mlir::failure();
  }
  // NaN stays NaN, 0 (either sign) stays.
  if (name == "Sign")
    return Body([](const Scalar& s, ValueRange v) {
      Value negative = s.Select(s.Cmp(Pred::OLT, v[0], s.C(0.0)), s.C(-1.0), v[0]);
      return s.Select(s.Cmp(Pred::OGT, v[0], s.C(0.0)), s.C(1.0), negative);
    });
  op->emitOpError("cannot be outlined: no elementwise lowering for '") << name << "'";
  return mlir::failure();
}

// Pow: exponents that are small integer splat constants become multiplications; any other
// exponent calls math.powf (exact, libm's powf).
Body PowBody(mlir::Operation* op) {
  const std::optional<double> exponent = SplatFloat(op->getOperand(1));
  if (exponent == 1.0) return [](const Scalar&, ValueRange v) { return v[0]; };
  if (exponent == 2.0) return [](const Scalar& s, ValueRange v) { return s.Mul(v[0], v[0]); };
  if (exponent == 3.0) return [](const Scalar& s, ValueRange v) { return s.Mul(s.Mul(v[0], v[0]), v[0]); };
  if (exponent == -1.0) return [](const Scalar& s, ValueRange v) { return s.Div(s.C(1.0), v[0]); };
  return [](const Scalar& s, ValueRange v) -> Value { return s.b.create<mlir::math::PowFOp>(s.loc, v[0], v[1]); };
}

const llvm::StringSet<>& UnaryNames() {
  static const llvm::StringSet<> names = {"Neg",        "Abs",  "Exp",       "Log",      "Sqrt",        "Rsqrt",
                                          "Reciprocal", "Tanh", "Erf",       "Floor",    "Ceil",        "Sigmoid",
                                          "Silu",       "Relu", "LeakyRelu", "Softplus", "HardSigmoid", "HardSwish",
                                          "Elu",        "Selu", "Celu",      "Gelu",     "Sign"};
  return names;
}

const llvm::StringSet<>& OtherNames() {
  static const llvm::StringSet<> names = {"Add",  "Sub",   "Mul",  "Div",    "Max",     "Min",     "Pow",
                                          "Clip", "Where", "Cast", "Expand", "Reshape", "Identity"};
  return names;
}

bool IsF32Tensor(mlir::Type type) {
  auto tensor = mlir::dyn_cast<mlir::RankedTensorType>(type);
  return tensor != nullptr && tensor.hasStaticShape() && tensor.getElementType().isF32();
}

}  // namespace

bool IsLoweredElementwiseOp(llvm::StringRef name) { return UnaryNames().contains(name) || OtherNames().contains(name); }

mlir::LogicalResult LowerElementwiseOp(mlir::OpBuilder& builder, mlir::Operation* op, mlir::IRMapping& mapping) {
  const llvm::StringRef name = op->getName().stripDialect();
  const Location loc = op->getLoc();
  if (op->getNumResults() != 1 || !IsF32Tensor(op->getResult(0).getType())) {
    return op->emitOpError("cannot be outlined: only ops with one static f32 tensor result are lowered");
  }
  auto result_type = mlir::cast<mlir::RankedTensorType>(op->getResult(0).getType());
  // The operands that are data (Reshape's and Expand's shapes are implied by the static result
  // type; Where's condition is i1).
  llvm::SmallVector<Value> inputs;
  for (auto [index, operand] : llvm::enumerate(op->getOperands())) {
    if ((name == "Reshape" || name == "Expand") && index == 1) continue;
    if (name == "Where" && index == 0) {
      auto cond = mlir::dyn_cast<mlir::RankedTensorType>(operand.getType());
      if (cond == nullptr || !cond.getElementType().isInteger(1)) {
        return op->emitOpError("cannot be outlined: the condition must be an i1 tensor");
      }
    } else if (!IsF32Tensor(operand.getType())) {
      return op->emitOpError("cannot be outlined: operand #") << index << " is not a static f32 tensor";
    }
    Value lowered = mapping.lookupOrNull(operand);
    if (lowered == nullptr) return op->emitOpError("cannot be outlined: operand #") << index << " was not lowered";
    inputs.push_back(lowered);
  }

  Value result;
  if (name == "Identity") {
    result = inputs[0];
  } else if (name == "Cast") {
    // f32 -> f32 only (both types were checked above).
    result = inputs[0];
  } else if (name == "Reshape") {
    result = ReshapeTo(builder, loc, inputs[0], result_type);
  } else {
    Body body;
    if (name == "Expand") {
      body = [](const Scalar&, ValueRange v) { return v[0]; };
    } else if (name == "Add") {
      body = [](const Scalar& s, ValueRange v) { return s.Add(v[0], v[1]); };
    } else if (name == "Sub") {
      body = [](const Scalar& s, ValueRange v) { return s.Sub(v[0], v[1]); };
    } else if (name == "Mul") {
      body = [](const Scalar& s, ValueRange v) { return s.Mul(v[0], v[1]); };
    } else if (name == "Div") {
      // By a constant: a multiply by its reciprocal, as XLA's algebraic simplifier does (a
      // divide costs ten multiplies' throughput; GELU's x / sqrt(2) is one per element).
      // Within an ulp of the quotient; exact for powers of two.
      const std::optional<double> divisor = SplatFloat(op->getOperand(1));
      if (divisor.has_value() && std::isfinite(*divisor) && *divisor != 0.0 &&
          std::isfinite(1.0f / static_cast<float>(*divisor))) {
        const double reciprocal = 1.0f / static_cast<float>(*divisor);
        body = [reciprocal](const Scalar& s, ValueRange v) { return s.Mul(v[0], s.C(reciprocal)); };
      } else {
        body = [](const Scalar& s, ValueRange v) { return s.Div(v[0], v[1]); };
      }
    } else if (name == "Max" || name == "Min") {
      const bool is_max = name == "Max";
      body = [is_max](const Scalar& s, ValueRange v) {
        Value acc = v[0];
        for (Value next : v.drop_front()) acc = is_max ? s.Max(acc, next) : s.Min(acc, next);
        return acc;
      };
    } else if (name == "Pow") {
      body = PowBody(op);
    } else if (name == "Where") {
      body = [](const Scalar& s, ValueRange v) { return s.Select(v[0], v[1], v[2]); };
    } else if (name == "Clip") {
      auto clip = mlir::cast<mlir::tsr::ClipOp>(op);
      const bool has_min = clip.getMin() != nullptr, has_max = clip.getMax() != nullptr;
      // The bounds hold one value each; as rank-0 tensors they broadcast onto any shape.
      for (size_t i = 1; i < inputs.size(); ++i) {
        auto type = mlir::cast<mlir::RankedTensorType>(inputs[i].getType());
        if (type.getNumElements() != 1) {
          return op->emitOpError("cannot be outlined: the ")
                 << (i == 1 && has_min ? "min" : "max") << " operand must hold one value";
        }
        inputs[i] = ReshapeTo(builder, loc, inputs[i], mlir::RankedTensorType::get({}, type.getElementType()));
      }
      // Raise to min, then lower to max (min > max gives max, as the reference).
      body = [has_min, has_max](const Scalar& s, ValueRange v) {
        Value x = v[0];
        int next = 1;
        if (has_min) {
          Value lo = v[next++];
          x = s.Select(s.Cmp(Pred::OLT, x, lo), lo, x);
        }
        if (has_max) {
          Value hi = v[next++];
          x = s.Select(s.Cmp(Pred::OLT, hi, x), hi, x);
        }
        return x;
      };
    } else {
      mlir::FailureOr<Body> unary = UnaryBody(op, name);
      if (mlir::failed(unary)) return mlir::failure();
      if (inputs.size() != 1) return op->emitOpError("cannot be outlined: expected one operand");
      body = *unary;
    }
    if ((name == "Add" || name == "Sub" || name == "Mul" || name == "Div" || name == "Pow") && inputs.size() != 2) {
      return op->emitOpError("cannot be outlined: expected two operands");
    }
    if (inputs.empty()) return op->emitOpError("cannot be outlined: no operands");
    mlir::FailureOr<Value> generic = BuildElementwise(builder, loc, result_type, inputs,
                                                      [&](OpBuilder& nested, Location nested_loc, ValueRange scalars) {
                                                        return body(Scalar{nested, nested_loc}, scalars);
                                                      });
    if (mlir::failed(generic)) {
      return op->emitOpError("cannot be outlined: an operand does not broadcast to the result type ") << result_type;
    }
    result = *generic;
  }
  mapping.map(op->getResult(0), result);
  return mlir::success();
}

}  // namespace tsr::lowering

// Unary math ops with ONNX semantics (latest opset): trigonometric and hyperbolic
// functions and their inverses (Sin ... Atanh), rounding (Floor, Ceil, Round — half
// to even), Sign, the float classifiers IsInf and IsNaN (bool output), and Not.
//
// The binary ones (Mod, BitShift, And/Or/Xor, GreaterOrEqual/LessOrEqual) broadcast
// and live with the other broadcasting ops in elementwise_ops.cc.
// FLOP counts follow elementwise_helpers.h (one per function or comparison).
#include <cstdint>
#include <string>
#include <utility>

#include "graph/op_registry.h"
#include "graph/ops/elementwise_helpers.h"
#include "graph/ops/op_helpers.h"
#include "graph/ops/register_ops.h"
#include "graph/status_macros.h"

namespace tsr {

namespace {

// A float classifier: input X of a floating type, bool output of the same shape.
OpDefBuilder FloatPredicate(std::string name, std::string summary) {
  OpDefBuilder b(std::move(name));
  b.Summary(std::move(summary))
      .Input("X", "T1")
      .Output("Y", "T2")
      .TypeConstraint("T1", kFloatDTypes)
      .TypeConstraint("T2", {DType::kBool})
      .Infer([](InferenceContext& ctx) {
        ctx.set_output(0, DType::kBool, ctx.input_shape(0));
        return absl::OkStatus();
      })
      .Flops(PerOutputElement(1));
  return b;
}

absl::Status InferIsInf(InferenceContext& ctx) {
  TSR_RETURN_IF_ERROR(CheckFlagAttr(ctx, "detect_negative"));
  TSR_RETURN_IF_ERROR(CheckFlagAttr(ctx, "detect_positive"));
  ctx.set_output(0, DType::kBool, ctx.input_shape(0));
  return absl::OkStatus();
}

struct UnaryFloatFunction {
  const char* name;
  const char* summary;
};

constexpr UnaryFloatFunction kTrigonometric[] = {
    {"Sin", "Sine of X (radians)."},
    {"Cos", "Cosine of X (radians)."},
    {"Tan", "Tangent of X (radians)."},
    {"Asin", "Arcsine of X, in [-pi/2, pi/2]; NaN outside [-1, 1]."},
    {"Acos", "Arccosine of X, in [0, pi]; NaN outside [-1, 1]."},
    {"Atan", "Arctangent of X, in (-pi/2, pi/2)."},
    {"Sinh", "Hyperbolic sine of X."},
    {"Cosh", "Hyperbolic cosine of X."},
    {"Asinh", "Inverse hyperbolic sine of X."},
    {"Acosh", "Inverse hyperbolic cosine of X; NaN below 1."},
    {"Atanh", "Inverse hyperbolic tangent of X; +-inf at +-1, NaN outside [-1, 1]."},
};

}  // namespace

absl::Status RegisterMathOps(OpRegistry& registry) {
  for (const UnaryFloatFunction& f : kTrigonometric) {
    TSR_RETURN_IF_ERROR(registry.Register(UnaryOp(f.name, f.summary, kFloatDTypes, 1).Build()));
  }
  TSR_RETURN_IF_ERROR(registry.Register(UnaryOp("Floor", "Largest integer <= X.", kFloatDTypes, 1).Build()));
  TSR_RETURN_IF_ERROR(registry.Register(UnaryOp("Ceil", "Smallest integer >= X.", kFloatDTypes, 1).Build()));
  TSR_RETURN_IF_ERROR(registry.Register(
      UnaryOp("Round", "X rounded to the nearest integer, halves to even.", kFloatDTypes, 1).Build()));
  TSR_RETURN_IF_ERROR(
      registry.Register(UnaryOp("Sign", "-1, 0 or 1 by the sign of X (NaN stays NaN).", kNumericDTypes, 1).Build()));
  TSR_RETURN_IF_ERROR(registry.Register(FloatPredicate("IsNaN", "True where X is NaN.").Build()));
  TSR_RETURN_IF_ERROR(registry.Register(
      FloatPredicate("IsInf", "True where X is +inf (if detect_positive) or -inf (if detect_negative).")
          .Attr("detect_negative", AttrType::kInt, AttrValue::Int(1))
          .Attr("detect_positive", AttrType::kInt, AttrValue::Int(1))
          .Infer(InferIsInf)
          .Build()));
  TSR_RETURN_IF_ERROR(registry.Register(UnaryOp("Not", "Logical negation of X.", {DType::kBool}, 1).Build()));
  return absl::OkStatus();
}

}  // namespace tsr

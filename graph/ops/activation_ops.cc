// Activation functions with ONNX semantics (latest opset): Relu, LeakyRelu, PRelu,
// Gelu, Sigmoid, HardSigmoid, HardSwish, Tanh, Erf, Softplus, Softsign, Elu, Selu,
// Celu, ThresholdedRelu, Shrink, plus Silu (x * sigmoid(x), not in ONNX), which
// transformer MLPs use often enough to deserve one op instead of a Mul/Sigmoid pair.
//
// All take floating types; Relu and PRelu also take signed integers, Shrink every
// numeric type, as in ONNX.
// FLOP counts follow elementwise_helpers.h (one per arithmetic op or transcendental).
#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "graph/op_registry.h"
#include "graph/ops/elementwise_helpers.h"
#include "graph/ops/op_helpers.h"
#include "graph/ops/register_ops.h"
#include "graph/status_macros.h"

namespace tsr {

namespace {

// 0.5 * x * (1 + erf(x * 1/sqrt(2))): mul, erf, add, mul, mul.
constexpr int64_t kGeluErfFlops = 5;
// 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))): x^3 (2 mul), mul, add,
// mul, tanh, add, mul, mul.
constexpr int64_t kGeluTanhFlops = 9;

absl::Status InferGelu(InferenceContext& ctx) {
  const std::string approximate = ctx.GetString("approximate");
  if (approximate != "none" && approximate != "tanh") {
    return ctx.Error(
        absl::StrCat("attribute 'approximate' is \"", approximate, "\" but \"none\" or \"tanh\" is required"));
  }
  return SameAsFirstInput(ctx);
}

int64_t GeluFlops(const InferenceContext& ctx) {
  return (ctx.GetString("approximate") == "tanh" ? kGeluTanhFlops : kGeluErfFlops) * OutputElements(ctx);
}

// ONNX PRelu's types that Tessera has.
constexpr DType kPReluDTypes[] = {DType::kF32, DType::kF64, DType::kF16, DType::kBF16, DType::kI32, DType::kI64};

// The slope broadcasts to X (unidirectionally): the output has X's shape.
absl::Status InferPRelu(InferenceContext& ctx) {
  TSR_RETURN_IF_ERROR(BroadcastAllInputs(ctx));
  if (ctx.output(0).shape != ctx.input_shape(0)) {
    return ctx.Error(absl::StrCat("slope of shape ", ctx.input_shape(1).ToString(), " does not broadcast to X's shape ",
                                  ctx.input_shape(0).ToString()));
  }
  return absl::OkStatus();
}

absl::Status InferCelu(InferenceContext& ctx) {
  if (ctx.GetFloat("alpha") == 0) return ctx.Error("attribute 'alpha' is 0 (Celu divides by it)");
  return SameAsFirstInput(ctx);
}

absl::Status InferShrink(InferenceContext& ctx) {
  if (ctx.GetFloat("lambd") < 0) return ctx.Error("attribute 'lambd' is negative");
  return SameAsFirstInput(ctx);
}

}  // namespace

absl::Status RegisterActivationOps(OpRegistry& registry) {
  TSR_RETURN_IF_ERROR(registry.Register(UnaryOp("Relu", "max(X, 0).", kSignedDTypes, 1).Build()));
  // Compare and multiply.
  TSR_RETURN_IF_ERROR(registry.Register(UnaryOp("LeakyRelu", "X if X >= 0 else alpha * X.", kFloatDTypes, 2)
                                            .Attr("alpha", AttrType::kFloat, AttrValue::Float(0.01))
                                            .Build()));
  TSR_RETURN_IF_ERROR(
      registry.Register(UnaryOp("Gelu", "X * Phi(X); 'approximate' = \"tanh\" uses the tanh formula.", kFloatDTypes, 0)
                            .Attr("approximate", AttrType::kString, AttrValue::String("none"))
                            .Infer(InferGelu)
                            .Flops(GeluFlops)
                            .Build()));
  // 1 / (1 + exp(-X)): neg, exp, add, div.
  TSR_RETURN_IF_ERROR(registry.Register(UnaryOp("Sigmoid", "1 / (1 + exp(-X)).", kFloatDTypes, 4).Build()));
  TSR_RETURN_IF_ERROR(registry.Register(UnaryOp("Tanh", "Hyperbolic tangent of X.", kFloatDTypes, 1).Build()));
  TSR_RETURN_IF_ERROR(registry.Register(UnaryOp("Erf", "Gauss error function of X.", kFloatDTypes, 1).Build()));
  // log(1 + exp(X)): exp, add, log.
  TSR_RETURN_IF_ERROR(registry.Register(UnaryOp("Softplus", "log(1 + exp(X)).", kFloatDTypes, 3).Build()));
  // Sigmoid's four, then one multiply.
  TSR_RETURN_IF_ERROR(
      registry.Register(UnaryOp("Silu", "X * sigmoid(X) (swish; not in ONNX).", kFloatDTypes, 5).Build()));
  // Compare and multiply.
  TSR_RETURN_IF_ERROR(registry.Register(OpDefBuilder("PRelu")
                                            .Summary("X if X >= 0 else slope * X; slope broadcasts to X.")
                                            .Input("X", "T")
                                            .Input("slope", "T")
                                            .Output("Y", "T")
                                            .TypeConstraint("T", kPReluDTypes)
                                            .Infer(InferPRelu)
                                            .Flops(PerOutputElement(2))
                                            .Build()));
  // Compare, exp, sub, mul.
  TSR_RETURN_IF_ERROR(registry.Register(UnaryOp("Elu", "X if X > 0 else alpha * (exp(X) - 1).", kFloatDTypes, 4)
                                            .Attr("alpha", AttrType::kFloat, AttrValue::Float(1.0))
                                            .Build()));
  // Elu's four, then the gamma multiply. The defaults are ONNX's (f32 values).
  TSR_RETURN_IF_ERROR(
      registry.Register(UnaryOp("Selu", "gamma * (X if X > 0 else alpha * (exp(X) - 1)).", kFloatDTypes, 5)
                            .Attr("alpha", AttrType::kFloat, AttrValue::Float(1.67326319217681884765625))
                            .Attr("gamma", AttrType::kFloat, AttrValue::Float(1.05070102214813232421875))
                            .Build()));
  // max, div, exp, sub, mul, min, add.
  TSR_RETURN_IF_ERROR(
      registry.Register(UnaryOp("Celu", "max(0, X) + min(0, alpha * (exp(X / alpha) - 1)).", kFloatDTypes, 7)
                            .Attr("alpha", AttrType::kFloat, AttrValue::Float(1.0))
                            .Infer(InferCelu)
                            .Build()));
  // mul, add, max, min.
  TSR_RETURN_IF_ERROR(registry.Register(UnaryOp("HardSigmoid", "max(0, min(1, alpha * X + beta)).", kFloatDTypes, 4)
                                            .Attr("alpha", AttrType::kFloat, AttrValue::Float(0.2))
                                            .Attr("beta", AttrType::kFloat, AttrValue::Float(0.5))
                                            .Build()));
  // HardSigmoid's four (alpha = 1/6, beta = 1/2), then one multiply.
  TSR_RETURN_IF_ERROR(
      registry.Register(UnaryOp("HardSwish", "X * max(0, min(1, X / 6 + 1/2)).", kFloatDTypes, 5).Build()));
  // abs, add, div.
  TSR_RETURN_IF_ERROR(registry.Register(UnaryOp("Softsign", "X / (1 + |X|).", kFloatDTypes, 3).Build()));
  TSR_RETURN_IF_ERROR(registry.Register(UnaryOp("ThresholdedRelu", "X if X > alpha else 0.", kFloatDTypes, 1)
                                            .Attr("alpha", AttrType::kFloat, AttrValue::Float(1.0))
                                            .Build()));
  // Two compares, one add or subtract.
  TSR_RETURN_IF_ERROR(
      registry.Register(UnaryOp("Shrink", "X + bias if X < -lambd, X - bias if X > lambd, else 0.", kNumericDTypes, 3)
                            .Attr("bias", AttrType::kFloat, AttrValue::Float(0.0))
                            .Attr("lambd", AttrType::kFloat, AttrValue::Float(0.5))
                            .Infer(InferShrink)
                            .Build()));
  return absl::OkStatus();
}

}  // namespace tsr

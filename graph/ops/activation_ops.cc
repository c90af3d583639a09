// Activation functions with ONNX semantics (latest opset): Relu, LeakyRelu, Gelu,
// Sigmoid, Tanh, Erf, Softplus, plus Silu (x * sigmoid(x), not in ONNX), which
// transformer MLPs use often enough to deserve one op instead of a Mul/Sigmoid pair.
//
// All take floating types; Relu also takes signed integers, as in ONNX.
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
  return absl::OkStatus();
}

}  // namespace tsr

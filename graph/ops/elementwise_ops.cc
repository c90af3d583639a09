// Elementwise ops with ONNX semantics (latest opset): arithmetic (Add, Sub, Mul,
// Div, Pow, Mod), unary math (Neg, Abs, Exp, Log, Sqrt, Rsqrt, Reciprocal), variadic
// Max/Min, comparisons (Equal, Less, Greater, GreaterOrEqual, LessOrEqual), logic
// (And, Or, Xor), BitShift, Where, Cast and Clip. More unary math is in math_ops.cc.
//
// Every multi-input op uses numpy multidirectional broadcasting (BroadcastShapes).
// Rsqrt (1/sqrt(x)) is not in ONNX; it is here because normalization layers and
// their gradients want it as one op. Cast omits ONNX's `saturate` attribute, which
// only affects float8 types that Tessera does not have.
#include <cstdint>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "graph/op_registry.h"
#include "graph/ops/elementwise_helpers.h"
#include "graph/ops/op_helpers.h"
#include "graph/ops/register_ops.h"
#include "graph/status_macros.h"

namespace tsr {

namespace {

// ONNX Pow's base/output types (opset 15).
constexpr DType kPowBaseDTypes[] = {DType::kF32, DType::kF64, DType::kF16, DType::kBF16, DType::kI32, DType::kI64};

// Two same-typed operands broadcast against each other; output has their type.
OpDefBuilder BinaryArithmetic(std::string name, std::string summary) {
  OpDefBuilder b(std::move(name));
  b.Summary(std::move(summary))
      .Input("A", "T")
      .Input("B", "T")
      .Output("C", "T")
      .TypeConstraint("T", kNumericDTypes)
      .Infer(BroadcastAllInputs)
      .Flops(PerOutputElement(1));
  return b;
}

// Two same-typed operands broadcast against each other; the output is bool.
OpDefBuilder Comparison(std::string name, std::string summary, absl::Span<const DType> allowed) {
  OpDefBuilder b(std::move(name));
  b.Summary(std::move(summary))
      .Input("A", "T")
      .Input("B", "T")
      .Output("C", "T1")
      .TypeConstraint("T", allowed)
      .TypeConstraint("T1", {DType::kBool})
      .Infer(BroadcastToBool)
      .Flops(PerOutputElement(1));
  return b;
}

// Max/Min over one or more operands: one comparison per extra operand and element.
OpDefBuilder VariadicExtremum(std::string name, std::string summary) {
  OpDefBuilder b(std::move(name));
  b.Summary(std::move(summary))
      .VariadicInput("data_0", "T", 1)
      .Output("output", "T")
      .TypeConstraint("T", kNumericDTypes)
      .Infer(BroadcastAllInputs)
      .Flops([](const InferenceContext& ctx) { return (ctx.num_inputs() - 1) * OutputElements(ctx); });
  return b;
}

// Output: broadcast of condition, X and Y, with the type of X (and Y).
absl::Status InferWhere(InferenceContext& ctx) {
  TSR_RETURN_IF_ERROR(BroadcastAllInputs(ctx));
  ctx.set_output(0, ctx.input_dtype(1), ctx.output(0).shape);
  return absl::OkStatus();
}

absl::Status InferCast(InferenceContext& ctx) {
  const DType to = ctx.GetType("to");
  if (!IsValidDType(to)) return ctx.Error("attribute 'to' is not a valid dtype");
  ctx.set_output(0, to, ctx.input_shape(0));
  return absl::OkStatus();
}

// Opset 13: min and max are optional scalar inputs. min > max is not an error
// (ONNX defines the result: every element becomes max).
absl::Status InferClip(InferenceContext& ctx) {
  TSR_RETURN_IF_ERROR(CheckScalarInput(ctx, 1, "min"));
  TSR_RETURN_IF_ERROR(CheckScalarInput(ctx, 2, "max"));
  return SameAsFirstInput(ctx);
}

// One compare-and-select per given bound and element.
int64_t ClipFlops(const InferenceContext& ctx) {
  const int64_t bounds = (ctx.has_input(1) ? 1 : 0) + (ctx.has_input(2) ? 1 : 0);
  return bounds * OutputElements(ctx);
}

// ONNX leaves fmod = 0 (the divisor's sign, like Python's %) to integers: for floats
// it must be 1 (C fmod, the dividend's sign).
absl::Status InferMod(InferenceContext& ctx) {
  TSR_RETURN_IF_ERROR(CheckFlagAttr(ctx, "fmod"));
  if (ctx.GetInt("fmod") == 0 && IsFloating(ctx.input_dtype(0))) {
    return ctx.Error(absl::StrCat("input A is ", DTypeName(ctx.input_dtype(0)),
                                  ": floating-point Mod requires attribute 'fmod' = 1"));
  }
  return BroadcastAllInputs(ctx);
}

absl::Status InferBitShift(InferenceContext& ctx) {
  const std::string direction = ctx.GetString("direction");
  if (direction != "LEFT" && direction != "RIGHT") {
    return ctx.Error(
        absl::StrCat("attribute 'direction' is \"", direction, "\" but \"LEFT\" or \"RIGHT\" is required"));
  }
  return BroadcastAllInputs(ctx);
}

}  // namespace

absl::Status RegisterElementwiseOps(OpRegistry& registry) {
  TSR_RETURN_IF_ERROR(registry.Register(BinaryArithmetic("Add", "A + B, broadcast.").Build()));
  TSR_RETURN_IF_ERROR(registry.Register(BinaryArithmetic("Sub", "A - B, broadcast.").Build()));
  TSR_RETURN_IF_ERROR(registry.Register(BinaryArithmetic("Mul", "A * B, broadcast.").Build()));
  TSR_RETURN_IF_ERROR(
      registry.Register(BinaryArithmetic("Div", "A / B, broadcast (integer division truncates).").Build()));
  TSR_RETURN_IF_ERROR(registry.Register(OpDefBuilder("Pow")
                                            .Summary("X ^ Y, broadcast; the exponent's type may differ from X's.")
                                            .Input("X", "T")
                                            .Input("Y", "T1")
                                            .Output("Z", "T")
                                            .TypeConstraint("T", kPowBaseDTypes)
                                            .TypeConstraint("T1", kNumericDTypes)
                                            .Infer(BroadcastAllInputs)
                                            .Flops(PerOutputElement(1))
                                            .Build()));

  TSR_RETURN_IF_ERROR(registry.Register(UnaryOp("Neg", "-X.", kSignedDTypes, 1).Build()));
  TSR_RETURN_IF_ERROR(registry.Register(UnaryOp("Abs", "|X|.", kNumericDTypes, 1).Build()));
  TSR_RETURN_IF_ERROR(registry.Register(UnaryOp("Exp", "e^X.", kFloatDTypes, 1).Build()));
  TSR_RETURN_IF_ERROR(registry.Register(UnaryOp("Log", "Natural logarithm of X.", kFloatDTypes, 1).Build()));
  TSR_RETURN_IF_ERROR(registry.Register(UnaryOp("Sqrt", "Square root of X.", kFloatDTypes, 1).Build()));
  TSR_RETURN_IF_ERROR(registry.Register(UnaryOp("Rsqrt", "1 / sqrt(X) (not in ONNX).", kFloatDTypes, 2).Build()));
  TSR_RETURN_IF_ERROR(registry.Register(UnaryOp("Reciprocal", "1 / X.", kFloatDTypes, 1).Build()));

  TSR_RETURN_IF_ERROR(
      registry.Register(VariadicExtremum("Max", "Elementwise maximum of the inputs, broadcast.").Build()));
  TSR_RETURN_IF_ERROR(
      registry.Register(VariadicExtremum("Min", "Elementwise minimum of the inputs, broadcast.").Build()));

  TSR_RETURN_IF_ERROR(registry.Register(Comparison("Equal", "A == B, broadcast; bool output.", kAllDTypes).Build()));
  TSR_RETURN_IF_ERROR(registry.Register(Comparison("Less", "A < B, broadcast; bool output.", kNumericDTypes).Build()));
  TSR_RETURN_IF_ERROR(
      registry.Register(Comparison("Greater", "A > B, broadcast; bool output.", kNumericDTypes).Build()));
  TSR_RETURN_IF_ERROR(
      registry.Register(Comparison("GreaterOrEqual", "A >= B, broadcast; bool output.", kNumericDTypes).Build()));
  TSR_RETURN_IF_ERROR(
      registry.Register(Comparison("LessOrEqual", "A <= B, broadcast; bool output.", kNumericDTypes).Build()));
  TSR_RETURN_IF_ERROR(registry.Register(Comparison("And", "A and B, broadcast.", {DType::kBool}).Build()));
  TSR_RETURN_IF_ERROR(registry.Register(Comparison("Or", "A or B, broadcast.", {DType::kBool}).Build()));
  TSR_RETURN_IF_ERROR(registry.Register(Comparison("Xor", "A xor B, broadcast.", {DType::kBool}).Build()));
  TSR_RETURN_IF_ERROR(registry.Register(
      BinaryArithmetic("Mod", "Remainder of A / B, broadcast: sign of B (fmod = 0, integers only) or of A (fmod = 1).")
          .Attr("fmod", AttrType::kInt, AttrValue::Int(0))
          .Infer(InferMod)
          .Build()));
  // Tessera's only unsigned integer type is u8 (ONNX also takes u16/u32/u64).
  TSR_RETURN_IF_ERROR(registry.Register(OpDefBuilder("BitShift")
                                            .Summary("X shifted by Y bits, broadcast; 'direction' \"LEFT\" or "
                                                     "\"RIGHT\". Shifts past the width give 0.")
                                            .Input("X", "T")
                                            .Input("Y", "T")
                                            .Output("Z", "T")
                                            .TypeConstraint("T", {DType::kU8})
                                            .RequiredAttr("direction", AttrType::kString)
                                            .Infer(InferBitShift)
                                            .Flops(PerOutputElement(1))
                                            .Build()));

  TSR_RETURN_IF_ERROR(registry.Register(OpDefBuilder("Where")
                                            .Summary("condition ? X : Y per element; all three broadcast.")
                                            .Input("condition", "B")
                                            .Input("X", "T")
                                            .Input("Y", "T")
                                            .Output("output", "T")
                                            .TypeConstraint("B", {DType::kBool})
                                            .TypeConstraint("T", kAllDTypes)
                                            .Infer(InferWhere)
                                            .Build()));
  TSR_RETURN_IF_ERROR(registry.Register(OpDefBuilder("Cast")
                                            .Summary("Converts every element to the dtype 'to'.")
                                            .Input("input", "T1")
                                            .Output("output", "T2")
                                            .TypeConstraint("T1", kAllDTypes)
                                            .TypeConstraint("T2", kAllDTypes)
                                            .RequiredAttr("to", AttrType::kType)
                                            .Infer(InferCast)
                                            .Build()));
  TSR_RETURN_IF_ERROR(registry.Register(OpDefBuilder("Clip")
                                            .Summary("Limits X to [min, max]; either bound may be absent.")
                                            .Input("input", "T")
                                            .OptionalInput("min", "T")
                                            .OptionalInput("max", "T")
                                            .Output("output", "T")
                                            .TypeConstraint("T", kNumericDTypes)
                                            .Infer(InferClip)
                                            .Flops(ClipFlops)
                                            .Build()));
  return absl::OkStatus();
}

}  // namespace tsr

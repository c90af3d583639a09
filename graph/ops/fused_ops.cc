// Fused ops that the compiler's epilogue fusion produces (TensorFlow's _FusedConv2D /
// _FusedMatMul precedent; not ONNX ops): a Conv or a matrix product followed by a bias,
// a residual add and one activation, in one node, so the kernel applies the epilogue
// while the output is hot in cache.
//
//   FusedConv:   Y = act(Conv(X, W, B) + Z)
//   FusedMatMul: Y = act(A x op(B) + bias + Z),  op(B) = B or B^T (transpose_b)
//
// Z (the residual) is added BEFORE the activation (ResNet's relu(bn(conv(x)) + x)) and
// must have exactly the output's shape: the fusion pass only folds an Add whose other
// operand already has it, so no broadcasting is needed here.
//
// FusedConv reuses Conv's shape function as registered (same attributes, same checks,
// same messages), so both ops always agree on the geometry. No gradients are
// registered: these ops appear only in inference graphs the compiler rewrites, built
// from single-use intermediates.
#include <cstdint>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/types/span.h"
#include "graph/op_registry.h"
#include "graph/ops/op_helpers.h"
#include "graph/ops/register_ops.h"
#include "graph/status_macros.h"

namespace tsr {

namespace {

constexpr DType kFusedDTypes[] = {DType::kF32, DType::kF64};

// The activations the fused ops apply (the names of the graph ops they replace).
constexpr const char* kActivations[] = {"None", "Relu", "LeakyRelu", "Clip", "Sigmoid", "Tanh", "Gelu"};

// +-FLT_MAX: Clip's unbounded defaults, finite so they survive every attribute format.
constexpr double kClipLowest = -3.4028234663852886e38;
constexpr double kClipHighest = 3.4028234663852886e38;

// FLOPs per output element of each activation, as activation_ops.cc counts them
// (Clip: two compares; Gelu: the erf form).
int64_t ActivationFlops(const std::string& activation) {
  if (activation == "Relu") return 1;
  if (activation == "LeakyRelu" || activation == "Clip") return 2;
  if (activation == "Sigmoid") return 4;
  if (activation == "Tanh") return 1;
  if (activation == "Gelu") return 5;
  return 0;
}

absl::Status CheckActivation(const InferenceContext& ctx) {
  const std::string activation = ctx.GetString("activation");
  for (const char* known : kActivations) {
    if (activation == known) return absl::OkStatus();
  }
  return ctx.Error(absl::StrCat("attribute 'activation' is \"", activation, "\" but one of \"",
                                absl::StrJoin(kActivations, "\", \""), "\" is required"));
}

// Input `i` (the residual), when present, must have exactly the output's shape and
// dtype. Called after output 0 is set.
absl::Status CheckResidual(const InferenceContext& ctx, int i) {
  if (!ctx.has_input(i)) return absl::OkStatus();
  const Shape& z = ctx.input_shape(i);
  const Shape& y = ctx.output(0).shape;
  if (z != y) {
    return ctx.Error(absl::StrCat("input ", i, " ('", ctx.op_def().inputs[i].name, "', the residual) has shape ",
                                  z.ToString(), " but must have exactly the output's shape ", y.ToString()));
  }
  return absl::OkStatus();
}

// The epilogue's FLOPs: the bias add (when not counted by the product), the residual
// add and the activation, per output element.
int64_t EpilogueFlops(const InferenceContext& ctx, int bias_input, int residual_input) {
  const int64_t per_element = (bias_input >= 0 && ctx.has_input(bias_input) ? 1 : 0) +
                              (ctx.has_input(residual_input) ? 1 : 0) + ActivationFlops(ctx.GetString("activation"));
  return SaturatingProduct({per_element, OutputElements(ctx)});
}

// The attributes both fused ops add for their activation.
OpDefBuilder& AddActivationAttrs(OpDefBuilder& b) {
  return b.Attr("activation", AttrType::kString, AttrValue::String("None"))
      .Attr("alpha", AttrType::kFloat, AttrValue::Float(0.01))
      .Attr("min", AttrType::kFloat, AttrValue::Float(kClipLowest))
      .Attr("max", AttrType::kFloat, AttrValue::Float(kClipHighest));
}

absl::Status InferFusedMatMul(InferenceContext& ctx) {
  TSR_RETURN_IF_ERROR(CheckActivation(ctx));
  TSR_RETURN_IF_ERROR(CheckFlagAttr(ctx, "transpose_b"));
  const Shape& a = ctx.input_shape(0);
  const Shape& b = ctx.input_shape(1);
  if (a.rank() < 2) {
    return ctx.Error(
        absl::StrCat("input 0 ('A') has shape ", a.ToString(), " but [..., M, K] (rank >= 2) is required"));
  }
  if (b.rank() != 2) {
    return ctx.Error(absl::StrCat("input 1 ('B') has shape ", b.ToString(), " but a rank-2 matrix is required"));
  }
  const bool transpose_b = ctx.GetInt("transpose_b") == 1;
  const int64_t k_a = a.dim(a.rank() - 1);
  const int64_t k_b = b.dim(transpose_b ? 1 : 0);
  const int64_t n = b.dim(transpose_b ? 0 : 1);
  // A symbolic K only matches another symbolic K, as in MatMul.
  if (k_a != k_b) {
    return ctx.Error(absl::StrCat("A ", a.ToString(), " and B ", b.ToString(), " (transpose_b=", transpose_b,
                                  ") cannot be multiplied: the contraction dimension is ", DimToString(k_a),
                                  " in A but ", DimToString(k_b), " in B"));
  }
  if (ctx.has_input(2) && ctx.input_shape(2) != Shape{n}) {
    return ctx.Error(absl::StrCat("input 2 ('bias') has shape ", ctx.input_shape(2).ToString(), " but [",
                                  DimToString(n), "] (one bias per output column) is required"));
  }
  Shape out(absl::MakeConstSpan(a.dims()).first(a.rank() - 1));
  out.AddDim(n);
  ctx.set_output(0, ctx.input_dtype(0), std::move(out));
  return CheckResidual(ctx, 3);
}

int64_t FusedMatMulFlops(const InferenceContext& ctx) {
  const Shape& a = ctx.input_shape(0);
  return SaturatingProduct({2, OutputElements(ctx), a.dim(a.rank() - 1)}) + EpilogueFlops(ctx, 2, 3);
}

}  // namespace

absl::Status RegisterFusedOps(OpRegistry& registry) {
  // FusedConv is Conv plus an epilogue: it takes Conv's attributes and shape function
  // as registered, so Conv must be registered first.
  const OpDef* conv = registry.Find("Conv");
  if (conv == nullptr || !conv->infer || !conv->flops) {
    return absl::FailedPreconditionError("FusedConv needs Conv (with its shape and FLOP functions) registered first");
  }
  const ShapeFn infer_conv = conv->infer;
  const FlopsFn conv_flops = conv->flops;
  OpDefBuilder fused_conv("FusedConv");
  fused_conv
      .Summary(
          "Y = activation(Conv(X, W, B) + Z): Conv with its attributes, then the residual Z (exactly Y's shape) "
          "and one activation (None, Relu, LeakyRelu(alpha), Clip(min, max), Sigmoid, Tanh, Gelu (erf form)). "
          "Made by the compiler's epilogue fusion; not an ONNX op.")
      .Input("X", "T")
      .Input("W", "T")
      .OptionalInput("B", "T")
      .OptionalInput("Z", "T")
      .Output("Y", "T")
      .TypeConstraint("T", kFusedDTypes);
  // Conv's attributes, same names and defaults.
  for (const AttrDef& attr : conv->attrs) {
    if (attr.required) {
      fused_conv.RequiredAttr(attr.name, attr.type);
    } else if (attr.default_value.has_value()) {
      fused_conv.Attr(attr.name, attr.type, *attr.default_value);
    } else {
      fused_conv.OptionalAttr(attr.name, attr.type);
    }
  }
  AddActivationAttrs(fused_conv)
      .Infer([infer_conv](InferenceContext& ctx) -> absl::Status {
        TSR_RETURN_IF_ERROR(CheckActivation(ctx));
        // Conv's shape function reads inputs 0-2 and the window attributes, which
        // FusedConv has under the same names and slots; its errors name this node.
        TSR_RETURN_IF_ERROR(infer_conv(ctx));
        return CheckResidual(ctx, 3);
      })
      .Flops([conv_flops](const InferenceContext& ctx) {
        // Conv's count leaves out its bias add.
        return conv_flops(ctx) + EpilogueFlops(ctx, 2, 3);
      });
  TSR_RETURN_IF_ERROR(registry.Register(fused_conv.Build()));

  OpDefBuilder fused_matmul("FusedMatMul");
  fused_matmul
      .Summary(
          "Y = activation(A x op(B) + bias + Z): A [..., M, K] (leading dims are rows), B [K, N] or [N, K] with "
          "transpose_b = 1, bias [N], Z exactly Y's shape [..., M, N]; activations as FusedConv. Made by the "
          "compiler's epilogue fusion; not an ONNX op.")
      .Input("A", "T")
      .Input("B", "T")
      .OptionalInput("bias", "T")
      .OptionalInput("Z", "T")
      .Output("Y", "T")
      .TypeConstraint("T", kFusedDTypes)
      .Attr("transpose_b", AttrType::kInt, AttrValue::Int(0));
  AddActivationAttrs(fused_matmul).Infer(InferFusedMatMul).Flops(FusedMatMulFlops);
  TSR_RETURN_IF_ERROR(registry.Register(fused_matmul.Build()));
  return absl::OkStatus();
}

}  // namespace tsr

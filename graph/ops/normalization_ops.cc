// Normalizations: BatchNormalization (per channel of [N,C,...]), LayerNormalization
// (over the trailing axes from `axis`), InstanceNormalization (per sample and
// channel of [N,C,D1...]), MeanVarianceNormalization (over `axes`), LRN (across
// neighbouring channels), and Softmax / LogSoftmax / Hardmax (along one axis).
//
// Per-channel sizes must be static; the batch dimension may be symbolic wherever it
// is not a normalized size that a parameter has to match.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "graph/op_registry.h"
#include "graph/ops/op_helpers.h"
#include "graph/ops/register_ops.h"
#include "graph/status_macros.h"

namespace tsr {

namespace {

// Per-element FLOP estimates. BatchNorm in inference: subtract the mean, scale by
// the inverse std, multiply by scale, add B; training adds the accumulation of the
// batch mean (1) and variance (2). LayerNorm: mean (1), variance (2), normalize
// (2), affine (2). Softmax: max, subtract, exp, sum, divide (LogSoftmax: a subtract
// of the log-sum instead of the divide).
constexpr int64_t kBatchNormInferenceFlops = 4;
constexpr int64_t kBatchNormTrainingFlops = 7;
constexpr int64_t kLayerNormFlops = 7;
constexpr int64_t kSoftmaxFlops = 5;

absl::Status CheckEpsilon(const InferenceContext& ctx) {
  const double epsilon = ctx.GetFloat("epsilon");
  if (!(epsilon >= 0)) return ctx.Error(absl::StrCat("epsilon is ", epsilon, " but must be >= 0"));
  return absl::OkStatus();
}

absl::Status InferBatchNormalization(InferenceContext& ctx) {
  TSR_RETURN_IF_ERROR(CheckEpsilon(ctx));
  const double momentum = ctx.GetFloat("momentum");
  if (!(momentum >= 0 && momentum <= 1)) {
    return ctx.Error(absl::StrCat("momentum is ", momentum, " but must be in [0, 1]"));
  }
  const int64_t training_mode = ctx.GetInt("training_mode");
  if (training_mode != 0 && training_mode != 1) {
    return ctx.Error(absl::StrCat("training_mode is ", training_mode, " but must be 0 or 1"));
  }
  const Shape& x = ctx.input_shape(0);
  if (x.rank() < 1) return ctx.Error("input 0 ('X') is a scalar but [N,C,...] (or [N]) is required");
  // ONNX: a 1-D X is [N] with a single channel.
  const int64_t channels = x.rank() == 1 ? 1 : x.dim(1);
  if (channels == kBatchDim) {
    return ctx.Error(absl::StrCat("input 0 ('X') has shape ", x.ToString(),
                                  " with a symbolic channel dimension; it must be static"));
  }
  static constexpr const char* kParamNames[] = {"", "scale", "B", "input_mean", "input_var"};
  for (int i = 1; i <= 4; ++i) {
    if (ctx.input_shape(i) != Shape{channels}) {
      return ctx.Error(absl::StrCat("input ", i, " ('", kParamNames[i], "') has shape ", ctx.input_shape(i).ToString(),
                                    " but [", channels, "] (one value per channel of X ", x.ToString(),
                                    ") is required"));
    }
  }
  ctx.set_output(0, ctx.input(0));
  if (training_mode == 1) {
    ctx.set_output(1, ctx.input(3));
    ctx.set_output(2, ctx.input(4));
  }
  return absl::OkStatus();
}

int64_t BatchNormalizationFlops(const InferenceContext& ctx) {
  const int64_t per_element = ctx.GetInt("training_mode") == 1 ? kBatchNormTrainingFlops : kBatchNormInferenceFlops;
  return per_element * OutputElements(ctx);
}

// stash_type is an ONNX TensorProto element type; LayerNormalization's statistics
// may be FLOAT (1) or BFLOAT16 (16).
absl::StatusOr<DType> StashType(const InferenceContext& ctx) {
  switch (ctx.GetInt("stash_type")) {
    case 1:
      return DType::kF32;
    case 16:
      return DType::kBF16;
    default:
      return ctx.Error(absl::StrCat("stash_type is ", ctx.GetInt("stash_type"),
                                    " but must be 1 (float) or 16 (bfloat16), ONNX element type codes"));
  }
}

absl::Status InferLayerNormalization(InferenceContext& ctx) {
  TSR_RETURN_IF_ERROR(CheckEpsilon(ctx));
  TSR_ASSIGN_OR_RETURN(DType stash, StashType(ctx));
  const Shape& x = ctx.input_shape(0);
  absl::StatusOr<int> axis = NormalizeAxis(ctx.GetInt("axis"), x.rank());
  if (!axis.ok()) return ctx.Error(axis.status().message());
  const int normalized_rank = x.rank() - *axis;
  // Scale and B broadcast one way, onto the normalized dims X[axis:].
  for (int i = 1; i <= 2; ++i) {
    if (!ctx.has_input(i)) continue;
    const Shape& p = ctx.input_shape(i);
    bool ok = p.rank() <= normalized_rank;
    for (int j = 0; ok && j < p.rank(); ++j) {
      const int64_t d = p.dim(j);
      ok = d == 1 || d == x.dim(x.rank() - p.rank() + j);
    }
    if (!ok) {
      const Shape normalized(absl::MakeConstSpan(x.dims()).subspan(*axis));
      return ctx.Error(absl::StrCat("input ", i, " ('", i == 1 ? "Scale" : "B", "') has shape ", p.ToString(),
                                    " but must broadcast to the normalized dims ", normalized.ToString(), " of X ",
                                    x.ToString(), " (axis ", *axis, ")"));
    }
  }
  Shape stats = x;
  for (int i = *axis; i < x.rank(); ++i) stats.set_dim(i, 1);
  ctx.set_output(0, ctx.input(0));
  ctx.set_output(1, stash, stats);
  ctx.set_output(2, stash, std::move(stats));
  return absl::OkStatus();
}

absl::Status InferInstanceNormalization(InferenceContext& ctx) {
  TSR_RETURN_IF_ERROR(CheckEpsilon(ctx));
  const Shape& x = ctx.input_shape(0);
  if (x.rank() < 3) {
    return ctx.Error(absl::StrCat("input 0 ('input') has shape ", x.ToString(), " but [N,C,D1,...] is required"));
  }
  const int64_t channels = x.dim(1);
  if (channels == kBatchDim) {
    return ctx.Error(absl::StrCat("input 0 ('input') has shape ", x.ToString(),
                                  " with a symbolic channel dimension; it must be static"));
  }
  for (int i = 1; i <= 2; ++i) {
    if (ctx.input_shape(i) != Shape{channels}) {
      return ctx.Error(absl::StrCat("input ", i, " ('", i == 1 ? "scale" : "B", "') has shape ",
                                    ctx.input_shape(i).ToString(), " but [", channels,
                                    "] (one value per channel) is required"));
    }
  }
  ctx.set_output(0, ctx.input(0));
  return absl::OkStatus();
}

absl::Status InferMeanVarianceNormalization(InferenceContext& ctx) {
  // Only validated: the kernel reads the attribute itself.
  TSR_RETURN_IF_ERROR(NormalizeAxes(ctx, ctx.GetInts("axes"), ctx.input_rank(0)).status());
  ctx.set_output(0, ctx.input(0));
  return absl::OkStatus();
}

absl::Status InferLRN(InferenceContext& ctx) {
  const Shape& x = ctx.input_shape(0);
  if (x.rank() < 3) {
    return ctx.Error(absl::StrCat("input 0 ('X') has shape ", x.ToString(), " but [N,C,D1,...] is required"));
  }
  const int64_t size = ctx.GetInt("size");
  if (size < 1) return ctx.Error(absl::StrCat("size is ", size, " but must be >= 1"));
  const double bias = ctx.GetFloat("bias");
  if (!(bias > 0)) {
    return ctx.Error(absl::StrCat("bias is ", bias, " but must be > 0 (the base of a fractional power)"));
  }
  ctx.set_output(0, ctx.input(0));
  return absl::OkStatus();
}

absl::Status InferSoftmax(InferenceContext& ctx) {
  absl::StatusOr<int> axis = NormalizeAxis(ctx.GetInt("axis"), ctx.input_rank(0));
  if (!axis.ok()) return ctx.Error(axis.status().message());
  ctx.set_output(0, ctx.input(0));
  return absl::OkStatus();
}

OpDef SoftmaxDef(std::string name, std::string summary, int64_t flops = kSoftmaxFlops) {
  return OpDefBuilder(std::move(name))
      .Summary(std::move(summary))
      .Input("input", "T")
      .Output("output", "T")
      .TypeConstraint("T", kFloatDTypes)
      .Attr("axis", AttrType::kInt, AttrValue::Int(-1))
      .Infer(InferSoftmax)
      .Flops(PerOutputElement(flops))
      .Build();
}

}  // namespace

absl::Status RegisterNormalizationOps(OpRegistry& registry) {
  TSR_RETURN_IF_ERROR(registry.Register(
      OpDefBuilder("BatchNormalization")
          .Summary("Y = scale * (X - mean) / sqrt(var + epsilon) + B per channel of [N,C,...]. Inference "
                   "(training_mode=0) uses input_mean/input_var; training uses the batch statistics and also "
                   "outputs running_mean/running_var = input * momentum + batch * (1 - momentum).")
          .Input("X", "T")
          .Input("scale", "T1")
          .Input("B", "T1")
          .Input("input_mean", "T2")
          .Input("input_var", "T2")
          .Output("Y", "T")
          .OptionalOutput("running_mean", "T2")
          .OptionalOutput("running_var", "T2")
          .TypeConstraint("T", kFloatDTypes)
          .TypeConstraint("T1", kFloatDTypes)
          .TypeConstraint("T2", kFloatDTypes)
          .Attr("epsilon", AttrType::kFloat, AttrValue::Float(1e-5))
          .Attr("momentum", AttrType::kFloat, AttrValue::Float(0.9))
          .Attr("training_mode", AttrType::kInt, AttrValue::Int(0))
          .Infer(InferBatchNormalization)
          .Flops(BatchNormalizationFlops)
          .Build()));
  TSR_RETURN_IF_ERROR(registry.Register(
      OpDefBuilder("LayerNormalization")
          .Summary("Normalizes over X's dims [axis, rank): Y = (X - Mean) * InvStdDev * Scale + B; Mean and "
                   "InvStdDev keep the normalized dims as 1 and have the stash_type element type.")
          .Input("X", "T")
          .Input("Scale", "T")
          .OptionalInput("B", "T")
          .Output("Y", "T")
          .Output("Mean", "U")
          .Output("InvStdDev", "U")
          .TypeConstraint("T", kFloatDTypes)
          .TypeConstraint("U", {DType::kF32, DType::kBF16})
          .Attr("axis", AttrType::kInt, AttrValue::Int(-1))
          .Attr("epsilon", AttrType::kFloat, AttrValue::Float(1e-5))
          .Attr("stash_type", AttrType::kInt, AttrValue::Int(1))
          .Infer(InferLayerNormalization)
          .Flops(PerOutputElement(kLayerNormFlops))
          .Build()));
  TSR_RETURN_IF_ERROR(
      registry.Register(SoftmaxDef("Softmax", "exp(x) / sum(exp(x)) along `axis` (computed max-shifted).")));
  TSR_RETURN_IF_ERROR(
      registry.Register(SoftmaxDef("LogSoftmax", "x - log(sum(exp(x))) along `axis` (computed max-shifted).")));
  // Hardmax: one comparison per element.
  TSR_RETURN_IF_ERROR(
      registry.Register(SoftmaxDef("Hardmax", "1 at the first maximum along `axis`, 0 elsewhere.", /*flops=*/1)));
  TSR_RETURN_IF_ERROR(registry.Register(
      OpDefBuilder("InstanceNormalization")
          .Summary("y = scale * (x - mean) / sqrt(var + epsilon) + B, the statistics taken per sample and channel "
                   "of [N,C,D1,...] over D1,...")
          .Input("input", "T")
          .Input("scale", "T")
          .Input("B", "T")
          .Output("output", "T")
          .TypeConstraint("T", kFloatDTypes)
          .Attr("epsilon", AttrType::kFloat, AttrValue::Float(1e-5))
          .Infer(InferInstanceNormalization)
          .Flops(PerOutputElement(kLayerNormFlops))
          .Build()));
  TSR_RETURN_IF_ERROR(
      registry.Register(OpDefBuilder("MeanVarianceNormalization")
                            .Summary("(X - mean) / (std + 1e-9) with mean and (population) std taken over 'axes'.")
                            .Input("X", "T")
                            .Output("Y", "T")
                            .TypeConstraint("T", kFloatDTypes)
                            .Attr("axes", AttrType::kInts, AttrValue::Ints({0, 2, 3}))
                            .Infer(InferMeanVarianceNormalization)
                            .Flops(PerOutputElement(kLayerNormFlops))
                            .Build()));
  TSR_RETURN_IF_ERROR(registry.Register(
      OpDefBuilder("LRN")
          .Summary("Local response normalization across channels of [N,C,D1,...]: y = x / (bias + alpha / size * "
                   "sum of x^2 over channels [c - floor((size-1)/2), c + ceil((size-1)/2)]) ^ beta.")
          .Input("X", "T")
          .Output("Y", "T")
          .TypeConstraint("T", kFloatDTypes)
          .Attr("alpha", AttrType::kFloat, AttrValue::Float(1e-4))
          .Attr("beta", AttrType::kFloat, AttrValue::Float(0.75))
          .Attr("bias", AttrType::kFloat, AttrValue::Float(1.0))
          .RequiredAttr("size", AttrType::kInt)
          .Infer(InferLRN)
          // Per element: `size` squares and adds, then scale, power and divide.
          .Flops([](const InferenceContext& ctx) {
            return SaturatingProduct({2, ctx.GetInt("size"), OutputElements(ctx)}) + 3 * OutputElements(ctx);
          })
          .Build()));
  return absl::OkStatus();
}

}  // namespace tsr

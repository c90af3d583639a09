// Losses (ONNX): SoftmaxCrossEntropyLoss and NegativeLogLikelihoodLoss, the
// classification losses of scores (or log-probabilities) [N, C] or [N, C, D1, ...]
// against integer labels [N] or [N, D1, ...].
//
// The class count C must be static; the batch dimension may be symbolic and must
// then appear in the same positions of scores and labels.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "graph/op_registry.h"
#include "graph/ops/op_helpers.h"
#include "graph/ops/register_ops.h"
#include "graph/status_macros.h"

namespace tsr {

namespace {

// Per score element: the log-softmax (max, subtract, exp, sum, subtract). Per label:
// gather the log-probability, weight it, accumulate.
constexpr int64_t kLogSoftmaxFlops = 5;
constexpr int64_t kPerLabelFlops = 3;

// Both losses: input 0 the scores [N, C, D1...], input 1 the labels [N, D1...], optional
// input 2 the class weights [C]. Sets output 0 (per sample or a scalar).
absl::Status InferClassificationLoss(InferenceContext& ctx, absl::string_view scores_name,
                                     absl::string_view labels_name, absl::string_view weights_name) {
  const std::string reduction = ctx.GetString("reduction");
  if (reduction != "mean" && reduction != "sum" && reduction != "none") {
    return ctx.Error(absl::StrCat("reduction is '", reduction, "' but one of mean, sum, none is required"));
  }
  const Shape& scores = ctx.input_shape(0);
  const Shape& labels = ctx.input_shape(1);
  if (scores.rank() < 2) {
    return ctx.Error(absl::StrCat("input 0 ('", scores_name, "') has shape ", scores.ToString(),
                                  " but [N,C] or [N,C,D1,...] is required"));
  }
  const int64_t classes = scores.dim(1);
  if (classes == kBatchDim) {
    return ctx.Error(absl::StrCat("input 0 ('", scores_name, "') has shape ", scores.ToString(),
                                  " with a symbolic class dimension; it must be static"));
  }
  // Labels are the scores' shape without the class dimension.
  Shape expected{scores.dim(0)};
  for (int i = 2; i < scores.rank(); ++i) expected.AddDim(scores.dim(i));
  if (labels != expected) {
    return ctx.Error(absl::StrCat("input 1 ('", labels_name, "') has shape ", labels.ToString(), " but ", scores_name,
                                  " ", scores.ToString(), " require ", expected.ToString(),
                                  " (that shape without the class dim)"));
  }
  if (ctx.has_input(2) && ctx.input_shape(2) != Shape{classes}) {
    return ctx.Error(absl::StrCat("input 2 ('", weights_name, "') has shape ", ctx.input_shape(2).ToString(), " but [",
                                  classes, "] (one weight per class) is required"));
  }
  const DType dtype = ctx.input_dtype(0);
  ctx.set_output(0, dtype, reduction == "none" ? std::move(expected) : Shape::Scalar());
  return absl::OkStatus();
}

absl::Status InferSoftmaxCrossEntropyLoss(InferenceContext& ctx) {
  TSR_RETURN_IF_ERROR(InferClassificationLoss(ctx, "scores", "labels", "weights"));
  ctx.set_output(1, ctx.input(0));
  return absl::OkStatus();
}

absl::Status InferNegativeLogLikelihoodLoss(InferenceContext& ctx) {
  return InferClassificationLoss(ctx, "input", "target", "weight");
}

int64_t SoftmaxCrossEntropyLossFlops(const InferenceContext& ctx) {
  return kLogSoftmaxFlops * ctx.input_shape(0).num_elements() + kPerLabelFlops * ctx.input_shape(1).num_elements();
}

}  // namespace

absl::Status RegisterLossOps(OpRegistry& registry) {
  TSR_RETURN_IF_ERROR(registry.Register(
      OpDefBuilder("SoftmaxCrossEntropyLoss")
          .Summary("-weights[label] * log_softmax(scores)[label] per sample, reduced by 'reduction' (mean divides "
                   "by the total weight of non-ignored labels); log_prob is log_softmax(scores) along axis 1.")
          .Input("scores", "T")
          .Input("labels", "Tind")
          .OptionalInput("weights", "T")
          .Output("output", "T")
          .Output("log_prob", "T")
          .TypeConstraint("T", kFloatDTypes)
          .TypeConstraint("Tind", kIndexDTypes)
          .OptionalAttr("ignore_index", AttrType::kInt)
          .Attr("reduction", AttrType::kString, AttrValue::String("mean"))
          .Infer(InferSoftmaxCrossEntropyLoss)
          .Flops(SoftmaxCrossEntropyLossFlops)
          .Build()));
  TSR_RETURN_IF_ERROR(registry.Register(
      OpDefBuilder("NegativeLogLikelihoodLoss")
          .Summary("-weight[target] * input[target] per sample (input holds log-probabilities along axis 1), "
                   "reduced by 'reduction' (mean divides by the total weight of non-ignored targets).")
          .Input("input", "T")
          .Input("target", "Tind")
          .OptionalInput("weight", "T")
          .Output("loss", "T")
          .TypeConstraint("T", kFloatDTypes)
          .TypeConstraint("Tind", kIndexDTypes)
          .OptionalAttr("ignore_index", AttrType::kInt)
          .Attr("reduction", AttrType::kString, AttrValue::String("mean"))
          .Infer(InferNegativeLogLikelihoodLoss)
          .Flops([](const InferenceContext& ctx) { return kPerLabelFlops * ctx.input_shape(1).num_elements(); })
          .Build()));
  return absl::OkStatus();
}

}  // namespace tsr

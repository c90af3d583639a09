// Losses: SoftmaxCrossEntropyLoss (ONNX), the classification loss of scores
// [N, C] or [N, C, D1, ...] against integer labels [N] or [N, D1, ...].
//
// The class count C must be static; the batch dimension may be symbolic and must
// then appear in the same positions of scores and labels.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
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

absl::Status InferSoftmaxCrossEntropyLoss(InferenceContext& ctx) {
  const std::string reduction = ctx.GetString("reduction");
  if (reduction != "mean" && reduction != "sum" && reduction != "none") {
    return ctx.Error(absl::StrCat("reduction is '", reduction, "' but one of mean, sum, none is required"));
  }
  const Shape& scores = ctx.input_shape(0);
  const Shape& labels = ctx.input_shape(1);
  if (scores.rank() < 2) {
    return ctx.Error(
        absl::StrCat("input 0 ('scores') has shape ", scores.ToString(), " but [N,C] or [N,C,D1,...] is required"));
  }
  const int64_t classes = scores.dim(1);
  if (classes == kBatchDim) {
    return ctx.Error(absl::StrCat("input 0 ('scores') has shape ", scores.ToString(),
                                  " with a symbolic class dimension; it must be static"));
  }
  // Labels are the scores' shape without the class dimension.
  Shape expected{scores.dim(0)};
  for (int i = 2; i < scores.rank(); ++i) expected.AddDim(scores.dim(i));
  if (labels != expected) {
    return ctx.Error(absl::StrCat("input 1 ('labels') has shape ", labels.ToString(), " but scores ", scores.ToString(),
                                  " require ", expected.ToString(), " (the scores' shape without the class dim)"));
  }
  if (ctx.has_input(2) && ctx.input_shape(2) != Shape{classes}) {
    return ctx.Error(absl::StrCat("input 2 ('weights') has shape ", ctx.input_shape(2).ToString(), " but [", classes,
                                  "] (one weight per class) is required"));
  }
  const DType dtype = ctx.input_dtype(0);
  ctx.set_output(0, dtype, reduction == "none" ? std::move(expected) : Shape::Scalar());
  ctx.set_output(1, ctx.input(0));
  return absl::OkStatus();
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
  return absl::OkStatus();
}

}  // namespace tsr

// Reference SoftmaxCrossEntropyLoss and NegativeLogLikelihoodLoss kernels (ONNX):
// scores [N, C, D1, ...] against labels [N, D1, ...]. Plain loops in double.
//
// SoftmaxCrossEntropyLoss: log_prob = log_softmax(scores) along axis 1 (max-shifted);
// NegativeLogLikelihoodLoss takes log_prob as its input. Per sample,
// loss = -weights[label] * log_prob[label] (weight 1 without `weights`); a label equal
// to ignore_index contributes 0 with weight 0. reduction "none" keeps the per-sample
// losses, "sum" adds them, "mean" divides the sum by the total weight of the
// non-ignored samples (0/0 = NaN when every label is ignored, as in ONNX's reference).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/dtype.h"
#include "graph/status_macros.h"
#include "graph/tensor.h"
#include "kernels/kernel.h"
#include "kernels/reference/convert.h"
#include "kernels/register_kernels.h"

namespace tsr {

namespace {

constexpr DType kLossDTypes[] = {DType::kF32, DType::kF64, DType::kF16, DType::kBF16};

std::vector<double> ToDoubles(const Tensor& t) {
  std::vector<double> out(static_cast<size_t>(t.num_elements()));
  VisitDType(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* p = t.data<T>();
    for (size_t i = 0; i < out.size(); ++i) {
      out[i] = reference::WidenToDouble(p[i]);
    }
  });
  return out;
}

void StoreDoubles(const std::vector<double>& values, Tensor& t) {
  VisitDType(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* p = t.data<T>();
    for (size_t i = 0; i < values.size(); ++i) {
      p[i] = reference::FromDouble<T>(values[i]);
    }
  });
}

// Input 0's [N, C, D1 * D2 * ...] view.
struct LossDims {
  int64_t batch = 0, classes = 0, inner = 1;
  int64_t at(int64_t n, int64_t c, int64_t d) const { return (n * classes + c) * inner + d; }
};

LossDims DimsOf(const Shape& scores) {
  LossDims dims{scores.dim(0), scores.dim(1), 1};
  for (int i = 2; i < scores.rank(); ++i) dims.inner *= scores.dim(i);
  return dims;
}

// Output 0 of both losses from the log-probabilities (input 1: labels, input 2:
// optional class weights; attributes ignore_index and reduction).
absl::Status StoreWeightedLoss(KernelContext& ctx, const LossDims& dims, const std::vector<double>& log_prob) {
  const Tensor& labels = ctx.input(1);
  const bool has_ignore_index = ctx.has_attr("ignore_index");
  const int64_t ignore_index = ctx.GetInt("ignore_index");
  const std::string reduction = ctx.GetString("reduction");
  const std::vector<double> weights = ctx.has_input(2) ? ToDoubles(ctx.input(2)) : std::vector<double>();
  std::vector<double> losses(static_cast<size_t>(dims.batch * dims.inner), 0.0);
  double total_loss = 0.0;
  double total_weight = 0.0;
  for (int64_t n = 0; n < dims.batch; ++n) {
    for (int64_t d = 0; d < dims.inner; ++d) {
      const int64_t sample = n * dims.inner + d;
      const int64_t label = labels.GetAsInt64(sample);
      if (has_ignore_index && label == ignore_index) continue;
      if (label < 0 || label >= dims.classes) {
        return ctx.Error(absl::StrCat("label ", label, " at position ", sample, " is outside [0, ", dims.classes,
                                      ") and is not ignore_index"));
      }
      const double w = weights.empty() ? 1.0 : weights[label];
      losses[sample] = -w * log_prob[dims.at(n, label, d)];
      total_loss += losses[sample];
      total_weight += w;
    }
  }
  if (reduction == "none") {
    StoreDoubles(losses, ctx.output(0));
  } else if (reduction == "sum") {
    StoreDoubles({total_loss}, ctx.output(0));
  } else {
    StoreDoubles({total_loss / total_weight}, ctx.output(0));
  }
  return absl::OkStatus();
}

absl::Status SoftmaxCrossEntropyLossKernel(KernelContext& ctx) {
  const LossDims dims = DimsOf(ctx.input(0).shape());
  const int64_t batch = dims.batch, classes = dims.classes, inner = dims.inner;
  const std::vector<double> sv = ToDoubles(ctx.input(0));
  auto at = [&](int64_t n, int64_t c, int64_t d) { return dims.at(n, c, d); };

  std::vector<double> log_prob(sv.size());
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t d = 0; d < inner; ++d) {
      double max = -std::numeric_limits<double>::infinity();
      for (int64_t c = 0; c < classes; ++c) max = std::max(max, sv[at(n, c, d)]);
      double sum = 0.0;
      for (int64_t c = 0; c < classes; ++c) sum += std::exp(sv[at(n, c, d)] - max);
      const double log_sum = std::log(sum);
      for (int64_t c = 0; c < classes; ++c) log_prob[at(n, c, d)] = sv[at(n, c, d)] - max - log_sum;
    }
  }

  TSR_RETURN_IF_ERROR(StoreWeightedLoss(ctx, dims, log_prob));
  if (ctx.num_outputs() > 1) StoreDoubles(log_prob, ctx.output(1));
  return absl::OkStatus();
}

absl::Status NegativeLogLikelihoodLossKernel(KernelContext& ctx) {
  return StoreWeightedLoss(ctx, DimsOf(ctx.input(0).shape()), ToDoubles(ctx.input(0)));
}

}  // namespace

absl::Status RegisterReferenceLossKernels(KernelRegistry& registry) {
  TSR_RETURN_IF_ERROR(
      registry.Register("SoftmaxCrossEntropyLoss", kReferenceDevice, kLossDTypes, SoftmaxCrossEntropyLossKernel));
  return registry.Register("NegativeLogLikelihoodLoss", kReferenceDevice, kLossDTypes, NegativeLogLikelihoodLossKernel);
}

}  // namespace tsr

// CPU f32 kernel of SoftmaxCrossEntropyLoss (ONNX; the semantics of the reference kernel,
// kernels/reference/loss_kernels.cc): scores [N, C, D1, ...] against integer labels
// [N, D1, ...]. log_prob is the CPU LogSoftmax along axis 1 (softmax_rows.h), written to
// output 1 when the node has it, else to scratch; then per sample
// loss = -weight[label] * log_prob[label] (weight 1 without weights, 0 for ignore_index),
// added up in double in sample order and reduced (none / sum / mean over the total weight)
// as the reference does. The reference computes log_prob in double: results agree to f32
// rounding. A label outside [0, C) that is not ignore_index, and every input this kernel
// does not take (non-f32 weights, non-integer labels), go to the reference kernel, which
// returns its own error Status.
#include <cstdint>
#include <string>
#include <vector>

#include "graph/dtype.h"
#include "graph/status_macros.h"
#include "graph/tensor.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/reference_fallback.h"
#include "kernels/cpu/softmax_rows.h"
#include "kernels/kernel.h"

namespace tsr {

namespace {

// The labels as int64, or false when one is outside [0, classes) and is not ignore_index.
template <typename I>
bool ReadLabels(const I* labels, int64_t n, int64_t classes, bool has_ignore, int64_t ignore, int64_t* out) {
  for (int64_t i = 0; i < n; ++i) {
    const int64_t label = static_cast<int64_t>(labels[i]);
    if ((!has_ignore || label != ignore) && (label < 0 || label >= classes)) return false;
    out[i] = label;
  }
  return true;
}

absl::Status SoftmaxCrossEntropyLossKernel(KernelContext& ctx) {
  const Tensor& scores = ctx.input(0);
  const Tensor& labels = ctx.input(1);
  const bool weighted = ctx.has_input(2);
  const Shape& shape = scores.shape();
  if (shape.rank() < 2 || (labels.dtype() != DType::kI64 && labels.dtype() != DType::kI32) ||
      (weighted && ctx.input(2).dtype() != DType::kF32)) {
    return RunReferenceKernel(ctx);
  }
  const int64_t batch = shape.dim(0), classes = shape.dim(1);
  int64_t inner = 1;
  for (int i = 2; i < shape.rank(); ++i) inner *= shape.dim(i);
  const int64_t samples = batch * inner;
  const std::string reduction = ctx.GetString("reduction");
  Tensor& loss = ctx.output(0);
  if (labels.num_elements() != samples || (weighted && ctx.input(2).num_elements() != classes) ||
      loss.num_elements() != (reduction == "none" ? samples : 1) ||
      (ctx.num_outputs() > 1 && ctx.output(1).num_elements() != scores.num_elements())) {
    return RunReferenceKernel(ctx);
  }
  const bool has_ignore = ctx.has_attr("ignore_index");
  const int64_t ignore = ctx.GetInt("ignore_index");
  std::vector<int64_t> label(static_cast<size_t>(samples));
  const bool labels_ok = labels.dtype() == DType::kI64
                             ? ReadLabels(labels.data<int64_t>(), samples, classes, has_ignore, ignore, label.data())
                             : ReadLabels(labels.data<int32_t>(), samples, classes, has_ignore, ignore, label.data());
  if (!labels_ok) return RunReferenceKernel(ctx);

  std::vector<float> scratch;
  float* log_prob = nullptr;
  if (ctx.num_outputs() > 1) {
    log_prob = ctx.output(1).data<float>();
  } else {
    scratch.resize(static_cast<size_t>(scores.num_elements()));
    log_prob = scratch.data();
  }
  SoftmaxAlongAxis(/*log=*/true, scores.data<float>(), log_prob, batch, classes, inner, ctx.parallel_for());

  const float* weights = weighted ? ctx.input(2).data<float>() : nullptr;
  float* per_sample = reduction == "none" ? loss.data<float>() : nullptr;
  double total_loss = 0.0, total_weight = 0.0;
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t d = 0; d < inner; ++d) {
      const int64_t sample = n * inner + d;
      const int64_t c = label[sample];
      double sample_loss = 0.0;
      if (!has_ignore || c != ignore) {
        const double w = weights != nullptr ? static_cast<double>(weights[c]) : 1.0;
        sample_loss = -w * static_cast<double>(log_prob[(n * classes + c) * inner + d]);
        total_loss += sample_loss;
        total_weight += w;
      }
      if (per_sample != nullptr) per_sample[sample] = static_cast<float>(sample_loss);
    }
  }
  if (per_sample == nullptr) {
    loss.data<float>()[0] = static_cast<float>(reduction == "sum" ? total_loss : total_loss / total_weight);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterCpuLossKernels(KernelRegistry& registry) {
  return registry.Register("SoftmaxCrossEntropyLoss", kCpuDevice, DType::kF32, SoftmaxCrossEntropyLossKernel);
}

}  // namespace tsr

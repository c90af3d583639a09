// CPU f32 LayerNormalization and BatchNormalization (inference and training forms).
//
// Statistics are two passes over data that stays in cache (a LayerNorm row, a
// BatchNorm channel): the mean, then the sum of squared deviations from it, which is
// more accurate than one-pass formulas. Partial sums are f32 vectors widened into
// double per block (see normalization_avx2.cc); the reference computes everything in
// double. Each row / channel / plane is computed by one thread in a fixed order, so
// results do not depend on how work is split.
//
// These kernels handle f32 throughout; a LayerNormalization whose statistics are
// bfloat16 (stash_type 16) or a BatchNormalization with non-f32 parameters is passed
// to the reference kernel.
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "graph/dtype.h"
#include "graph/shape.h"
#include "graph/status_macros.h"
#include "graph/tensor.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/normalization_simd.h"
#include "kernels/kernel.h"

namespace tsr {

namespace {

using normalization_internal::NormalizationIsaKernels;

const NormalizationIsaKernels& ActiveKernels() {
  return ActiveCpuIsa() >= CpuIsa::kAvx2 ? normalization_internal::Avx2NormalizationKernels()
                                         : normalization_internal::ScalarNormalizationKernels();
}

absl::Status RunReference(KernelContext& ctx, absl::string_view op) {
  const KernelFn* reference = KernelRegistry::Global().Find(op, kReferenceDevice, DType::kF32);
  if (reference == nullptr) return ctx.Error(absl::StrCat("no reference ", op, " kernel for f32"));
  return (*reference)(ctx);
}

bool AllF32(KernelContext& ctx, int first_input, int first_output) {
  for (int i = first_input; i < ctx.num_inputs(); ++i) {
    if (ctx.has_input(i) && ctx.input(i).dtype() != DType::kF32) return false;
  }
  for (int i = first_output; i < ctx.num_outputs(); ++i) {
    if (ctx.output(i).dtype() != DType::kF32) return false;
  }
  return true;
}

// LayerNormalization's Scale or B, broadcast one way onto the normalized dims
// x[axis:] (trailing-aligned, size-1 dims repeated), one value per normalized
// position. When p already has `inner` elements its layout is that one: no copy.
const float* ExpandOntoNormalized(const Tensor& p, const Shape& x, int axis, int64_t inner,
                                  std::vector<float>& storage) {
  if (p.num_elements() == inner) return p.data<float>();
  const float* values = p.data<float>();
  const int normalized_rank = x.rank() - axis;
  const int offset = normalized_rank - p.shape().rank();
  storage.resize(static_cast<size_t>(inner));
  for (int64_t j = 0; j < inner; ++j) {
    int64_t rest = j, index = 0, stride = 1;
    for (int d = normalized_rank - 1; d >= offset; --d) {
      const int64_t coord = rest % x.dim(axis + d);
      rest /= x.dim(axis + d);
      const int64_t size = p.shape().dim(d - offset);
      index += (size == 1 ? 0 : coord) * stride;
      stride *= size;
    }
    storage[j] = values[index];
  }
  return storage.data();
}

absl::Status LayerNormalizationKernel(KernelContext& ctx) {
  if (!AllF32(ctx, 0, 0)) return RunReference(ctx, "LayerNormalization");
  const Tensor& x = ctx.input(0);
  const Shape& shape = x.shape();
  absl::StatusOr<int> axis = NormalizeAxis(ctx.GetInt("axis"), shape.rank());
  if (!axis.ok()) return ctx.Error(axis.status().message());
  const double epsilon = ctx.GetFloat("epsilon");
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < shape.rank(); ++i) (i < *axis ? outer : inner) *= shape.dim(i);
  std::vector<float> scale_storage, bias_storage;
  const float* scale = ExpandOntoNormalized(ctx.input(1), shape, *axis, inner, scale_storage);
  const float* bias;
  if (ctx.has_input(2)) {
    bias = ExpandOntoNormalized(ctx.input(2), shape, *axis, inner, bias_storage);
  } else {
    bias_storage.assign(static_cast<size_t>(inner), 0.0f);
    bias = bias_storage.data();
  }
  const float* px = x.data<float>();
  float* py = ctx.output(0).data<float>();
  float* means = ctx.num_outputs() > 1 ? ctx.output(1).data<float>() : nullptr;
  float* inv_stds = ctx.num_outputs() > 2 ? ctx.output(2).data<float>() : nullptr;
  const NormalizationIsaKernels& kernels = ActiveKernels();
  ctx.ParallelFor(outer, 4 * inner, [&](int64_t begin, int64_t end) {
    for (int64_t o = begin; o < end; ++o) {
      const float* row = px + o * inner;
      // An empty row has mean 0 / 0 = NaN, as in the reference.
      const double n = static_cast<double>(inner);
      const double exact_mean = kernels.sum(row, inner) / n;
      const float mean = static_cast<float>(exact_mean);
      const double variance = kernels.squared_deviation_sum(row, inner, mean) / n;
      const float inv_std = static_cast<float>(1.0 / std::sqrt(variance + epsilon));
      kernels.normalize_row(row, inner, mean, static_cast<float>(exact_mean - mean), inv_std, scale, bias,
                            py + o * inner);
      if (means != nullptr) means[o] = mean;
      if (inv_stds != nullptr) inv_stds[o] = inv_std;
    }
  });
  return absl::OkStatus();
}

// Below this many channels, training-mode statistics are computed per plane (one
// [n, c] slice) in parallel rather than per channel, so that few channels still
// spread over the threads.
constexpr int64_t kMinChannelsForPerChannelStatistics = 8;

absl::Status BatchNormalizationKernel(KernelContext& ctx) {
  if (!AllF32(ctx, 0, 0)) return RunReference(ctx, "BatchNormalization");
  const Tensor& x = ctx.input(0);
  const Shape& shape = x.shape();
  if (shape.rank() < 1) return ctx.Error("X must have rank >= 1");
  int64_t batch = shape.dim(0);
  const int64_t channels = shape.rank() == 1 ? 1 : shape.dim(1);
  int64_t spatial = 1;
  for (int i = 2; i < shape.rank(); ++i) spatial *= shape.dim(i);
  if (channels == 1) spatial *= batch, batch = 1;  // one channel: all of X is one contiguous plane
  const double epsilon = ctx.GetFloat("epsilon");
  const bool training = ctx.GetInt("training_mode") == 1;
  const float* px = x.data<float>();
  float* py = ctx.output(0).data<float>();
  const float* scale = ctx.input(1).data<float>();
  const float* bias = ctx.input(2).data<float>();
  const float* input_mean = ctx.input(3).data<float>();
  const float* input_var = ctx.input(4).data<float>();
  const NormalizationIsaKernels& kernels = ActiveKernels();
  const int64_t planes = batch * channels;
  auto plane = [&](int64_t n, int64_t c) { return (n * channels + c) * spatial; };
  // Per channel y = (x - mean) * mul + add, with mul = scale / sqrt(var + eps). The
  // mean is rounded to f32 (x - mean is then exact for x near it) and the rounding
  // error folded into add, so channels with a large mean stay accurate.
  std::vector<float> mean(static_cast<size_t>(channels)), mul(static_cast<size_t>(channels)),
      add(static_cast<size_t>(channels));
  auto set_channel = [&](int64_t c, double m, double v) {
    const double multiplier = scale[c] / std::sqrt(v + epsilon);
    mean[c] = static_cast<float>(m);
    mul[c] = static_cast<float>(multiplier);
    add[c] = static_cast<float>(bias[c] - (m - mean[c]) * multiplier);
  };
  auto normalize_planes = [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      const int64_t c = p % channels;
      kernels.normalize_plane(px + p * spatial, spatial, mean[c], mul[c], add[c], py + p * spatial);
    }
  };
  if (!training) {
    for (int64_t c = 0; c < channels; ++c) set_channel(c, input_mean[c], input_var[c]);
    ctx.ParallelFor(planes, spatial, normalize_planes);
    return absl::OkStatus();
  }

  // Training: batch mean and population variance over N and the spatial dims. Both
  // schedules add the per-plane double sums in batch order, so they agree exactly.
  const double count = static_cast<double>(batch * spatial);  // 0 gives NaN statistics, as in the reference
  std::vector<double> batch_mean(static_cast<size_t>(channels)), batch_var(static_cast<size_t>(channels));
  if (channels >= kMinChannelsForPerChannelStatistics) {
    // The channel's planes stay in cache across the two statistics passes and the
    // normalization.
    ctx.ParallelFor(channels, 4 * batch * spatial, [&](int64_t begin, int64_t end) {
      for (int64_t c = begin; c < end; ++c) {
        double sum = 0.0;
        for (int64_t n = 0; n < batch; ++n) sum += kernels.sum(px + plane(n, c), spatial);
        const float m = static_cast<float>(sum / count);
        double squares = 0.0;
        for (int64_t n = 0; n < batch; ++n) squares += kernels.squared_deviation_sum(px + plane(n, c), spatial, m);
        batch_mean[c] = sum / count;
        batch_var[c] = squares / count;
        set_channel(c, batch_mean[c], batch_var[c]);
        for (int64_t n = 0; n < batch; ++n) {
          kernels.normalize_plane(px + plane(n, c), spatial, mean[c], mul[c], add[c], py + plane(n, c));
        }
      }
    });
  } else {
    std::vector<double> partial(static_cast<size_t>(planes));
    ctx.ParallelFor(planes, spatial, [&](int64_t begin, int64_t end) {
      for (int64_t p = begin; p < end; ++p) partial[p] = kernels.sum(px + p * spatial, spatial);
    });
    std::vector<float> plane_mean(static_cast<size_t>(channels));
    for (int64_t c = 0; c < channels; ++c) {
      double sum = 0.0;
      for (int64_t n = 0; n < batch; ++n) sum += partial[n * channels + c];
      batch_mean[c] = sum / count;
      plane_mean[c] = static_cast<float>(batch_mean[c]);
    }
    ctx.ParallelFor(planes, 2 * spatial, [&](int64_t begin, int64_t end) {
      for (int64_t p = begin; p < end; ++p) {
        partial[p] = kernels.squared_deviation_sum(px + p * spatial, spatial, plane_mean[p % channels]);
      }
    });
    for (int64_t c = 0; c < channels; ++c) {
      double squares = 0.0;
      for (int64_t n = 0; n < batch; ++n) squares += partial[n * channels + c];
      batch_var[c] = squares / count;
      set_channel(c, batch_mean[c], batch_var[c]);
    }
    ctx.ParallelFor(planes, spatial, normalize_planes);
  }
  const double momentum = ctx.GetFloat("momentum");
  if (ctx.num_outputs() > 1) {
    float* running_mean = ctx.output(1).data<float>();
    for (int64_t c = 0; c < channels; ++c) {
      running_mean[c] = static_cast<float>(momentum * input_mean[c] + (1.0 - momentum) * batch_mean[c]);
    }
  }
  if (ctx.num_outputs() > 2) {
    float* running_var = ctx.output(2).data<float>();
    for (int64_t c = 0; c < channels; ++c) {
      running_var[c] = static_cast<float>(momentum * input_var[c] + (1.0 - momentum) * batch_var[c]);
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterCpuNormalizationKernels(KernelRegistry& registry) {
  TSR_RETURN_IF_ERROR(registry.Register("LayerNormalization", kCpuDevice, DType::kF32, LayerNormalizationKernel));
  TSR_RETURN_IF_ERROR(registry.Register("BatchNormalization", kCpuDevice, DType::kF32, BatchNormalizationKernel));
  return absl::OkStatus();
}

}  // namespace tsr

// Reference normalization kernels: BatchNormalization (inference and training
// mode), LayerNormalization, InstanceNormalization, MeanVarianceNormalization, LRN,
// Softmax, LogSoftmax and Hardmax. Plain loops in double; every
// input is widened to double whatever its dtype (BatchNormalization's parameters
// and LayerNormalization's statistics may have dtypes other than X's).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/dtype.h"
#include "graph/shape.h"
#include "graph/status_macros.h"
#include "graph/tensor.h"
#include "kernels/kernel.h"
#include "kernels/reference/convert.h"
#include "kernels/register_kernels.h"

namespace tsr {

namespace {

constexpr DType kNormDTypes[] = {DType::kF32, DType::kF64, DType::kF16, DType::kBF16};

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

// X viewed as [outer, axis, inner] around dimension `axis`.
struct AxisSplit {
  int64_t outer = 1;
  int64_t axis = 1;
  int64_t inner = 1;
};

AxisSplit SplitAt(const Shape& shape, int axis) {
  AxisSplit s;
  for (int i = 0; i < shape.rank(); ++i) {
    if (i < axis) s.outer *= shape.dim(i);
    if (i == axis) s.axis = shape.dim(i);
    if (i > axis) s.inner *= shape.dim(i);
  }
  return s;
}

// Y = scale * (X - mean) / sqrt(var + epsilon) + B per channel (dim 1; a 1-D X is
// [N] with one channel). Training mode (ONNX): mean and var are the batch's (var the
// population variance over N and the spatial dims), and the running statistics are
// input * momentum + batch * (1 - momentum).
absl::Status BatchNormalizationKernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Shape& shape = x.shape();
  const int64_t batch = shape.dim(0);
  const int64_t channels = shape.rank() == 1 ? 1 : shape.dim(1);
  int64_t spatial = 1;
  for (int i = 2; i < shape.rank(); ++i) spatial *= shape.dim(i);
  const double epsilon = ctx.GetFloat("epsilon");
  const bool training = ctx.GetInt("training_mode") == 1;

  const std::vector<double> xv = ToDoubles(x);
  const std::vector<double> scale = ToDoubles(ctx.input(1));
  const std::vector<double> bias = ToDoubles(ctx.input(2));
  std::vector<double> mean = ToDoubles(ctx.input(3));
  std::vector<double> var = ToDoubles(ctx.input(4));
  auto at = [&](int64_t n, int64_t c, int64_t s) { return (n * channels + c) * spatial + s; };
  if (training) {
    const double momentum = ctx.GetFloat("momentum");
    const double count = static_cast<double>(batch * spatial);
    std::vector<double> running_mean(channels), running_var(channels);
    for (int64_t c = 0; c < channels; ++c) {
      double sum = 0.0;
      for (int64_t n = 0; n < batch; ++n) {
        for (int64_t s = 0; s < spatial; ++s) sum += xv[at(n, c, s)];
      }
      const double batch_mean = sum / count;
      double squares = 0.0;
      for (int64_t n = 0; n < batch; ++n) {
        for (int64_t s = 0; s < spatial; ++s)
          squares += (xv[at(n, c, s)] - batch_mean) * (xv[at(n, c, s)] - batch_mean);
      }
      const double batch_var = squares / count;
      running_mean[c] = momentum * mean[c] + (1.0 - momentum) * batch_mean;
      running_var[c] = momentum * var[c] + (1.0 - momentum) * batch_var;
      mean[c] = batch_mean;
      var[c] = batch_var;
    }
    if (ctx.num_outputs() > 1) StoreDoubles(running_mean, ctx.output(1));
    if (ctx.num_outputs() > 2) StoreDoubles(running_var, ctx.output(2));
  }
  std::vector<double> yv(xv.size());
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t c = 0; c < channels; ++c) {
      const double inv_std = 1.0 / std::sqrt(var[c] + epsilon);
      for (int64_t s = 0; s < spatial; ++s) {
        yv[at(n, c, s)] = scale[c] * (xv[at(n, c, s)] - mean[c]) * inv_std + bias[c];
      }
    }
  }
  StoreDoubles(yv, ctx.output(0));
  return absl::OkStatus();
}

// A parameter broadcast one way onto the normalized dims (trailing-aligned, size-1
// dims repeat), expanded to one value per normalized position.
std::vector<double> ExpandOntoNormalized(const Tensor& p, const Shape& x, int axis) {
  const std::vector<double> v = ToDoubles(p);
  const int normalized_rank = x.rank() - axis;
  const int offset = normalized_rank - p.shape().rank();
  int64_t inner = 1;
  for (int i = axis; i < x.rank(); ++i) inner *= x.dim(i);
  std::vector<double> out(static_cast<size_t>(inner));
  for (int64_t j = 0; j < inner; ++j) {
    // Unflatten j over x's normalized dims, then flatten into p's dims.
    int64_t rest = j, p_index = 0, p_stride = 1;
    for (int d = normalized_rank - 1; d >= 0; --d) {
      const int64_t size = x.dim(axis + d);
      const int64_t coord = rest % size;
      rest /= size;
      if (d < offset) continue;
      const int64_t p_size = p.shape().dim(d - offset);
      p_index += (p_size == 1 ? 0 : coord) * p_stride;
      p_stride *= p_size;
    }
    out[j] = v[p_index];
  }
  return out;
}

// Y = (X - Mean) * InvStdDev * Scale + B over the dims [axis, rank); Mean and
// InvStdDev = 1 / sqrt(population variance + epsilon) are outputs too.
absl::Status LayerNormalizationKernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  absl::StatusOr<int> axis = NormalizeAxis(ctx.GetInt("axis"), x.shape().rank());
  if (!axis.ok()) return ctx.Error(axis.status().message());
  const double epsilon = ctx.GetFloat("epsilon");
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < x.shape().rank(); ++i) (i < *axis ? outer : inner) *= x.shape().dim(i);
  const std::vector<double> xv = ToDoubles(x);
  const std::vector<double> scale = ExpandOntoNormalized(ctx.input(1), x.shape(), *axis);
  const std::vector<double> bias =
      ctx.has_input(2) ? ExpandOntoNormalized(ctx.input(2), x.shape(), *axis) : std::vector<double>(inner, 0.0);
  std::vector<double> yv(xv.size()), means(outer), inv_stds(outer);
  for (int64_t o = 0; o < outer; ++o) {
    const double* row = xv.data() + o * inner;
    double sum = 0.0;
    for (int64_t j = 0; j < inner; ++j) sum += row[j];
    const double mean = sum / static_cast<double>(inner);
    double squares = 0.0;
    for (int64_t j = 0; j < inner; ++j) squares += (row[j] - mean) * (row[j] - mean);
    const double inv_std = 1.0 / std::sqrt(squares / static_cast<double>(inner) + epsilon);
    for (int64_t j = 0; j < inner; ++j) yv[o * inner + j] = (row[j] - mean) * inv_std * scale[j] + bias[j];
    means[o] = mean;
    inv_stds[o] = inv_std;
  }
  StoreDoubles(yv, ctx.output(0));
  if (ctx.num_outputs() > 1) StoreDoubles(means, ctx.output(1));
  if (ctx.num_outputs() > 2) StoreDoubles(inv_stds, ctx.output(2));
  return absl::OkStatus();
}

// Softmax (kLog=false) or LogSoftmax (kLog=true) along `axis`, shifted by the maximum so
// that exp never overflows.
template <bool kLog>
absl::Status SoftmaxKernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  absl::StatusOr<int> axis = NormalizeAxis(ctx.GetInt("axis"), x.shape().rank());
  if (!axis.ok()) return ctx.Error(axis.status().message());
  const AxisSplit s = SplitAt(x.shape(), *axis);
  const std::vector<double> xv = ToDoubles(x);
  std::vector<double> yv(xv.size());
  for (int64_t o = 0; o < s.outer; ++o) {
    for (int64_t i = 0; i < s.inner; ++i) {
      auto at = [&](int64_t a) { return (o * s.axis + a) * s.inner + i; };
      double max = -std::numeric_limits<double>::infinity();
      for (int64_t a = 0; a < s.axis; ++a) max = std::max(max, xv[at(a)]);
      double sum = 0.0;
      for (int64_t a = 0; a < s.axis; ++a) sum += std::exp(xv[at(a)] - max);
      const double log_sum = std::log(sum);
      for (int64_t a = 0; a < s.axis; ++a) {
        yv[at(a)] = kLog ? xv[at(a)] - max - log_sum : std::exp(xv[at(a)] - max) / sum;
      }
    }
  }
  StoreDoubles(yv, ctx.output(0));
  return absl::OkStatus();
}

// Hardmax: 1 at the first maximum along `axis` (NaN counts as the maximum, as in
// ArgMax), 0 elsewhere.
absl::Status HardmaxKernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  absl::StatusOr<int> axis = NormalizeAxis(ctx.GetInt("axis"), x.shape().rank());
  if (!axis.ok()) return ctx.Error(axis.status().message());
  const AxisSplit s = SplitAt(x.shape(), *axis);
  const std::vector<double> xv = ToDoubles(x);
  std::vector<double> yv(xv.size(), 0.0);
  for (int64_t o = 0; o < s.outer; ++o) {
    for (int64_t i = 0; i < s.inner; ++i) {
      auto at = [&](int64_t a) { return (o * s.axis + a) * s.inner + i; };
      if (s.axis == 0) continue;
      int64_t best = 0;
      for (int64_t a = 1; a < s.axis && !std::isnan(xv[at(best)]); ++a) {
        if (std::isnan(xv[at(a)]) || xv[at(a)] > xv[at(best)]) best = a;
      }
      yv[at(best)] = 1.0;
    }
  }
  StoreDoubles(yv, ctx.output(0));
  return absl::OkStatus();
}

// Normalizes each group of elements of `xv` (group_of[i] gives element i's group among
// `groups`) to zero mean and unit variance: (x - mean) / f(population variance).
template <typename Denominator>
std::vector<double> NormalizeGroups(const std::vector<double>& xv, const std::vector<int64_t>& group_of, int64_t groups,
                                    Denominator denominator) {
  std::vector<double> sum(groups, 0.0), count(groups, 0.0), sq(groups, 0.0);
  for (size_t i = 0; i < xv.size(); ++i) {
    sum[group_of[i]] += xv[i];
    count[group_of[i]] += 1;
  }
  for (int64_t g = 0; g < groups; ++g) sum[g] /= count[g];  // now the mean
  for (size_t i = 0; i < xv.size(); ++i) {
    const double d = xv[i] - sum[group_of[i]];
    sq[group_of[i]] += d * d;
  }
  std::vector<double> y(xv.size());
  for (size_t i = 0; i < xv.size(); ++i) {
    const int64_t g = group_of[i];
    y[i] = (xv[i] - sum[g]) / denominator(sq[g] / count[g]);
  }
  return y;
}

// y = scale[c] * (x - mean) / sqrt(var + epsilon) + B[c] per (n, c) of [N, C, D...].
absl::Status InstanceNormalizationKernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const AxisSplit s = SplitAt(x.shape(), 1);  // outer N, axis C, inner D1*D2*...
  const std::vector<double> xv = ToDoubles(x);
  const std::vector<double> scale = ToDoubles(ctx.input(1)), bias = ToDoubles(ctx.input(2));
  const double epsilon = ctx.GetFloat("epsilon");
  std::vector<int64_t> group_of(xv.size());
  for (size_t i = 0; i < xv.size(); ++i) group_of[i] = static_cast<int64_t>(i) / s.inner;  // n * C + c
  std::vector<double> y =
      NormalizeGroups(xv, group_of, s.outer * s.axis, [&](double var) { return std::sqrt(var + epsilon); });
  for (size_t i = 0; i < y.size(); ++i) {
    const int64_t c = group_of[i] % s.axis;
    y[i] = y[i] * scale[c] + bias[c];
  }
  StoreDoubles(y, ctx.output(0));
  return absl::OkStatus();
}

// (x - mean) / (std + 1e-9) over `axes`, ONNX's function body computed in double.
absl::Status MeanVarianceNormalizationKernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Shape& shape = x.shape();
  const int rank = shape.rank();
  std::vector<bool> reduced(rank, false);
  for (int64_t a : ctx.GetInts("axes")) {
    if (a < -rank || a >= rank) return ctx.Error(absl::StrCat("axis ", a, " is out of range for rank ", rank));
    reduced[a < 0 ? a + rank : a] = true;
  }
  // Group = the row-major index over the kept dims.
  std::vector<int64_t> group_of(x.num_elements());
  int64_t groups = 1;
  for (int d = 0; d < rank; ++d) {
    if (!reduced[d]) groups *= shape.dim(d);
  }
  std::vector<int64_t> index(rank, 0);
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    int64_t g = 0;
    for (int d = 0; d < rank; ++d) {
      if (!reduced[d]) g = g * shape.dim(d) + index[d];
    }
    group_of[i] = g;
    for (int d = rank - 1; d >= 0 && ++index[d] == shape.dim(d); --d) index[d] = 0;
  }
  constexpr double kEpsilon = 1e-9;
  StoreDoubles(NormalizeGroups(ToDoubles(x), group_of, groups, [](double var) { return std::sqrt(var) + kEpsilon; }),
               ctx.output(0));
  return absl::OkStatus();
}

// y = x / (bias + alpha / size * square_sum) ^ beta, square_sum over the channels
// [c - floor((size-1)/2), c + ceil((size-1)/2)] clipped to [0, C).
absl::Status LRNKernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const AxisSplit s = SplitAt(x.shape(), 1);
  const std::vector<double> xv = ToDoubles(x);
  const int64_t size = ctx.GetInt("size");
  const double alpha = ctx.GetFloat("alpha"), beta = ctx.GetFloat("beta"), bias = ctx.GetFloat("bias");
  const int64_t before = (size - 1) / 2, after = size - 1 - before;
  std::vector<double> yv(xv.size());
  for (int64_t n = 0; n < s.outer; ++n) {
    for (int64_t c = 0; c < s.axis; ++c) {
      for (int64_t i = 0; i < s.inner; ++i) {
        double square_sum = 0.0;
        for (int64_t k = std::max<int64_t>(0, c - before); k <= std::min(s.axis - 1, c + after); ++k) {
          const double v = xv[(n * s.axis + k) * s.inner + i];
          square_sum += v * v;
        }
        const int64_t at = (n * s.axis + c) * s.inner + i;
        yv[at] = xv[at] / std::pow(bias + alpha / static_cast<double>(size) * square_sum, beta);
      }
    }
  }
  StoreDoubles(yv, ctx.output(0));
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterReferenceNormalizationKernels(KernelRegistry& registry) {
  TSR_RETURN_IF_ERROR(registry.Register("BatchNormalization", kReferenceDevice, kNormDTypes, BatchNormalizationKernel));
  TSR_RETURN_IF_ERROR(registry.Register("LayerNormalization", kReferenceDevice, kNormDTypes, LayerNormalizationKernel));
  TSR_RETURN_IF_ERROR(registry.Register("Softmax", kReferenceDevice, kNormDTypes, SoftmaxKernel<false>));
  TSR_RETURN_IF_ERROR(registry.Register("LogSoftmax", kReferenceDevice, kNormDTypes, SoftmaxKernel<true>));
  TSR_RETURN_IF_ERROR(registry.Register("Hardmax", kReferenceDevice, kNormDTypes, HardmaxKernel));
  TSR_RETURN_IF_ERROR(
      registry.Register("InstanceNormalization", kReferenceDevice, kNormDTypes, InstanceNormalizationKernel));
  TSR_RETURN_IF_ERROR(
      registry.Register("MeanVarianceNormalization", kReferenceDevice, kNormDTypes, MeanVarianceNormalizationKernel));
  TSR_RETURN_IF_ERROR(registry.Register("LRN", kReferenceDevice, kNormDTypes, LRNKernel));
  return absl::OkStatus();
}

}  // namespace tsr

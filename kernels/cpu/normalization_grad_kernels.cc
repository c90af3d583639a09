// CPU f32 BatchNormalizationGrad and LayerNormalizationGrad (graph/ops/gradient_ops.cc):
// with xhat = (X - mean) / sqrt(var + epsilon) over each group (a BatchNorm channel
// over N and the spatial dims, a LayerNorm row over dims [axis, rank)),
//   dX = (G - mean(G) - xhat * mean(G * xhat)) / sqrt(var + epsilon),  Normalized = xhat.
//
// Each group takes three passes over data that stays in cache (a LayerNorm row, a
// BatchNorm channel): the mean (the forward kernels' blocked sum), then the sums of
// (x - mean)^2, G and G * (x - mean) in one pass, then dX and Normalized in one pass.
// Sums are f32 blocks widened into double (normalization_grad_avx2.cc) or double
// throughout (the scalar table); the f32 rounding of the mean is carried as a second
// f32 (`mean_low`) and folded into the statistics exactly, so groups with a large
// mean keep their precision.
//
// Determinism: every group's sums are added in one fixed order that depends only on
// the shape, never on how ParallelFor splits the work. BatchNorm sums each plane
// (an [n, c] slice) in pieces of kPiece elements, in (n, piece) order; with many
// channels one thread does a whole channel (its data stays in cache), with few the
// pieces run in parallel and are combined afterwards in the same order. A BatchNorm
// with tiny planes ([N, C] or [N, C, 2, 2]) is reduced column-wise over the
// [N, C * spatial] matrix instead, in double, each column by one thread.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/dtype.h"
#include "graph/shape.h"
#include "graph/status_macros.h"
#include "graph/tensor.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/normalization_grad_simd.h"
#include "kernels/cpu/normalization_simd.h"
#include "kernels/kernel.h"

namespace tsr {

namespace {

using normalization_grad_internal::CenteredSums;
using normalization_grad_internal::NormalizationGradIsaKernels;
using normalization_internal::NormalizationIsaKernels;

struct IsaKernels {
  const NormalizationIsaKernels& forward;  // for the plain sum
  const NormalizationGradIsaKernels& grad;
};

IsaKernels ActiveKernels() {
  if (ActiveCpuIsa() >= CpuIsa::kAvx2) {
    return {normalization_internal::Avx2NormalizationKernels(),
            normalization_grad_internal::Avx2NormalizationGradKernels()};
  }
  return {normalization_internal::ScalarNormalizationKernels(),
          normalization_grad_internal::ScalarNormalizationGradKernels()};
}

void Accumulate(CenteredSums& total, const CenteredSums& part) {
  total.squares += part.squares;
  total.g += part.g;
  total.g_times += part.g_times;
}

// What the final pass of a group needs (see NormalizationGradIsaKernels::backward).
struct GroupCoefficients {
  float mean, mean_low, inv_std, mean_g, mean_gx;
};

// From the group's plain sum of x and its CenteredSums around the f32 mean
// static_cast<float>(sum / count). With low = exact mean - f32 mean and
// sum(x - f32 mean) = count * low:
//   sum (x - exact mean)^2 = squares - count * low^2,
//   sum G * (x - exact mean) = g_times - low * sum G.
GroupCoefficients Coefficients(double sum, const CenteredSums& s, double count, double epsilon) {
  const double exact_mean = sum / count;
  const float mean = static_cast<float>(exact_mean);
  const double low = exact_mean - mean;
  const double variance = std::max(0.0, s.squares / count - low * low);
  const double inv_std = 1.0 / std::sqrt(variance + epsilon);
  return {mean, static_cast<float>(low), static_cast<float>(inv_std), static_cast<float>(s.g / count),
          static_cast<float>(inv_std * (s.g_times - low * s.g) / count)};
}

// Stretches of a BatchNorm plane summed separately: the unit of the few-channel
// schedule, and of the summation order of both schedules.
constexpr int64_t kPiece = 16 * 1024;
// From this many channels, one thread handles a whole channel.
constexpr int64_t kMinChannelsPerThread = 8;
// Planes smaller than this are reduced column-wise (BatchNormGradColumns).
constexpr int64_t kMinPlane = 8;

struct BatchNormView {
  int64_t batch, channels, spatial;
  const float* x;
  const float* g;
  float* dx;
  float* xhat;
  double epsilon;
};

// Planes of at least kMinPlane elements.
void BatchNormGradPlanes(const BatchNormView& v, const IsaKernels& k, const KernelContext& ctx) {
  const int64_t pieces = (v.spatial + kPiece - 1) / kPiece;
  const double count = static_cast<double>(v.batch * v.spatial);
  auto offset = [&](int64_t n, int64_t c, int64_t q) { return (n * v.channels + c) * v.spatial + q * kPiece; };
  auto length = [&](int64_t q) { return std::min(kPiece, v.spatial - q * kPiece); };
  auto finish_plane = [&](int64_t p, const GroupCoefficients& cf) {
    const int64_t o = p * v.spatial;
    k.grad.backward(v.x + o, v.g + o, v.spatial, cf.mean, cf.mean_low, cf.inv_std, cf.mean_g, cf.mean_gx, v.dx + o,
                    v.xhat + o);
  };
  if (v.channels >= kMinChannelsPerThread) {
    ctx.ParallelFor(v.channels, 12 * v.batch * v.spatial, [&](int64_t begin, int64_t end) {
      for (int64_t c = begin; c < end; ++c) {
        double sum = 0.0;
        for (int64_t n = 0; n < v.batch; ++n) {
          for (int64_t q = 0; q < pieces; ++q) sum += k.forward.sum(v.x + offset(n, c, q), length(q));
        }
        const float mean = static_cast<float>(sum / count);
        CenteredSums total{0.0, 0.0, 0.0};
        for (int64_t n = 0; n < v.batch; ++n) {
          for (int64_t q = 0; q < pieces; ++q) {
            Accumulate(total, k.grad.centered_sums(v.x + offset(n, c, q), v.g + offset(n, c, q), length(q), mean));
          }
        }
        const GroupCoefficients cf = Coefficients(sum, total, count, v.epsilon);
        for (int64_t n = 0; n < v.batch; ++n) finish_plane(n * v.channels + c, cf);
      }
    });
    return;
  }
  // Few channels: every (plane, piece) is an item, in (n, c, piece) order.
  const int64_t items = v.batch * v.channels * pieces;
  const int64_t piece_cost = std::min(kPiece, v.spatial);
  auto item_offset = [&](int64_t i) { return (i / pieces) * v.spatial + (i % pieces) * kPiece; };
  std::vector<double> sums(static_cast<size_t>(items));
  ctx.ParallelFor(items, piece_cost, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) sums[i] = k.forward.sum(v.x + item_offset(i), length(i % pieces));
  });
  std::vector<double> channel_sum(static_cast<size_t>(v.channels), 0.0);
  std::vector<float> mean(static_cast<size_t>(v.channels));
  for (int64_t c = 0; c < v.channels; ++c) {
    for (int64_t n = 0; n < v.batch; ++n) {
      for (int64_t q = 0; q < pieces; ++q) channel_sum[c] += sums[(n * v.channels + c) * pieces + q];
    }
    mean[c] = static_cast<float>(channel_sum[c] / count);
  }
  std::vector<CenteredSums> partial(static_cast<size_t>(items));
  ctx.ParallelFor(items, 4 * piece_cost, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const int64_t o = item_offset(i);
      partial[i] = k.grad.centered_sums(v.x + o, v.g + o, length(i % pieces), mean[(i / pieces) % v.channels]);
    }
  });
  std::vector<GroupCoefficients> coefficients;
  for (int64_t c = 0; c < v.channels; ++c) {
    CenteredSums total{0.0, 0.0, 0.0};
    for (int64_t n = 0; n < v.batch; ++n) {
      for (int64_t q = 0; q < pieces; ++q) Accumulate(total, partial[(n * v.channels + c) * pieces + q]);
    }
    coefficients.push_back(Coefficients(channel_sum[c], total, count, v.epsilon));
  }
  ctx.ParallelFor(items, 4 * piece_cost, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const GroupCoefficients& cf = coefficients[(i / pieces) % v.channels];
      const int64_t o = item_offset(i);
      const int64_t n = length(i % pieces);
      k.grad.backward(v.x + o, v.g + o, n, cf.mean, cf.mean_low, cf.inv_std, cf.mean_g, cf.mean_gx, v.dx + o,
                      v.xhat + o);
    }
  });
}

// Planes of fewer than kMinPlane elements: X is an [N, W = C * spatial] matrix whose
// columns are summed in double, each by one thread in batch order, then combined per
// channel in column order.
void BatchNormGradColumns(const BatchNormView& v, const KernelContext& ctx) {
  constexpr int64_t kColumns = 256;
  const int64_t width = v.channels * v.spatial;
  const int64_t blocks = (width + kColumns - 1) / kColumns;
  const double count = static_cast<double>(v.batch * v.spatial);
  auto for_column_blocks = [&](int64_t cost_per_element, auto body) {
    ctx.ParallelFor(blocks, cost_per_element * v.batch * std::min(kColumns, width), [&](int64_t begin, int64_t end) {
      const int64_t lo = begin * kColumns, hi = std::min(width, end * kColumns);
      for (int64_t n = 0; n < v.batch; ++n) body(n * width, lo, hi);
    });
  };
  std::vector<double> column_sum(static_cast<size_t>(width), 0.0);
  for_column_blocks(1, [&](int64_t row, int64_t lo, int64_t hi) {
    for (int64_t j = lo; j < hi; ++j) column_sum[j] += v.x[row + j];
  });
  std::vector<double> channel_sum(static_cast<size_t>(v.channels), 0.0);
  std::vector<float> column_mean(static_cast<size_t>(width));
  for (int64_t c = 0; c < v.channels; ++c) {
    for (int64_t s = 0; s < v.spatial; ++s) channel_sum[c] += column_sum[c * v.spatial + s];
    const float mean = static_cast<float>(channel_sum[c] / count);
    for (int64_t s = 0; s < v.spatial; ++s) column_mean[c * v.spatial + s] = mean;
  }
  std::vector<CenteredSums> column(static_cast<size_t>(width), CenteredSums{0.0, 0.0, 0.0});
  for_column_blocks(4, [&](int64_t row, int64_t lo, int64_t hi) {
    for (int64_t j = lo; j < hi; ++j) {
      const double d = static_cast<double>(v.x[row + j]) - column_mean[j];
      const double g = v.g[row + j];
      column[j].squares += d * d;
      column[j].g += g;
      column[j].g_times += g * d;
    }
  });
  // The coefficients per column, so the final pass is a plain row loop.
  std::vector<GroupCoefficients> coefficients(static_cast<size_t>(width));
  for (int64_t c = 0; c < v.channels; ++c) {
    CenteredSums total{0.0, 0.0, 0.0};
    for (int64_t s = 0; s < v.spatial; ++s) Accumulate(total, column[c * v.spatial + s]);
    const GroupCoefficients cf = Coefficients(channel_sum[c], total, count, v.epsilon);
    for (int64_t s = 0; s < v.spatial; ++s) coefficients[c * v.spatial + s] = cf;
  }
  ctx.ParallelFor(v.batch, 6 * width, [&](int64_t begin, int64_t end) {
    for (int64_t n = begin; n < end; ++n) {
      for (int64_t j = 0; j < width; ++j) {
        const GroupCoefficients& cf = coefficients[j];
        const int64_t i = n * width + j;
        const float xi = v.x[i], gi = v.g[i];
        const float normalized = ((xi - cf.mean) - cf.mean_low) * cf.inv_std;
        v.dx[i] = (gi - cf.mean_g - normalized * cf.mean_gx) * cf.inv_std;
        v.xhat[i] = normalized;
      }
    }
  });
}

// Statistics per channel (dim 1; a 1-D X is [N] with one channel) over N and the
// spatial dims, as the reference (and BatchNormalization's training form) computes them.
absl::Status BatchNormalizationGradKernel(KernelContext& ctx) {
  const Shape& shape = ctx.input(0).shape();
  if (shape.rank() < 1) return ctx.Error("input 0 ('X') must have rank >= 1");
  if (shape.num_elements() == 0) return absl::OkStatus();
  BatchNormView v{shape.dim(0),
                  shape.rank() == 1 ? 1 : shape.dim(1),
                  1,
                  ctx.input(0).data<float>(),
                  ctx.input(1).data<float>(),
                  ctx.output(0).data<float>(),
                  ctx.output(1).data<float>(),
                  ctx.GetFloat("epsilon")};
  for (int i = 2; i < shape.rank(); ++i) v.spatial *= shape.dim(i);
  if (v.channels == 1) v.spatial *= v.batch, v.batch = 1;  // one channel: all of X is one contiguous plane
  if (v.spatial < kMinPlane) {
    BatchNormGradColumns(v, ctx);
  } else {
    BatchNormGradPlanes(v, ActiveKernels(), ctx);
  }
  return absl::OkStatus();
}

// Statistics per row of the [prod(dims[:axis]), prod(dims[axis:])] view; rows in parallel.
absl::Status LayerNormalizationGradKernel(KernelContext& ctx) {
  const Shape& shape = ctx.input(0).shape();
  absl::StatusOr<int> axis = NormalizeAxis(ctx.GetInt("axis"), shape.rank());
  if (!axis.ok()) return ctx.Error(axis.status().message());
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < shape.rank(); ++i) (i < *axis ? outer : inner) *= shape.dim(i);
  if (outer * inner == 0) return absl::OkStatus();
  const double epsilon = ctx.GetFloat("epsilon");
  const double count = static_cast<double>(inner);
  const float* x = ctx.input(0).data<float>();
  const float* g = ctx.input(1).data<float>();
  float* dx = ctx.output(0).data<float>();
  float* xhat = ctx.output(1).data<float>();
  const IsaKernels k = ActiveKernels();
  ctx.ParallelFor(outer, 12 * inner, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t o = r * inner;
      const double sum = k.forward.sum(x + o, inner);
      const CenteredSums s = k.grad.centered_sums(x + o, g + o, inner, static_cast<float>(sum / count));
      const GroupCoefficients cf = Coefficients(sum, s, count, epsilon);
      k.grad.backward(x + o, g + o, inner, cf.mean, cf.mean_low, cf.inv_std, cf.mean_g, cf.mean_gx, dx + o, xhat + o);
    }
  });
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterCpuNormalizationGradKernels(KernelRegistry& registry) {
  TSR_RETURN_IF_ERROR(
      registry.Register("BatchNormalizationGrad", kCpuDevice, DType::kF32, BatchNormalizationGradKernel));
  TSR_RETURN_IF_ERROR(
      registry.Register("LayerNormalizationGrad", kCpuDevice, DType::kF32, LayerNormalizationGradKernel));
  return absl::OkStatus();
}

}  // namespace tsr

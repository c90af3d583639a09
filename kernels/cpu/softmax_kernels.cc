// CPU f32 kernels of Softmax and LogSoftmax along any axis. The tensor is viewed as
// [outer, axis, inner]. With inner == 1 each row is reduced on its own: max, then
// exp(x - max) with the sum accumulated in double, then a scale (Softmax) or a shift
// by max + log(sum) (LogSoftmax); rows of at most 32 (a classifier's classes) take
// each step for a whole chunk of rows at once, one exp call for all of them. Otherwise
// each [axis, inner] block is processed a whole row of `inner` at a time, so the vector
// loops run over inner while the reductions go along the axis. Work is split over rows
// or blocks, never inside one, so results do not depend on the split. out may alias the
// input.
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/dtype.h"
#include "graph/shape.h"
#include "graph/status_macros.h"
#include "graph/tensor.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/elementwise_loops.h"
#include "kernels/cpu/softmax_rows.h"
#include "kernels/cpu/vector_math.h"
#include "kernels/kernel.h"

namespace tsr {

namespace {

// Rough cycles per element: a max, an exp, an add and a scale.
constexpr int64_t kCostPerElement = 16;

// One row of n. `scratch` holds n floats (LogSoftmax keeps x intact in it, for when
// y aliases x).
template <bool kLog>
void SoftmaxRow(const VectorMath& math, const ElementwiseLoops& loops, const float* x, float* y, int64_t n,
                float* scratch) {
  const float max = math.max(x, n);
  if (kLog) {
    // y = (x - max) - log(sum): x - max first, exact near the maximum, where the
    // result is small. exp's values are only needed for the sum.
    const float log_sum = static_cast<float>(std::log(math.exp_shifted_sum(x, max, scratch, n)));
    loops.sub(x, 1, &max, 0, y, n);
    loops.sub(y, 1, &log_sum, 0, y, n);
  } else {
    const double sum = math.exp_shifted_sum(x, max, y, n);
    const float scale = static_cast<float>(1.0 / sum);
    loops.mul(y, 1, &scale, 0, y, n);
  }
}

// One [axis, inner] block: reductions along the axis, vectorized across inner.
// `scratch` holds 3 * inner floats.
template <bool kLog>
void SoftmaxBlock(const VectorMath& math, const ElementwiseLoops& loops, const float* x, float* y, int64_t axis,
                  int64_t inner, float* scratch) {
  float* max = scratch;
  float* sum = scratch + inner;
  float* e = kLog ? scratch + 2 * inner : nullptr;  // exp values, when y must not be written early
  for (int64_t i = 0; i < inner; ++i) max[i] = x[i];
  for (int64_t a = 1; a < axis; ++a) loops.max(max, 1, x + a * inner, 1, max, inner);
  for (int64_t i = 0; i < inner; ++i) sum[i] = 0.0f;
  for (int64_t a = 0; a < axis; ++a) {
    float* row = kLog ? e : y + a * inner;
    math.exp_sub(x + a * inner, max, row, inner);
    loops.add(sum, 1, row, 1, sum, inner);
  }
  if (kLog) {
    // y = (x - max) - log(sum), as for rows.
    math.log(sum, sum, inner);
    for (int64_t a = 0; a < axis; ++a) {
      loops.sub(x + a * inner, 1, max, 1, y + a * inner, inner);
      loops.sub(y + a * inner, 1, sum, 1, y + a * inner, inner);
    }
  } else {
    for (int64_t a = 0; a < axis; ++a) loops.div(y + a * inner, 1, sum, 1, y + a * inner, inner);
  }
}

// Rows up to this long run as ShortRows: on a classifier's 10 classes the per-row vector
// calls of SoftmaxRow cost more than their work (8.6 us for 64 rows against 5.6 for the
// reference's scalar loop in double).
constexpr int64_t kShortRow = 32;

// `rows` rows of n <= kShortRow at once: the shifts x - max row by row, one exp call over
// all of them, then each row's sum (in double, in order), scale or log. `scratch` holds
// rows * n floats. The same operations as SoftmaxRow but for the order of each sum.
template <bool kLog>
void ShortRows(const VectorMath& math, const float* x, float* y, int64_t rows, int64_t n, float* scratch) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * n;
    float max = xr[0];
    for (int64_t i = 1; i < n; ++i) max = xr[i] > max ? xr[i] : max;
    for (int64_t i = 0; i < n; ++i) scratch[r * n + i] = xr[i] - max;
  }
  // x is read: y (which may alias it) takes exp(shift); LogSoftmax then rewrites it from
  // the shifts.
  math.exp(scratch, y, rows * n);
  for (int64_t r = 0; r < rows; ++r) {
    float* yr = y + r * n;
    double sum = 0.0;
    for (int64_t i = 0; i < n; ++i) sum += yr[i];
    if (kLog) {
      const float log_sum = static_cast<float>(std::log(sum));
      for (int64_t i = 0; i < n; ++i) yr[i] = scratch[r * n + i] - log_sum;
    } else {
      const float scale = static_cast<float>(1.0 / sum);
      for (int64_t i = 0; i < n; ++i) yr[i] *= scale;
    }
  }
}

}  // namespace

void SoftmaxAlongAxis(bool log, const float* x, float* y, int64_t outer, int64_t axis, int64_t inner,
                      const ParallelForFn& parallel_for) {
  if (outer == 0 || axis == 0 || inner == 0) return;
  const VectorMath& math = VectorMathFor(ActiveCpuIsa());
  const ElementwiseLoops& loops = ElementwiseLoopsFor(ActiveCpuIsa());
  const auto rows = [&](auto is_log) {
    constexpr bool kLog = decltype(is_log)::value;
    if (inner == 1 && axis <= kShortRow) {
      RunParallelFor(parallel_for, outer, kCostPerElement * axis, [&](int64_t begin, int64_t end) {
        std::vector<float> scratch(static_cast<size_t>((end - begin) * axis));
        ShortRows<kLog>(math, x + begin * axis, y + begin * axis, end - begin, axis, scratch.data());
      });
    } else if (inner == 1) {
      RunParallelFor(parallel_for, outer, kCostPerElement * axis, [&](int64_t begin, int64_t end) {
        std::vector<float> scratch(kLog ? static_cast<size_t>(axis) : 0);
        for (int64_t o = begin; o < end; ++o) {
          SoftmaxRow<kLog>(math, loops, x + o * axis, y + o * axis, axis, scratch.data());
        }
      });
    } else {
      const int64_t block = axis * inner;
      RunParallelFor(parallel_for, outer, kCostPerElement * block, [&](int64_t begin, int64_t end) {
        std::vector<float> scratch(static_cast<size_t>(3 * inner));
        for (int64_t o = begin; o < end; ++o) {
          SoftmaxBlock<kLog>(math, loops, x + o * block, y + o * block, axis, inner, scratch.data());
        }
      });
    }
  };
  if (log) {
    rows(std::true_type{});
  } else {
    rows(std::false_type{});
  }
}

namespace {

template <bool kLog>
absl::Status SoftmaxKernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0);
  if (x.shape() != y.shape()) return ctx.Error("input and output shapes differ");
  const int rank = x.shape().rank();
  absl::StatusOr<int> axis_or = NormalizeAxis(ctx.GetInt("axis"), rank);
  if (!axis_or.ok()) return ctx.Error(axis_or.status().message());
  int64_t outer = 1, axis = 1, inner = 1;
  for (int d = 0; d < rank; ++d) {
    const int64_t size = x.shape().dim(d);
    if (d < *axis_or) {
      outer *= size;
    } else if (d == *axis_or) {
      axis = size;
    } else {
      inner *= size;
    }
  }
  SoftmaxAlongAxis(kLog, x.data<float>(), y.data<float>(), outer, axis, inner, ctx.parallel_for());
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterCpuSoftmaxKernels(KernelRegistry& registry) {
  TSR_RETURN_IF_ERROR(registry.Register("Softmax", kCpuDevice, DType::kF32, SoftmaxKernel<false>));
  TSR_RETURN_IF_ERROR(registry.Register("LogSoftmax", kCpuDevice, DType::kF32, SoftmaxKernel<true>));
  return absl::OkStatus();
}

}  // namespace tsr

// CPU pooling kernels for f32 over one to three spatial dimensions: MaxPool (with its
// optional Indices output, storage_order 0 or 1), AveragePool (count_include_pad,
// ceil_mode, dilations) and GlobalAveragePool, split over the N x C planes.
//
// Each output position loops over only the taps of its window that lie inside X (the
// valid range per dimension is computed once, not tested per tap), in the reference's
// row-major tap order, so MaxPool picks the same element (the first maximum; a NaN
// first tap stays) and its index. Sums are in f32 (the reference's are in double).
// With AVX2, the interior columns of 1-D and 2-D windows run eight outputs at a time
// (pool_rows.h; sixteen with AVX-512 for a 3-wide, stride-2 MaxPool without indices),
// with the same tap order and so the same results as the scalar loop.
// More than three spatial dimensions run the reference kernels.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "graph/dtype.h"
#include "graph/status_macros.h"
#include "graph/tensor.h"
#include "kernels/cpu/conv_window.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/node_window.h"
#include "kernels/cpu/pool_rows.h"
#include "kernels/cpu/reference_fallback.h"
#include "kernels/kernel.h"

namespace tsr {

namespace {

// Valid tap ranges of the window at output (od, oh, ow).
struct TapRange {
  int64_t lo[3], hi[3];
  bool empty() const { return lo[0] >= hi[0] || lo[1] >= hi[1] || lo[2] >= hi[2]; }
};

// The valid taps along H of every output row and along W of every output column,
// computed once per run: the divisions cost more than a 3x3 window's arithmetic.
struct TapTables {
  std::vector<std::pair<int64_t, int64_t>> rows, columns;
  explicit TapTables(const Window3d& w) : rows(w.out[1]), columns(w.out[2]) {
    for (int64_t oh = 0; oh < w.out[1]; ++oh) w.ValidTaps(1, oh, rows[oh].first, rows[oh].second);
    for (int64_t ow = 0; ow < w.out[2]; ++ow) w.ValidTaps(2, ow, columns[ow].first, columns[ow].second);
  }
};

// Input coordinate of tap k of output o along dimension d.
int64_t InputPos(const Window3d& w, int d, int64_t o, int64_t k) {
  return o * w.stride[d] - w.pad_begin[d] + k * w.dilation[d];
}

// Plane-major cost estimate for ParallelFor: one operation per tap.
int64_t PlaneCost(const Window3d& w) { return std::max<int64_t>(1, w.out_size() * w.taps()); }

// The output columns [begin, end) of a row whose taps along W all lie inside X: where
// the vector loops run. Empty when no column qualifies.
void InteriorColumns(const Window3d& w, int64_t& begin, int64_t& end) {
  begin = (w.pad_begin[2] + w.stride[2] - 1) / w.stride[2];
  const int64_t last = w.in[2] - 1 + w.pad_begin[2] - (w.kernel[2] - 1) * w.dilation[2];
  end = last < 0 ? 0 : std::min(w.out[2], last / w.stride[2] + 1);
  begin = std::min(begin, end);
}

// Whether the AVX2 row loops (pool_rows.h) may run: one or two spatial dimensions,
// and plane offsets that fit their int32 lanes.
bool UseAvx2Rows(const Window3d& w) {
  return ActiveCpuIsa() >= CpuIsa::kAvx2 && w.out[0] == 1 && w.kernel[0] == 1 &&
         w.in_size() <= std::numeric_limits<int32_t>::max();
}

// The vector-loop span of output row oh, columns [ow, ow + n), tap rows [kh_lo, kh_hi).
PoolRowSpan RowSpan(const Window3d& w, const float* xp, int64_t oh, int64_t kh_lo, int64_t kh_hi, int64_t ow,
                    int64_t n) {
  return PoolRowSpan{xp,
                     w.in[2],
                     InputPos(w, 1, oh, kh_lo),
                     kh_hi - kh_lo,
                     w.dilation[1],
                     InputPos(w, 2, ow, 0),
                     w.kernel[2],
                     w.dilation[2],
                     w.stride[2],
                     n};
}

absl::Status MaxPoolKernel(KernelContext& ctx) {
  TSR_ASSIGN_OR_RETURN(std::optional<Window3d> window, NodeWindow3d(ctx));
  if (!window.has_value()) return RunReferenceKernel(ctx);
  const Window3d& w = *window;
  const Tensor& x = ctx.input(0);
  const int64_t planes = x.shape().dim(0) * x.shape().dim(1);
  const int64_t in_size = w.in_size(), out_size = w.out_size();
  const bool column_major = ctx.GetInt("storage_order") == 1;
  const float* x_data = x.data<float>();
  float* y_data = ctx.output(0).data<float>();
  // Indices when the node has that output and something reads it.
  int64_t* indices = ctx.num_outputs() > 1 && ctx.output_needed(1) ? ctx.output(1).data<int64_t>() : nullptr;
  if (planes == 0 || out_size == 0) return absl::OkStatus();
  const bool vector_rows = UseAvx2Rows(w);
  int64_t interior_begin, interior_end;
  InteriorColumns(w, interior_begin, interior_end);
  const int64_t interior_n = interior_end - interior_begin >= 8 ? interior_end - interior_begin : 0;
  // ResNet's 3x3 / 2 stem pool without indices: sixteen outputs a step in AVX-512.
  const bool row3_stride2_avx512 = indices == nullptr && ActiveCpuIsa() >= CpuIsa::kAvx512 && w.kernel[2] == 3 &&
                                   w.stride[2] == 2 && w.dilation[2] == 1 && interior_n >= 16;
  std::atomic<bool> only_padding{false};  // a window with no input: the reference's error

  const TapTables taps(w);

  // One output, scalar: the first maximum over the valid taps in row-major order; `r`
  // holds the valid taps along D and H (those along W come from taps.columns).
  auto one_output = [&](int64_t p, const float* xp, int64_t od, int64_t oh, int64_t ow, int64_t o, TapRange r) {
    std::tie(r.lo[2], r.hi[2]) = taps.columns[ow];
    if (r.empty()) {
      only_padding = true;
      return;
    }
    int64_t bd = InputPos(w, 0, od, r.lo[0]), bh = InputPos(w, 1, oh, r.lo[1]), bw = InputPos(w, 2, ow, r.lo[2]);
    float best = xp[(bd * w.in[1] + bh) * w.in[2] + bw];
    if (indices == nullptr) {
      for (int64_t kd = r.lo[0]; kd < r.hi[0]; ++kd) {
        for (int64_t kh = r.lo[1]; kh < r.hi[1]; ++kh) {
          const float* row = xp + (InputPos(w, 0, od, kd) * w.in[1] + InputPos(w, 1, oh, kh)) * w.in[2];
          for (int64_t kw = r.lo[2]; kw < r.hi[2]; ++kw) {
            const float v = row[InputPos(w, 2, ow, kw)];
            best = v > best ? v : best;  // MAXSS: a NaN neither replaces nor is replaced
          }
        }
      }
      y_data[o] = best;
      return;
    }
    for (int64_t kd = r.lo[0]; kd < r.hi[0]; ++kd) {
      const int64_t id = InputPos(w, 0, od, kd);
      for (int64_t kh = r.lo[1]; kh < r.hi[1]; ++kh) {
        const int64_t ih = InputPos(w, 1, oh, kh);
        const float* row = xp + (id * w.in[1] + ih) * w.in[2];
        for (int64_t kw = r.lo[2]; kw < r.hi[2]; ++kw) {
          const int64_t iw = InputPos(w, 2, ow, kw);
          if (row[iw] > best) {
            best = row[iw];
            bd = id;
            bh = ih;
            bw = iw;
          }
        }
      }
    }
    y_data[o] = best;
    indices[o] = p * in_size + (column_major ? (bw * w.in[1] + bh) * w.in[0] + bd : (bd * w.in[1] + bh) * w.in[2] + bw);
  };

  // One output of a 2-D pool whose window lies inside X (every tap valid): one_output
  // without the per-output tap-range arithmetic, for planes too narrow for the vector
  // rows (LeNet's 10x10 -> 5x5) and for their edge columns.
  const bool direct = w.out[0] == 1 && w.kernel[0] == 1;
  auto interior_output = [&](int64_t p, const float* xp, int64_t oh, int64_t ow, int64_t o) {
    const int64_t ih0 = InputPos(w, 1, oh, 0), iw0 = InputPos(w, 2, ow, 0);
    const int64_t in_w = w.in[2];
    float best = xp[ih0 * in_w + iw0];
    int64_t best_at = ih0 * in_w + iw0;  // row-major offset in the plane
    for (int64_t kh = 0; kh < w.kernel[1]; ++kh) {
      const int64_t row = (ih0 + kh * w.dilation[1]) * in_w;
      for (int64_t kw = 0; kw < w.kernel[2]; ++kw) {
        const int64_t at = row + iw0 + kw * w.dilation[2];
        const float v = xp[at];
        // Branch-free (random data mispredicts a branch half the time): a later tap
        // wins only when strictly greater, so ties and NaNs keep the first.
        const bool greater = v > best;
        best = greater ? v : best;
        best_at = greater ? at : best_at;
      }
    }
    y_data[o] = best;
    if (indices != nullptr) {
      const int64_t bh = best_at / in_w, bw = best_at % in_w;
      indices[o] = p * in_size + (column_major ? bw * w.in[1] + bh : best_at);
    }
  };

  // 2x2, stride 2, unpadded, no indices wanted (inference): whole planes, two row loads
  // per eight outputs.
  if (indices == nullptr && vector_rows && w.kernel[1] == 2 && w.kernel[2] == 2 && w.stride[1] == 2 &&
      w.stride[2] == 2 && w.dilation[1] == 1 && w.dilation[2] == 1 && w.pad_begin[1] == 0 && w.pad_begin[2] == 0 &&
      w.pad_end[1] == 0 && w.pad_end[2] == 0) {
    ctx.ParallelFor(planes, PlaneCost(w), [&](int64_t begin, int64_t end) {
      for (int64_t p = begin; p < end; ++p) {
        MaxPool2x2PlaneAvx2(x_data + p * in_size, w.in[2], w.out[1], w.out[2], y_data + p * out_size);
      }
    });
    return absl::OkStatus();
  }
  ctx.ParallelFor(planes, PlaneCost(w), [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      const float* xp = x_data + p * in_size;
      int64_t o = p * out_size;
      for (int64_t od = 0; od < w.out[0]; ++od) {
        TapRange rows;
        w.ValidTaps(0, od, rows.lo[0], rows.hi[0]);
        for (int64_t oh = 0; oh < w.out[1]; ++oh, o += w.out[2]) {
          std::tie(rows.lo[1], rows.hi[1]) = taps.rows[oh];
          const int64_t kh_lo = rows.lo[1], kh_hi = rows.hi[1];
          const bool vector = vector_rows && interior_n > 0 && kh_lo < kh_hi;
          const bool full_rows = kh_hi - kh_lo == w.kernel[1];
          for (int64_t ow = 0; ow < w.out[2]; ++ow) {
            if (vector && ow == interior_begin) {
              int64_t* row_indices = indices != nullptr ? indices + o + ow : nullptr;
              const PoolRowSpan span = RowSpan(w, xp, oh, kh_lo, kh_hi, ow, interior_n);
              if (row3_stride2_avx512) {
                MaxPoolRow3Stride2Avx512(span, y_data + o + ow);
              } else {
                // Column-major spatial offsets (storage_order=1) are iw * H + ih here (D is 1).
                MaxPoolRowAvx2(span, y_data + o + ow, row_indices, p * in_size, column_major ? 1 : w.in[2],
                               column_major ? w.in[1] : 1);
              }
              ow += interior_n - 1;
              continue;
            }
            if (direct && full_rows && ow >= interior_begin && ow < interior_end) {
              interior_output(p, xp, oh, ow, o + ow);
              continue;
            }
            one_output(p, xp, od, oh, ow, o + ow, rows);
          }
        }
      }
    }
  });
  if (only_padding) return ctx.Error("an output position has a window that reads only padding");
  return absl::OkStatus();
}

absl::Status AveragePoolKernel(KernelContext& ctx) {
  TSR_ASSIGN_OR_RETURN(std::optional<Window3d> window, NodeWindow3d(ctx));
  if (!window.has_value()) return RunReferenceKernel(ctx);
  const Window3d& w = *window;
  const Tensor& x = ctx.input(0);
  const int64_t planes = x.shape().dim(0) * x.shape().dim(1);
  const int64_t in_size = w.in_size(), out_size = w.out_size();
  const bool count_include_pad = ctx.GetInt("count_include_pad") == 1;
  const float* x_data = x.data<float>();
  float* y_data = ctx.output(0).data<float>();
  if (planes == 0 || out_size == 0) return absl::OkStatus();
  const bool vector_rows = UseAvx2Rows(w);
  int64_t interior_begin, interior_end;
  InteriorColumns(w, interior_begin, interior_end);
  const int64_t interior_n = interior_end - interior_begin >= 8 ? interior_end - interior_begin : 0;
  // The divisor's factor along dimension d for output o: taps inside X, or with
  // count_include_pad taps inside the padded extent [-pad_begin, in + pad_end) (never
  // those past it, which ceil_mode can add).
  auto count_along = [&](int d, int64_t o, int64_t lo, int64_t hi) -> int64_t {
    if (!count_include_pad) return hi - lo;
    int64_t n = 0;
    for (int64_t k = 0; k < w.kernel[d]; ++k) {
      const int64_t pos = InputPos(w, d, o, k);
      n += pos >= -w.pad_begin[d] && pos < w.in[d] + w.pad_end[d];
    }
    return n;
  };
  std::atomic<bool> only_padding{false};
  const TapTables taps(w);

  // One output, scalar: the taps summed in row-major order, then divided; `r` holds the
  // valid taps along D and H (those along W come from taps.columns).
  auto one_output = [&](const float* xp, int64_t od, int64_t oh, int64_t ow, int64_t o, TapRange r) {
    std::tie(r.lo[2], r.hi[2]) = taps.columns[ow];
    const int64_t count = count_along(0, od, r.lo[0], r.hi[0]) * count_along(1, oh, r.lo[1], r.hi[1]) *
                          count_along(2, ow, r.lo[2], r.hi[2]);
    if (count == 0) {
      only_padding = true;
      return;
    }
    float sum = 0.0f;
    for (int64_t kd = r.lo[0]; kd < r.hi[0]; ++kd) {
      const int64_t id = InputPos(w, 0, od, kd);
      for (int64_t kh = r.lo[1]; kh < r.hi[1]; ++kh) {
        const float* row = xp + (id * w.in[1] + InputPos(w, 1, oh, kh)) * w.in[2];
        for (int64_t kw = r.lo[2]; kw < r.hi[2]; ++kw) sum += row[InputPos(w, 2, ow, kw)];
      }
    }
    y_data[o] = sum / static_cast<float>(count);
  };

  ctx.ParallelFor(planes, PlaneCost(w), [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      const float* xp = x_data + p * in_size;
      int64_t o = p * out_size;
      for (int64_t od = 0; od < w.out[0]; ++od) {
        TapRange rows;
        w.ValidTaps(0, od, rows.lo[0], rows.hi[0]);
        for (int64_t oh = 0; oh < w.out[1]; ++oh, o += w.out[2]) {
          std::tie(rows.lo[1], rows.hi[1]) = taps.rows[oh];
          const int64_t kh_lo = rows.lo[1], kh_hi = rows.hi[1];
          // Interior columns have every W tap inside X (and so inside the padded extent).
          const int64_t count = count_along(1, oh, kh_lo, kh_hi) * w.kernel[2];
          const bool vector = vector_rows && interior_n > 0 && kh_lo < kh_hi;
          for (int64_t ow = 0; ow < w.out[2]; ++ow) {
            if (vector && ow == interior_begin) {
              AveragePoolRowAvx2(RowSpan(w, xp, oh, kh_lo, kh_hi, ow, interior_n), static_cast<float>(count),
                                 y_data + o + ow);
              ow += interior_n - 1;
              continue;
            }
            one_output(xp, od, oh, ow, o + ow, rows);
          }
        }
      }
    }
  });
  if (only_padding) return ctx.Error("an output position has a window that reads only padding");
  return absl::OkStatus();
}

absl::Status GlobalAveragePoolKernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const int64_t planes = x.shape().dim(0) * x.shape().dim(1);
  const int64_t in_size = planes == 0 ? 0 : x.num_elements() / planes;
  const float* x_data = x.data<float>();
  float* y_data = ctx.output(0).data<float>();
  if (in_size == 0) {
    // An empty spatial extent has no mean: NaN, as the reference (and numpy) give.
    for (int64_t p = 0; p < planes; ++p) y_data[p] = std::numeric_limits<float>::quiet_NaN();
    return absl::OkStatus();
  }
  ctx.ParallelFor(planes, in_size, [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      const float* xp = x_data + p * in_size;
      // Eight independent f32 partial sums: no serial dependence chain, and a fixed
      // order whatever the thread split.
      float acc[8] = {};
      int64_t i = 0;
      for (; i + 8 <= in_size; i += 8) {
        for (int j = 0; j < 8; ++j) acc[j] += xp[i + j];
      }
      for (; i < in_size; ++i) acc[i % 8] += xp[i];
      const float sum = ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
      y_data[p] = sum / static_cast<float>(in_size);
    }
  });
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterCpuPoolKernels(KernelRegistry& registry) {
  TSR_RETURN_IF_ERROR(registry.Register("MaxPool", kCpuDevice, DType::kF32, MaxPoolKernel));
  TSR_RETURN_IF_ERROR(registry.Register("AveragePool", kCpuDevice, DType::kF32, AveragePoolKernel));
  TSR_RETURN_IF_ERROR(registry.Register("GlobalAveragePool", kCpuDevice, DType::kF32, GlobalAveragePoolKernel));
  return absl::OkStatus();
}

}  // namespace tsr

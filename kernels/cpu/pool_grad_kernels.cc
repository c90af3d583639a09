// CPU MaxPoolGrad and AveragePoolGrad kernels for f32 (graph/ops/gradient_ops.cc) over
// one to three spatial dimensions, split over the N x C planes (each plane of dX is
// written by exactly one task, so the result does not depend on the split).
//
// Each output position walks only the taps of its window that lie inside X (the
// valid range per dimension computed once, not tested per tap), in row-major tap
// order like the reference: MaxPoolGrad sends dY to the first maximum (a NaN first tap
// stays; a later NaN never wins), the element the forward MaxPool picks. Overlapping
// windows add into dX in output order, in f32 (the reference adds in double).
// AveragePoolGrad's divisor is a product of per-dimension counts, as AveragePool's is:
// the taps inside X, or inside the padded input with count_include_pad (taps past the
// end padding, which ceil_mode can add, never count). A window with nothing to read is
// the reference's error. More than three spatial dimensions run the reference kernels.
#include <algorithm>
#include <cstdint>
#include <optional>
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

// Valid tap ranges [lo, hi) per dimension of every output position, one table per
// dimension (the ranges along one dimension do not depend on the others).
struct TapTable {
  std::vector<int64_t> lo[3], hi[3];

  explicit TapTable(const Window3d& w) {
    for (int d = 0; d < 3; ++d) {
      lo[d].resize(static_cast<size_t>(w.out[d]));
      hi[d].resize(static_cast<size_t>(w.out[d]));
      for (int64_t o = 0; o < w.out[d]; ++o) w.ValidTaps(d, o, lo[d][o], hi[d][o]);
    }
  }

  // The row-major index of the first output position whose window lies wholly in the
  // padding, or -1 when every window reads some of X.
  int64_t FirstEmptyWindow(const Window3d& w) const {
    int64_t first = -1;
    const int64_t scale[3] = {w.out[1] * w.out[2], w.out[2], 1};
    for (int d = 0; d < 3; ++d) {
      for (int64_t o = 0; o < w.out[d]; ++o) {
        if (lo[d][o] < hi[d][o]) continue;
        if (first < 0 || o * scale[d] < first) first = o * scale[d];
        break;
      }
    }
    return first;
  }
};

absl::Status EmptyWindowError(const KernelContext& ctx, int64_t position) {
  return ctx.Error(absl::StrCat("output position ", position, " has a window that reads only padding"));
}

// Input offset (within a plane) of tap (kd, kh, kw) of output (od, oh, ow).
int64_t InputOffset(const Window3d& w, int64_t od, int64_t oh, int64_t ow, int64_t kd, int64_t kh, int64_t kw) {
  const int64_t id = od * w.stride[0] - w.pad_begin[0] + kd * w.dilation[0];
  const int64_t ih = oh * w.stride[1] - w.pad_begin[1] + kh * w.dilation[1];
  const int64_t iw = ow * w.stride[2] - w.pad_begin[2] + kw * w.dilation[2];
  return (id * w.in[1] + ih) * w.in[2] + iw;
}

void MaxPoolGradPlane(const Window3d& w, const TapTable& t, const float* x, const float* dy, float* dx) {
  std::fill_n(dx, w.in_size(), 0.0f);
  for (int64_t od = 0; od < w.out[0]; ++od) {
    for (int64_t oh = 0; oh < w.out[1]; ++oh) {
      for (int64_t ow = 0; ow < w.out[2]; ++ow, ++dy) {
        // Offsets of the first valid tap; every window has one (checked by the caller).
        int64_t best_offset = InputOffset(w, od, oh, ow, t.lo[0][od], t.lo[1][oh], t.lo[2][ow]);
        float best = x[best_offset];
        for (int64_t kd = t.lo[0][od]; kd < t.hi[0][od]; ++kd) {
          for (int64_t kh = t.lo[1][oh]; kh < t.hi[1][oh]; ++kh) {
            const int64_t row = InputOffset(w, od, oh, ow, kd, kh, 0);
            for (int64_t kw = t.lo[2][ow]; kw < t.hi[2][ow]; ++kw) {
              const int64_t offset = row + kw * w.dilation[2];
              if (x[offset] > best) {
                best = x[offset];
                best_offset = offset;
              }
            }
          }
        }
        dx[best_offset] += *dy;
      }
    }
  }
}

absl::Status MaxPoolGradKernel(KernelContext& ctx) {
  absl::StatusOr<std::optional<Window3d>> window = NodeWindow3d(ctx);
  if (!window.ok()) return window.status();
  if (!window->has_value()) return RunReferenceKernel(ctx);
  const Window3d& w = **window;
  const Tensor& x = ctx.input(0);
  const int64_t planes = x.shape().dim(0) * x.shape().dim(1);
  if (planes == 0) return absl::OkStatus();
  const TapTable table(w);
  if (const int64_t empty = table.FirstEmptyWindow(w); empty >= 0) return EmptyWindowError(ctx, empty);
  const float* xp = x.data<float>();
  const float* dyp = ctx.input(1).data<float>();
  float* dxp = ctx.output(0).data<float>();
  const int64_t in_size = w.in_size(), out_size = w.out_size();
  // LeNet's and most CNNs' pools: 2x2, stride 2, unpadded, 2-D, eight windows a step.
  const bool two_by_two = w.in[0] == 1 && w.kernel[0] == 1 && w.kernel[1] == 2 && w.kernel[2] == 2 &&
                          w.stride[1] == 2 && w.stride[2] == 2 && w.dilation[1] == 1 && w.dilation[2] == 1 &&
                          w.pad_begin[1] == 0 && w.pad_begin[2] == 0 && 2 * w.out[1] <= w.in[1] &&
                          2 * w.out[2] <= w.in[2] && ActiveCpuIsa() >= CpuIsa::kAvx2;
  ctx.ParallelFor(planes, std::max<int64_t>(1, out_size * w.taps() + in_size), [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      if (two_by_two) {
        MaxPoolGrad2x2PlaneAvx2(xp + p * in_size, dyp + p * out_size, w.in[1], w.in[2], w.out[1], w.out[2],
                                dxp + p * in_size);
      } else {
        MaxPoolGradPlane(w, table, xp + p * in_size, dyp + p * out_size, dxp + p * in_size);
      }
    }
  });
  return absl::OkStatus();
}

// The number of taps k of output o along dimension d that AveragePool counts.
int64_t CountedTaps(const Window3d& w, int d, int64_t o, bool count_include_pad) {
  int64_t count = 0;
  for (int64_t k = 0; k < w.kernel[d]; ++k) {
    const int64_t pos = o * w.stride[d] - w.pad_begin[d] + k * w.dilation[d];
    count += count_include_pad ? (pos >= -w.pad_begin[d] && pos < w.in[d] + w.pad_end[d]) : (pos >= 0 && pos < w.in[d]);
  }
  return count;
}

void AveragePoolGradPlane(const Window3d& w, const TapTable& t, const std::vector<float>& divisor, const float* dy,
                          float* dx) {
  std::fill_n(dx, w.in_size(), 0.0f);
  int64_t oi = 0;
  for (int64_t od = 0; od < w.out[0]; ++od) {
    for (int64_t oh = 0; oh < w.out[1]; ++oh) {
      for (int64_t ow = 0; ow < w.out[2]; ++ow, ++oi) {
        const float share = dy[oi] / divisor[oi];
        for (int64_t kd = t.lo[0][od]; kd < t.hi[0][od]; ++kd) {
          for (int64_t kh = t.lo[1][oh]; kh < t.hi[1][oh]; ++kh) {
            float* row = dx + InputOffset(w, od, oh, ow, kd, kh, 0);
            for (int64_t kw = t.lo[2][ow]; kw < t.hi[2][ow]; ++kw) row[kw * w.dilation[2]] += share;
          }
        }
      }
    }
  }
}

absl::Status AveragePoolGradKernel(KernelContext& ctx) {
  absl::StatusOr<std::optional<Window3d>> window = NodeWindow3d(ctx);
  if (!window.ok()) return window.status();
  if (!window->has_value()) return RunReferenceKernel(ctx);
  const Window3d& w = **window;
  const bool count_include_pad = ctx.GetInt("count_include_pad") == 1;
  // The divisor of every output position; like the reference, a window that counts no
  // tap is an error even for an empty batch.
  std::vector<int64_t> counts[3];
  for (int d = 0; d < 3; ++d) {
    for (int64_t o = 0; o < w.out[d]; ++o) counts[d].push_back(CountedTaps(w, d, o, count_include_pad));
  }
  std::vector<float> divisor(static_cast<size_t>(w.out_size()));
  int64_t oi = 0;
  for (int64_t od = 0; od < w.out[0]; ++od) {
    for (int64_t oh = 0; oh < w.out[1]; ++oh) {
      for (int64_t ow = 0; ow < w.out[2]; ++ow, ++oi) {
        const int64_t count = counts[0][od] * counts[1][oh] * counts[2][ow];
        if (count == 0) return EmptyWindowError(ctx, oi);
        divisor[oi] = static_cast<float>(count);
      }
    }
  }
  const Tensor& x = ctx.input(0);
  const int64_t planes = x.shape().dim(0) * x.shape().dim(1);
  if (planes == 0) return absl::OkStatus();
  const TapTable table(w);
  const float* dyp = ctx.input(1).data<float>();
  float* dxp = ctx.output(0).data<float>();
  const int64_t in_size = w.in_size(), out_size = w.out_size();
  ctx.ParallelFor(planes, std::max<int64_t>(1, out_size * w.taps() + in_size), [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p)
      AveragePoolGradPlane(w, table, divisor, dyp + p * out_size, dxp + p * in_size);
  });
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterCpuPoolGradKernels(KernelRegistry& registry) {
  TSR_RETURN_IF_ERROR(registry.Register("MaxPoolGrad", kCpuDevice, DType::kF32, MaxPoolGradKernel));
  return registry.Register("AveragePoolGrad", kCpuDevice, DType::kF32, AveragePoolGradKernel);
}

}  // namespace tsr

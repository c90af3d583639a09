// Reference kernels of Resize and its backward op ResizeGrad (semantics of
// graph/ops/resize_ops.cc; geometry in graph/ops/resize_geometry.h).
//
// Both enumerate, for each element of the resized tensor, the product of one tap per
// axis: Resize sums weight x input element, ResizeGrad adds weight x dY to the input
// element's gradient. Arithmetic is in double, rounded once to the output dtype, as
// the ONNX reference computes in float64.
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/dtype.h"
#include "graph/ops/resize_geometry.h"
#include "graph/shape.h"
#include "graph/status_macros.h"
#include "graph/tensor.h"
#include "kernels/kernel.h"
#include "kernels/reference/convert.h"
#include "kernels/reference/dtype_list.h"
#include "kernels/register_kernels.h"

namespace tsr {

namespace {

// The taps of every axis with the zero-weight ones dropped: coordinate o of axis a
// reads taps [begin[o], begin[o + 1]).
struct AxisPlan {
  std::vector<int64_t> begin;
  std::vector<int64_t> index;
  std::vector<double> weight;
  std::vector<bool> extrapolate;
};

struct ResizePlan {
  ResizeAttrs attrs;
  Shape input;
  Shape output;
  std::vector<AxisPlan> axes;
  std::vector<int64_t> input_strides;
};

// Input `i` as doubles; nullopt when absent or empty (the opset-11 placeholders).
std::optional<std::vector<double>> OptionalValues(const KernelContext& ctx, int i) {
  if (!ctx.has_input(i) || ctx.input(i).num_elements() == 0) return std::nullopt;
  std::vector<double> v;
  for (int64_t e = 0; e < ctx.input(i).num_elements(); ++e) v.push_back(ctx.input(i).GetAsDouble(e));
  return v;
}

// The plan of the Resize whose X is input `x` (roi, scales, sizes follow it).
absl::StatusOr<ResizePlan> MakePlan(const KernelContext& ctx, int x) {
  ResizePlan p;
  absl::StatusOr<ResizeAttrs> attrs = ReadResizeAttrs(ctx);
  if (!attrs.ok()) return ctx.Error(attrs.status().message());
  p.attrs = *std::move(attrs);
  p.input = ctx.input(x).shape();
  const int rank = p.input.rank();
  if (rank == 0) return ctx.Error("input 'X' is a scalar but rank >= 1 is required");
  const std::vector<double> scales = OptionalValues(ctx, x + 2).value_or(std::vector<double>{});
  std::vector<int64_t> sizes;
  if (std::optional<std::vector<double>> s = OptionalValues(ctx, x + 3)) {
    for (double v : *s) sizes.push_back(static_cast<int64_t>(v));
  }
  absl::StatusOr<ResizeSizes> out = ResizeOutputSizes(p.input, scales, sizes);
  if (!out.ok()) return ctx.Error(out.status().message());
  p.output = Shape(out->dims);
  std::vector<double> roi;
  if (p.attrs.coordinate_mode == "tf_crop_and_resize") {
    roi = OptionalValues(ctx, x + 1).value_or(std::vector<double>{});
    if (static_cast<int>(roi.size()) != 2 * rank) {
      return ctx.Error(absl::StrCat("input 'roi' has ", roi.size(), " values but tf_crop_and_resize needs ", 2 * rank));
    }
  }
  p.input_strides.assign(rank, 1);
  for (int a = rank - 2; a >= 0; --a) p.input_strides[a] = p.input_strides[a + 1] * p.input.dim(a + 1);
  for (int a = 0; a < rank; ++a) {
    const int64_t out_dim = p.output.dim(a);
    const ResizeAxisTaps taps = ComputeResizeAxisTaps(p.attrs, p.input.dim(a), out_dim, out->scales[a],
                                                      roi.empty() ? 0.0 : roi[a], roi.empty() ? 1.0 : roi[rank + a]);
    AxisPlan plan;
    plan.extrapolate = taps.extrapolate;
    for (int64_t o = 0; o < out_dim; ++o) {
      plan.begin.push_back(static_cast<int64_t>(plan.index.size()));
      for (int k = 0; k < taps.taps; ++k) {
        const double w = taps.weight[o * taps.taps + k];
        if (w == 0.0) continue;
        plan.index.push_back(taps.index[o * taps.taps + k]);
        plan.weight.push_back(w);
      }
    }
    plan.begin.push_back(static_cast<int64_t>(plan.index.size()));
    p.axes.push_back(std::move(plan));
  }
  return p;
}

// Calls visit(input offset, weight) for every tap combination of output element `o`
// (given as its multi-index); returns false when the element is extrapolated.
template <typename Visit>
bool ForEachTap(const ResizePlan& p, const std::vector<int64_t>& o, Visit&& visit) {
  const int rank = p.input.rank();
  for (int a = 0; a < rank; ++a) {
    if (p.axes[a].extrapolate[o[a]]) return false;
  }
  // An odometer over the taps of each axis.
  std::vector<int64_t> tap(rank);
  for (int a = 0; a < rank; ++a) {
    tap[a] = p.axes[a].begin[o[a]];
    if (tap[a] == p.axes[a].begin[o[a] + 1]) return true;  // no taps (all weights 0)
  }
  while (true) {
    int64_t offset = 0;
    double weight = 1.0;
    for (int a = 0; a < rank; ++a) {
      offset += p.axes[a].index[tap[a]] * p.input_strides[a];
      weight *= p.axes[a].weight[tap[a]];
    }
    visit(offset, weight);
    int a = rank - 1;
    for (; a >= 0; --a) {
      if (++tap[a] < p.axes[a].begin[o[a] + 1]) break;
      tap[a] = p.axes[a].begin[o[a]];
    }
    if (a < 0) return true;
  }
}

// Unravels flat position `flat` of `shape` into `index`.
void Unravel(int64_t flat, const Shape& shape, std::vector<int64_t>& index) {
  for (int a = shape.rank() - 1; a >= 0; --a) {
    index[a] = flat % shape.dim(a);
    flat /= shape.dim(a);
  }
}

template <typename T>
absl::Status ResizeKernel(KernelContext& ctx) {
  TSR_ASSIGN_OR_RETURN(const ResizePlan p, MakePlan(ctx, 0));
  Tensor& out = ctx.output(0);
  if (out.shape() != p.output || out.dtype() != ctx.input(0).dtype()) {
    return ctx.Error(absl::StrCat("output was allocated as ", out.type().ToString(), " but the inputs give ",
                                  DTypeName(ctx.input(0).dtype()), p.output.ToString()));
  }
  const T* x = ctx.input(0).data<T>();
  T* y = out.data<T>();
  std::vector<int64_t> o(p.output.rank());
  for (int64_t i = 0; i < out.num_elements(); ++i) {
    Unravel(i, p.output, o);
    double sum = 0;
    const bool inside =
        ForEachTap(p, o, [&](int64_t offset, double w) { sum += w * reference::WidenToDouble(x[offset]); });
    y[i] = reference::FromDouble<T>(inside ? sum : p.attrs.extrapolation_value);
  }
  return absl::OkStatus();
}

// dX[offset] += weight * dY[o] over every tap of every output element.
template <typename T>
absl::Status ResizeGradKernel(KernelContext& ctx) {
  TSR_ASSIGN_OR_RETURN(const ResizePlan p, MakePlan(ctx, 1));
  const Tensor& dy = ctx.input(0);
  Tensor& dx = ctx.output(0);
  if (dy.shape() != p.output || dx.shape() != p.input || dx.dtype() != dy.dtype()) {
    return ctx.Error(absl::StrCat("dY is ", dy.type().ToString(), " and dX was allocated as ", dx.type().ToString(),
                                  " but Resize maps ", p.input.ToString(), " to ", p.output.ToString()));
  }
  std::vector<double> acc(static_cast<size_t>(dx.num_elements()), 0.0);
  const T* g = dy.data<T>();
  std::vector<int64_t> o(p.output.rank());
  for (int64_t i = 0; i < dy.num_elements(); ++i) {
    Unravel(i, p.output, o);
    const double gi = reference::WidenToDouble(g[i]);
    ForEachTap(p, o, [&](int64_t offset, double w) { acc[offset] += w * gi; });
  }
  T* dst = dx.data<T>();
  for (int64_t i = 0; i < dx.num_elements(); ++i) dst[i] = reference::FromDouble<T>(acc[i]);
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterReferenceResizeKernels(KernelRegistry& registry) {
  TSR_RETURN_IF_ERROR(reference::RegisterForTypes(registry, "Resize", reference::NumericTypes{},
                                                  [](auto tag) { return KernelFn(ResizeKernel<decltype(tag)>); }));
  return reference::RegisterForTypes(registry, "ResizeGrad", reference::FloatTypes{},
                                     [](auto tag) { return KernelFn(ResizeGradKernel<decltype(tag)>); });
}

}  // namespace tsr

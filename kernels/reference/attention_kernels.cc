// Reference MultiHeadAttention kernel (graph/ops/attention_ops.cc), f32 and f64: the
// op's formula as plain loops in double, one query row of one head at a time:
//   scores_j = scale * Q_i . K_j, replaced by mask_value (rounded to T) where the mask
//   is true; p = softmax_j(scores) (max-shifted); Y_i = sum_j p_j V_j.
// Heads are read and written where attention_geometry.h says, packed Q included. Only
// the output is rounded to T.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/dtype.h"
#include "graph/ops/attention_geometry.h"
#include "graph/status_macros.h"
#include "graph/tensor.h"
#include "kernels/attention_kernel_geometry.h"
#include "kernels/kernel.h"
#include "kernels/reference/convert.h"
#include "kernels/register_kernels.h"

namespace tsr {

namespace {

// The geometry of ctx's inputs, after checking what inference would have: the
// dtypes of K, V, the mask and the output, and the output's shape.
absl::StatusOr<AttentionGeometry> CheckedGeometry(KernelContext& ctx) {
  absl::StatusOr<AttentionGeometry> g = AttentionGeometryOf(ctx);
  if (!g.ok()) return ctx.Error(g.status().message());
  const DType dtype = ctx.input(0).dtype();
  for (int i : {1, 2}) {
    if (ctx.has_input(i) && ctx.input(i).dtype() != dtype) {
      return ctx.Error(absl::StrCat("input ", i == 1 ? "'K'" : "'V'", " has dtype ", DTypeName(ctx.input(i).dtype()),
                                    " but 'Q' has ", DTypeName(dtype)));
    }
  }
  if (ctx.has_input(3) && ctx.input(3).dtype() != DType::kBool) {
    return ctx.Error(absl::StrCat("input 'mask' has dtype ", DTypeName(ctx.input(3).dtype()), " but bool is required"));
  }
  const Tensor& y = ctx.output(0);
  if (y.dtype() != dtype || y.shape() != g->output_shape()) {
    return ctx.Error(absl::StrCat("the output is ", y.type().ToString(), " but ",
                                  TensorType(dtype, g->output_shape()).ToString(), " is required"));
  }
  return g;
}

template <typename T>
absl::Status MultiHeadAttentionKernel(KernelContext& ctx) {
  TSR_ASSIGN_OR_RETURN(const AttentionGeometry g, CheckedGeometry(ctx));
  const T* q = ctx.input(0).data<T>();
  const T* k = g.packed ? q : ctx.input(1).data<T>();
  const T* v = g.packed ? q : ctx.input(2).data<T>();
  const bool* mask = ctx.has_input(3) ? ctx.input(3).data<bool>() : nullptr;
  const AttentionMaskStrides ms = mask != nullptr ? MaskStridesFor(ctx.input(3).shape()) : AttentionMaskStrides{};
  // As Where(mask, value, scores) in T would see it.
  const double mask_value = reference::WidenToDouble(reference::FromDouble<T>(ctx.GetFloat("mask_value")));
  T* y = ctx.output(0).data<T>();
  std::vector<double> scores(static_cast<size_t>(g.kv_len));
  for (int64_t b = 0; b < g.batch; ++b) {
    for (int64_t h = 0; h < g.heads; ++h) {
      for (int64_t i = 0; i < g.q_len; ++i) {
        const T* qi = q + b * g.q_batch_stride + i * g.q_row_stride + g.q_offset + h * g.head_dim;
        for (int64_t j = 0; j < g.kv_len; ++j) {
          const T* kj = k + b * g.k_batch_stride + j * g.k_row_stride + g.k_offset + h * g.head_dim;
          double dot = 0.0;
          for (int64_t d = 0; d < g.head_dim; ++d) dot += static_cast<double>(qi[d]) * static_cast<double>(kj[d]);
          scores[j] = g.scale * dot;
          if (mask != nullptr && mask[b * ms.batch + h * ms.head + i * ms.row + j * ms.column]) scores[j] = mask_value;
        }
        double max = -std::numeric_limits<double>::infinity();
        for (double s : scores) max = std::max(max, s);
        double sum = 0.0;
        for (double& s : scores) {
          s = std::exp(s - max);
          sum += s;
        }
        for (double& s : scores) s /= sum;  // the softmax: p_j
        const T* vh = v + b * g.v_batch_stride + g.v_offset + h * g.v_head_dim;
        T* yi = y + (b * g.q_len + i) * g.v_width() + h * g.v_head_dim;
        for (int64_t e = 0; e < g.v_head_dim; ++e) {
          double acc = 0.0;
          for (int64_t j = 0; j < g.kv_len; ++j) acc += scores[j] * static_cast<double>(vh[j * g.v_row_stride + e]);
          yi[e] = reference::FromDouble<T>(acc);
        }
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterReferenceAttentionKernels(KernelRegistry& registry) {
  TSR_RETURN_IF_ERROR(
      registry.Register("MultiHeadAttention", kReferenceDevice, DType::kF32, MultiHeadAttentionKernel<float>));
  return registry.Register("MultiHeadAttention", kReferenceDevice, DType::kF64, MultiHeadAttentionKernel<double>);
}

}  // namespace tsr

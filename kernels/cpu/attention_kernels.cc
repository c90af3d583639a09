// CPU MultiHeadAttention kernel (graph/ops/attention_ops.cc) for f32, on Sgemm. Work
// items are (batch, head, block of query rows); each runs on one thread:
//   S = scale * Q_blk K_h^T        (Sgemm with K transposed, both read in place)
//   S = mask_value where the mask is true, then softmax along each row of S
//   Y_blk = S V_h                  (Sgemm straight into the output's head columns)
// The block's scores stay in a per-thread buffer of at most kMaxScoreFloats, so they
// are still in cache when the second product reads them. Q, K and V are read where
// attention_geometry.h puts them (packed or not): no head is copied out. Cases the
// kernel does not handle (invalid inputs, an empty key sequence) run the reference
// kernel, which names the problem or gives its result.
#include <algorithm>
#include <cstdint>
#include <optional>

#include "graph/dtype.h"
#include "graph/ops/attention_geometry.h"
#include "graph/status_macros.h"
#include "graph/tensor.h"
#include "kernels/cpu/aligned_buffer.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/elementwise_loops.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/reference_fallback.h"
#include "kernels/cpu/vector_math.h"
#include "kernels/kernel.h"

namespace tsr {

namespace {

// The most scores one work item holds: 512 KiB, within a core's L2 beside the
// operands' panels.
constexpr int64_t kMaxScoreFloats = 128 * 1024;
// Rough cycles per score beyond the two products' multiply-adds: the mask, softmax's
// max, exp, sum and scale.
constexpr int64_t kCostPerScore = 20;

std::optional<Shape> InputShape(const KernelContext& ctx, int i) {
  return ctx.has_input(i) ? std::optional<Shape>(ctx.input(i).shape()) : std::nullopt;
}

// Query rows per work item: all of them when their scores fit kMaxScoreFloats, else as
// many as fit, rounded down to a multiple of the micro-kernel's rows `mr` when at least
// mr fit (so no block but the last leaves a partial register tile).
int64_t RowsPerBlock(int64_t q_len, int64_t kv_len, int64_t mr) {
  if (q_len * kv_len <= kMaxScoreFloats) return q_len;
  const int64_t rows = std::max<int64_t>(1, kMaxScoreFloats / kv_len);
  return rows >= mr ? rows / mr * mr : rows;
}

absl::Status MultiHeadAttentionKernel(KernelContext& ctx) {
  const absl::StatusOr<AttentionGeometry> geometry =
      ComputeAttentionGeometry(ctx.input(0).shape(), InputShape(ctx, 1), InputShape(ctx, 2), InputShape(ctx, 3),
                               ctx.GetInt("num_heads"), ctx.GetFloat("scale"));
  if (!geometry.ok()) return RunReferenceKernel(ctx);
  const AttentionGeometry& g = *geometry;
  const bool has_mask = ctx.has_input(3);
  Tensor& y = ctx.output(0);
  const bool types_ok = (g.packed || (ctx.input(1).dtype() == DType::kF32 && ctx.input(2).dtype() == DType::kF32)) &&
                        (!has_mask || ctx.input(3).dtype() == DType::kBool) && y.dtype() == DType::kF32 &&
                        y.shape() == g.output_shape();
  // Without keys every output is an empty sum: the reference writes it.
  if (!types_ok || g.kv_len == 0) return RunReferenceKernel(ctx);
  if (y.num_elements() == 0) return absl::OkStatus();

  const CpuIsa isa = ActiveCpuIsa();
  const VectorMath& math = VectorMathFor(isa);
  const ElementwiseLoops& loops = ElementwiseLoopsFor(isa);
  GemmOptions gemm;  // single-threaded: the work items are what is split
  gemm.isa = isa;
  const float* q = ctx.input(0).data<float>();
  const float* k = g.packed ? q : ctx.input(1).data<float>();
  const float* v = g.packed ? q : ctx.input(2).data<float>();
  const bool* mask = has_mask ? ctx.input(3).data<bool>() : nullptr;
  const AttentionMaskStrides ms = has_mask ? MaskStridesFor(ctx.input(3).shape()) : AttentionMaskStrides{};
  const float mask_value = static_cast<float>(ctx.GetFloat("mask_value"));
  const float scale = static_cast<float>(g.scale);
  float* py = y.data<float>();

  const int64_t rows_per_block = RowsPerBlock(g.q_len, g.kv_len, SgemmTileFor(isa).mr);
  const int64_t blocks = (g.q_len + rows_per_block - 1) / rows_per_block;
  const int64_t cost = rows_per_block * g.kv_len * (2 * g.head_dim + 2 * g.v_head_dim + kCostPerScore);
  ctx.ParallelFor(g.batch * g.heads * blocks, cost, [&](int64_t begin, int64_t end) {
    thread_local AlignedFloatBuffer scores_buffer;
    float* scores = scores_buffer.Get(rows_per_block * g.kv_len);
    for (int64_t item = begin; item < end; ++item) {
      const int64_t block = item % blocks, h = item / blocks % g.heads, b = item / blocks / g.heads;
      const int64_t r0 = block * rows_per_block, rows = std::min(rows_per_block, g.q_len - r0);
      const float* q_blk = q + b * g.q_batch_stride + r0 * g.q_row_stride + g.q_offset + h * g.head_dim;
      const float* k_h = k + b * g.k_batch_stride + g.k_offset + h * g.head_dim;
      const float* v_h = v + b * g.v_batch_stride + g.v_offset + h * g.v_head_dim;
      Sgemm(false, true, rows, g.kv_len, g.head_dim, scale, q_blk, g.q_row_stride, k_h, g.k_row_stride, 0.0f, scores,
            g.kv_len, gemm);
      for (int64_t i = 0; i < rows; ++i) {
        float* row = scores + i * g.kv_len;
        if (has_mask) {
          const bool* m = mask + b * ms.batch + h * ms.head + (r0 + i) * ms.row;
          loops.where(m, ms.column, &mask_value, 0, row, 1, row, g.kv_len);
        }
        // A row of -inf scores (all masked by -inf) gives NaN, as in the reference.
        const float max = math.max(row, g.kv_len);
        const float inv_sum = static_cast<float>(1.0 / math.exp_shifted_sum(row, max, row, g.kv_len));
        loops.mul(row, 1, &inv_sum, 0, row, g.kv_len);
      }
      float* y_blk = py + (b * g.q_len + r0) * g.v_width() + h * g.v_head_dim;
      Sgemm(false, false, rows, g.v_head_dim, g.kv_len, 1.0f, scores, g.kv_len, v_h, g.v_row_stride, 0.0f, y_blk,
            g.v_width(), gemm);
    }
  });
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterCpuAttentionKernels(KernelRegistry& registry) {
  return registry.Register("MultiHeadAttention", kCpuDevice, DType::kF32, MultiHeadAttentionKernel);
}

}  // namespace tsr

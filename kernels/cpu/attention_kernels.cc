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
//
// With a mask that varies along the rows (causal, banded), a block's rows go in groups
// that compute only the span of keys some row of the group keeps: the masked scores
// outside it are exactly 0 after the exp (checked per row; otherwise the group takes
// every key), so skipping them changes only the order of the sums.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>

#include "graph/dtype.h"
#include "graph/ops/attention_geometry.h"
#include "graph/status_macros.h"
#include "graph/tensor.h"
#include "kernels/attention_kernel_geometry.h"
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

// Query rows per work item: all of them when their scores fit kMaxScoreFloats, else as
// many as fit, rounded down to a multiple of the micro-kernel's rows `mr` when at least
// mr fit (so no block but the last leaves a partial register tile).
int64_t RowsPerBlock(int64_t q_len, int64_t kv_len, int64_t mr) {
  if (q_len * kv_len <= kMaxScoreFloats) return q_len;
  const int64_t rows = std::max<int64_t>(1, kMaxScoreFloats / kv_len);
  return rows >= mr ? rows / mr * mr : rows;
}

// Query rows per key span, in register tiles of the GEMM: GPT-2's causal 128 x 128 heads
// in spans of 56, 112 and 128 keys compute 70% of the scores. Measured in one process,
// 30 interleaved rounds (the kernel alone, 12 heads): whole blocks 800 us, spans of 2
// tiles 789, of 4 tiles 739 at one thread; 422, 420, 410 at two. Smaller spans save more
// products but pay K's transposed packing and a GEMM call per span.
constexpr int64_t kSpanTiles = 4;

// Columns [begin, end) of a block of rows' keys.
struct KeySpan {
  int64_t begin, end;
};

// The smallest span of keys outside which every score of the `rows` mask rows (row i at
// mask + i * row_stride, kv_len contiguous flags) is masked; all keys when some row has no
// unmasked key at all (its softmax reads every masked score).
KeySpan UnmaskedSpan(const bool* mask, int64_t row_stride, int64_t rows, int64_t kv_len) {
  KeySpan span{kv_len, 0};
  for (int64_t i = 0; i < rows; ++i) {
    // bool is one byte holding 0 or 1: the first and last false are the first and last 0.
    static_assert(sizeof(bool) == 1);
    const void* m = mask + i * row_stride;
    const void* first = std::memchr(m, 0, static_cast<size_t>(kv_len));
    if (first == nullptr) return KeySpan{0, kv_len};
    const void* last = memrchr(m, 0, static_cast<size_t>(kv_len));
    span.begin = std::min<int64_t>(span.begin, static_cast<const char*>(first) - static_cast<const char*>(m));
    span.end = std::max<int64_t>(span.end, static_cast<const char*>(last) - static_cast<const char*>(m) + 1);
  }
  return span;
}

absl::Status MultiHeadAttentionKernel(KernelContext& ctx) {
  const absl::StatusOr<AttentionGeometry> geometry = AttentionGeometryOf(ctx);
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

  const int64_t mr = SgemmTileFor(isa).mr;
  const int64_t rows_per_block = RowsPerBlock(g.q_len, g.kv_len, mr);
  const int64_t blocks = (g.q_len + rows_per_block - 1) / rows_per_block;
  const int64_t cost = rows_per_block * g.kv_len * (2 * g.head_dim + 2 * g.v_head_dim + kCostPerScore);
  // A mask that differs between rows (a causal one) may leave whole runs of columns masked
  // for a few rows together: those rows go in sub-blocks of kSpanTiles register tiles,
  // each computing only its keys' span (KeySpan).
  const bool key_spans = has_mask && ms.row != 0 && ms.column != 0;
  const int64_t sub_rows = key_spans ? kSpanTiles * mr : rows_per_block;
  // The probabilities of query rows [r0, r0 + rows) over the keys of `span` into `scores`
  // (row stride: the span's width): the scaled products, the mask, softmax. False when a
  // masked score outside the span would not have given exactly 0 (mask_value finite and
  // within float exp's range of a row's maximum): the caller then takes every key.
  const auto softmax_of_span = [&](int64_t b, int64_t h, int64_t r0, int64_t rows, KeySpan span, const float* k_h,
                                   const bool* mask_bh, float* scores) {
    const int64_t width = span.end - span.begin;
    const bool partial = width != g.kv_len;
    const float* q_blk = q + b * g.q_batch_stride + r0 * g.q_row_stride + g.q_offset + h * g.head_dim;
    Sgemm(false, true, rows, width, g.head_dim, scale, q_blk, g.q_row_stride, k_h + span.begin * g.k_row_stride,
          g.k_row_stride, 0.0f, scores, width, gemm);
    for (int64_t i = 0; i < rows; ++i) {
      float* row = scores + i * width;
      if (mask_bh != nullptr) {
        const bool* m = mask_bh + (r0 + i) * ms.row + span.begin * ms.column;
        loops.where(m, ms.column, &mask_value, 0, row, 1, row, width);
      }
      // A row of -inf scores (all masked by -inf) gives NaN, as in the reference.
      const float max = math.max(row, width);
      if (partial && std::exp(mask_value - max) != 0.0f) return false;
      const float inv_sum = static_cast<float>(1.0 / math.exp_shifted_sum(row, max, row, width));
      loops.mul(row, 1, &inv_sum, 0, row, width);
    }
    return true;
  };
  ctx.ParallelFor(g.batch * g.heads * blocks, cost, [&](int64_t begin, int64_t end) {
    thread_local AlignedFloatBuffer scores_buffer;
    float* scores = scores_buffer.Get(rows_per_block * g.kv_len);
    for (int64_t item = begin; item < end; ++item) {
      const int64_t block = item % blocks, h = item / blocks % g.heads, b = item / blocks / g.heads;
      const int64_t block_end = std::min(g.q_len, (block + 1) * rows_per_block);
      const float* k_h = k + b * g.k_batch_stride + g.k_offset + h * g.head_dim;
      const float* v_h = v + b * g.v_batch_stride + g.v_offset + h * g.v_head_dim;
      const bool* mask_bh = has_mask ? mask + b * ms.batch + h * ms.head : nullptr;
      for (int64_t r0 = block * rows_per_block; r0 < block_end; r0 += sub_rows) {
        const int64_t rows = std::min(sub_rows, block_end - r0);
        KeySpan span{0, g.kv_len};
        if (key_spans) span = UnmaskedSpan(mask_bh + r0 * ms.row, ms.row, rows, g.kv_len);
        // The scores of the span; when a masked score outside it would not give exactly 0
        // after the exp (a finite mask value near the row's scores), all of them.
        if (!softmax_of_span(b, h, r0, rows, span, k_h, mask_bh, scores)) {
          span = KeySpan{0, g.kv_len};
          softmax_of_span(b, h, r0, rows, span, k_h, mask_bh, scores);
        }
        const int64_t width = span.end - span.begin;
        float* y_blk = py + (b * g.q_len + r0) * g.v_width() + h * g.v_head_dim;
        Sgemm(false, false, rows, g.v_head_dim, width, 1.0f, scores, width, v_h + span.begin * g.v_row_stride,
              g.v_row_stride, 0.0f, y_blk, g.v_width(), gemm);
      }
    }
  });
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterCpuAttentionKernels(KernelRegistry& registry) {
  return registry.Register("MultiHeadAttention", kCpuDevice, DType::kF32, MultiHeadAttentionKernel);
}

}  // namespace tsr

// The geometry of MultiHeadAttention (attention_ops.cc): where each head's queries, keys
// and values lie in the input tensors and where its output goes, for the shape function,
// the kernels and the compiler's attention fusion alike.
//
// Q, K, V are [B, S, heads * D] with each row's heads side by side (the layout before a
// model's Reshape [B, S, heads, D] + Transpose to [B, heads, S, D]). Packed, K and V are
// absent and Q is [B, S, 3 * E]: the query, key and value projections side by side in
// each row, as a fused QKV projection writes them (GPT-2's c_attn; the thirds a Split
// along the last axis would cut). Head h of batch b then reads
//   Q rows  q + b * q_batch_stride + s * q_row_stride + q_offset + h * head_dim
// (likewise K and V) and writes
//   Y rows  y + b * (q_len * v_width) + s * v_width + h * v_head_dim.
//
// Only geometry lives here: no nodes, no tensors. Errors are InvalidArgument naming the
// input and the dims; callers add the node name.
#ifndef TESSERA_GRAPH_OPS_ATTENTION_GEOMETRY_H_
#define TESSERA_GRAPH_OPS_ATTENTION_GEOMETRY_H_

#include <cmath>
#include <cstdint>
#include <optional>

#include "absl/status/statusor.h"
#include "graph/shape.h"

namespace tsr {

struct AttentionGeometry {
  int64_t batch = 0;  // may be kBatchDim in shape inference
  int64_t heads = 0;
  int64_t q_len = 0, kv_len = 0;
  int64_t head_dim = 0;    // D: of each query and key head
  int64_t v_head_dim = 0;  // Dv: of each value head (the output's)
  bool packed = false;
  // Element offsets of the first head's first column within a row, row strides and
  // batch strides of each operand (all three in Q's buffer when packed).
  int64_t q_offset = 0, k_offset = 0, v_offset = 0;
  int64_t q_row_stride = 0, k_row_stride = 0, v_row_stride = 0;
  int64_t q_batch_stride = 0, k_batch_stride = 0, v_batch_stride = 0;
  // The scale actually applied to Q K^T: the attribute, or 1 / sqrt(D) when it is 0.
  double scale = 1.0;

  int64_t v_width() const { return heads * v_head_dim; }  // the output's last dim
  Shape output_shape() const { return Shape({batch, q_len, v_width()}); }
};

// The geometry of Q (and K, V when not packed) for `num_heads` heads and the `scale`
// attribute, or an error naming the offending input. The mask, when present, must
// broadcast to [B, heads, q_len, kv_len].
absl::StatusOr<AttentionGeometry> ComputeAttentionGeometry(const Shape& q, const std::optional<Shape>& k,
                                                           const std::optional<Shape>& v,
                                                           const std::optional<Shape>& mask, int64_t num_heads,
                                                           double scale);

// For mask dims broadcast to [B, heads, q_len, kv_len] (right-aligned, numpy rules): the
// element strides of the mask along those four dims (0 where it broadcasts).
struct AttentionMaskStrides {
  int64_t batch = 0, head = 0, row = 0, column = 0;
};
AttentionMaskStrides MaskStridesFor(const Shape& mask);

}  // namespace tsr

#endif  // TESSERA_GRAPH_OPS_ATTENTION_GEOMETRY_H_

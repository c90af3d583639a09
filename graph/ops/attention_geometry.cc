// MultiHeadAttention's geometry (see attention_geometry.h).
#include "graph/ops/attention_geometry.h"

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace tsr {

namespace {

// A [B, S, width] operand: the error when it is not one.
absl::Status CheckRank3(const Shape& s, const char* name) {
  if (s.rank() == 3) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("input '", name, "' has shape ", s.ToString(),
                                                 " but [batch, sequence, heads * head_size] is required"));
}

absl::Status CheckHeads(int64_t width, int64_t heads, const char* name, const Shape& s) {
  if (width > 0 && width % heads == 0) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("input '", name, "' ", s.ToString(), ": its last dim ",
                                                 DimToString(width),
                                                 " is not a positive multiple of num_heads = ", heads));
}

bool SameDim(int64_t a, int64_t b) { return a == b; }

}  // namespace

absl::StatusOr<AttentionGeometry> ComputeAttentionGeometry(const Shape& q, const std::optional<Shape>& k,
                                                           const std::optional<Shape>& v,
                                                           const std::optional<Shape>& mask, int64_t num_heads,
                                                           double scale) {
  if (num_heads < 1) {
    return absl::InvalidArgumentError(absl::StrCat("attribute 'num_heads' is ", num_heads, " but must be >= 1"));
  }
  if (!std::isfinite(scale) || scale < 0.0) {
    return absl::InvalidArgumentError(
        absl::StrCat("attribute 'scale' is ", scale, " but must be finite and >= 0 (0: 1 / sqrt(head size))"));
  }
  if (k.has_value() != v.has_value()) {
    return absl::InvalidArgumentError(
        "inputs 'K' and 'V' must be given together (both absent: Q holds the packed queries, keys and values)");
  }
  if (auto s = CheckRank3(q, "Q"); !s.ok()) return s;
  AttentionGeometry g;
  g.heads = num_heads;
  g.batch = q.dim(0);
  g.q_len = q.dim(1);
  g.packed = !k.has_value();
  if (g.packed) {
    const int64_t width = q.dim(2);
    if (width <= 0 || width % (3 * num_heads) != 0) {
      return absl::InvalidArgumentError(absl::StrCat("input 'Q' ", q.ToString(),
                                                     " is packed (no K and V): its last dim ", DimToString(width),
                                                     " must be 3 * num_heads * head_size, a "
                                                     "multiple of ",
                                                     3 * num_heads));
    }
    const int64_t e = width / 3;
    g.kv_len = g.q_len;
    g.head_dim = g.v_head_dim = e / num_heads;
    g.q_offset = 0;
    g.k_offset = e;
    g.v_offset = 2 * e;
    g.q_row_stride = g.k_row_stride = g.v_row_stride = width;
  } else {
    if (auto s = CheckRank3(*k, "K"); !s.ok()) return s;
    if (auto s = CheckRank3(*v, "V"); !s.ok()) return s;
    if (auto s = CheckHeads(q.dim(2), num_heads, "Q", q); !s.ok()) return s;
    if (auto s = CheckHeads(v->dim(2), num_heads, "V", *v); !s.ok()) return s;
    if (!SameDim(k->dim(2), q.dim(2))) {
      return absl::InvalidArgumentError(absl::StrCat("inputs 'Q' ", q.ToString(), " and 'K' ", k->ToString(),
                                                     " must have the same last dim (heads * head_size)"));
    }
    if (!SameDim(k->dim(0), g.batch) || !SameDim(v->dim(0), g.batch)) {
      return absl::InvalidArgumentError(absl::StrCat("inputs 'Q' ", q.ToString(), ", 'K' ", k->ToString(), " and 'V' ",
                                                     v->ToString(), " must have the same batch size"));
    }
    if (!SameDim(k->dim(1), v->dim(1))) {
      return absl::InvalidArgumentError(absl::StrCat("inputs 'K' ", k->ToString(), " and 'V' ", v->ToString(),
                                                     " must have the same sequence length"));
    }
    g.kv_len = k->dim(1);
    g.head_dim = q.dim(2) / num_heads;
    g.v_head_dim = v->dim(2) / num_heads;
    g.q_row_stride = q.dim(2);
    g.k_row_stride = k->dim(2);
    g.v_row_stride = v->dim(2);
  }
  if (g.q_len == kBatchDim) {
    return absl::InvalidArgumentError(absl::StrCat("input 'Q' ", q.ToString(), ": the sequence length must be static"));
  }
  if (g.kv_len == kBatchDim) {
    return absl::InvalidArgumentError(
        absl::StrCat("input 'K' ", k->ToString(), ": the sequence length must be static"));
  }
  g.q_batch_stride = g.q_len * g.q_row_stride;
  g.k_batch_stride = g.kv_len * g.k_row_stride;
  g.v_batch_stride = g.kv_len * g.v_row_stride;
  g.scale = scale == 0.0 ? 1.0 / std::sqrt(static_cast<double>(g.head_dim)) : scale;
  if (mask.has_value()) {
    const Shape full({g.batch, g.heads, g.q_len, g.kv_len});
    bool fits = mask->rank() <= 4;
    for (int i = 0; fits && i < mask->rank(); ++i) {
      const int64_t m = mask->dim(mask->rank() - 1 - i), f = full.dim(3 - i);
      fits = m == 1 || m == f;
    }
    if (!fits) {
      return absl::InvalidArgumentError(
          absl::StrCat("input 'mask' has shape ", mask->ToString(),
                       " but must broadcast to [batch, num_heads, q_len, kv_len] = ", full.ToString()));
    }
  }
  return g;
}

AttentionMaskStrides MaskStridesFor(const Shape& mask) {
  int64_t dims[4] = {1, 1, 1, 1};
  for (int i = 0; i < mask.rank() && i < 4; ++i) dims[3 - i] = mask.dim(mask.rank() - 1 - i);
  AttentionMaskStrides s;
  s.column = dims[3] == 1 ? 0 : 1;
  s.row = dims[2] == 1 ? 0 : dims[3];
  s.head = dims[1] == 1 ? 0 : dims[2] * dims[3];
  s.batch = dims[0] == 1 ? 0 : dims[1] * dims[2] * dims[3];
  return s;
}

}  // namespace tsr

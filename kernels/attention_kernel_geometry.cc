// MultiHeadAttention's geometry from a kernel context (see attention_kernel_geometry.h).
#include "kernels/attention_kernel_geometry.h"

#include <optional>

namespace tsr {

absl::StatusOr<AttentionGeometry> AttentionGeometryOf(const KernelContext& ctx) {
  const auto shape = [&](int i) {
    return ctx.has_input(i) ? std::optional<Shape>(ctx.input(i).shape()) : std::nullopt;
  };
  return ComputeAttentionGeometry(ctx.input(0).shape(), shape(1), shape(2), shape(3), ctx.GetInt("num_heads"),
                                  ctx.GetFloat("scale"));
}

}  // namespace tsr

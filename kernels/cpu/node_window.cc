// NodeWindow3d: a node's window attributes resolved against its input shape.
#include "kernels/cpu/node_window.h"

#include "graph/ops/conv_geometry.h"

namespace tsr {

absl::StatusOr<std::optional<Window3d>> AttrsWindow3d(const AttrMap& attrs, absl::Span<const int64_t> in_spatial,
                                                      absl::Span<const int64_t> kernel) {
  absl::StatusOr<WindowSpec> spec = WindowSpecFromAttrs(attrs);
  if (!spec.ok()) return spec.status();
  if (!kernel.empty()) spec->kernel.assign(kernel.begin(), kernel.end());
  absl::StatusOr<WindowGeometry> geometry = ComputeWindowGeometry(in_spatial, *spec);
  if (!geometry.ok()) return geometry.status();
  return MakeWindow3d(in_spatial, *geometry);
}

absl::StatusOr<std::optional<Window3d>> NodeWindow3d(const KernelContext& ctx, int x_input,
                                                     absl::Span<const int64_t> kernel) {
  const absl::Span<const int64_t> in_spatial = absl::MakeConstSpan(ctx.input(x_input).shape().dims()).subspan(2);
  absl::StatusOr<std::optional<Window3d>> window = AttrsWindow3d(ctx.attrs(), in_spatial, kernel);
  if (!window.ok()) return ctx.Error(window.status().message());
  return window;
}

}  // namespace tsr

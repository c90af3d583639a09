// The sliding window of a Conv / pooling node (and their gradient ops) as a Window3d,
// resolved from the node's attributes and the spatial dimensions of its input X.
#ifndef TESSERA_KERNELS_CPU_NODE_WINDOW_H_
#define TESSERA_KERNELS_CPU_NODE_WINDOW_H_

#include <cstdint>
#include <optional>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "kernels/cpu/conv_window.h"
#include "kernels/kernel.h"

namespace tsr {

// The window over input `x_input` of the node; `kernel`, when non-empty, replaces the
// attribute's kernel_shape (Conv takes it from the weights). Nullopt for more than
// three spatial dimensions (callers defer to the reference kernel); an error naming the
// node for an invalid geometry.
absl::StatusOr<std::optional<Window3d>> NodeWindow3d(const KernelContext& ctx, int x_input = 0,
                                                     absl::Span<const int64_t> kernel = {});

// The same from window attributes (kernel_shape, strides, pads, ...) over the spatial
// sizes `in_spatial`: for inputs whose shape is not [N, C, spatial...] (the blocked
// layout's) and for the compiler, which has attributes but no kernel context. Errors
// are InvalidArgument without a node name.
absl::StatusOr<std::optional<Window3d>> AttrsWindow3d(const AttrMap& attrs, absl::Span<const int64_t> in_spatial,
                                                      absl::Span<const int64_t> kernel = {});

}  // namespace tsr

#endif  // TESSERA_KERNELS_CPU_NODE_WINDOW_H_

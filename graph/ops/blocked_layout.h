// The channel-blocked activation layout (oneDNN's nChw16c, ONNX Runtime's NCHWc): an
// activation [N, C, spatial...] stored as [N, ceil(C / 16), spatial..., 16] -- channel c
// in block c / 16, lane c % 16, zeros in the lanes past C. The one definition of the
// block and of the shapes, for the ops (blocked_ops.cc), their kernels and the compiler's
// layout pass.
#ifndef TESSERA_GRAPH_OPS_BLOCKED_LAYOUT_H_
#define TESSERA_GRAPH_OPS_BLOCKED_LAYOUT_H_

#include <cstdint>
#include <optional>

#include "graph/attr_reader.h"
#include "graph/attribute.h"
#include "graph/shape.h"

namespace tsr {

inline constexpr int64_t kChannelBlock = 16;

// Blocks of kChannelBlock channels that hold `channels` channels.
inline constexpr int64_t ChannelBlocks(int64_t channels) { return (channels + kChannelBlock - 1) / kChannelBlock; }

// [N, ceil(C/16), spatial..., 16] of a plain [N, C, spatial...] (rank >= 2).
inline Shape BlockedShape(const Shape& plain) {
  Shape out{plain.dim(0), ChannelBlocks(plain.dim(1))};
  for (int i = 2; i < plain.rank(); ++i) out.AddDim(plain.dim(i));
  out.AddDim(kChannelBlock);
  return out;
}

// [N, channels, spatial...] of a blocked [N, ceil(channels/16), spatial..., 16] with at
// least one spatial dimension; nullopt when `blocked` is not such a shape.
inline std::optional<Shape> PlainShapeOf(const Shape& blocked, int64_t channels) {
  if (blocked.rank() < 4 || blocked.dim(blocked.rank() - 1) != kChannelBlock ||
      blocked.dim(1) != ChannelBlocks(channels)) {
    return std::nullopt;
  }
  Shape plain{blocked.dim(0), channels};
  for (int d = 2; d + 1 < blocked.rank(); ++d) plain.AddDim(blocked.dim(d));
  return plain;
}

// BlockedInvertedResidual (blocked_ops.cc): three BlockedConvs in one node. Its inputs
// are X, then each stage's W and B (expand, depthwise, project), then the residual Z;
// each stage reads the node's attributes under its prefix.
enum class InvertedResidualStage { kExpand = 0, kDepthwise = 1, kProject = 2 };
inline constexpr int kInvertedResidualResidualInput = 7;
inline constexpr int InvertedResidualWeightInput(InvertedResidualStage s) { return 1 + 2 * static_cast<int>(s); }
inline constexpr int InvertedResidualBiasInput(InvertedResidualStage s) { return 2 + 2 * static_cast<int>(s); }

// The BlockedConv (and FusedConv) attributes of one stage of the node `node`: the stage's
// activation, alpha, min and max (the node's expand_activation, ...), and for the
// depthwise stage group = `depthwise_channels` with the node's strides and pads.
AttrMap InvertedResidualStageAttrs(const AttrReader& node, InvertedResidualStage stage, int64_t depthwise_channels);

}  // namespace tsr

#endif  // TESSERA_GRAPH_OPS_BLOCKED_LAYOUT_H_

// Convolution in the channel-blocked activation layout (oneDNN's nChw16c, ONNX
// Runtime's NCHWc): an activation [N, C, spatial...] is stored as [N, ceil(C / 16),
// spatial..., 16] -- channel c in block c / 16, lane c % 16 -- so that every vector
// holds sixteen channels of one pixel. A convolution then runs as multiply-adds of
// whole vectors at every spatial size (a 7x7 plane wastes no lanes, a depthwise layer
// needs no transposes) and the compiler's layout pass (compiler/transforms/
// activation_layout.cc) keeps chains of convolutions in this layout, converting only
// at the chain's ends. Lanes past C (the last block when C is not a multiple of 16)
// hold zeros: BlockChannels writes them and every kernel here keeps them so.
//
// Direct convolution (group 1: each output block sums all input blocks over the taps),
// Winograd (3x3, stride 1, group 1, where it pays) and depthwise (group == channels ==
// out_channels: lane by lane) are supported, in one or two spatial dimensions, without
// dilation. The weights are prepared once, in the
// form the kernels read; the forward pass fuses bias, residual and activation
// (FusedConv's epilogue) while the output is in registers or cache.
#ifndef TESSERA_KERNELS_CPU_CONV_BLOCKED_H_
#define TESSERA_KERNELS_CPU_CONV_BLOCKED_H_

#include <cstdint>
#include <memory>
#include <optional>

#include "absl/status/statusor.h"
#include "graph/ops/blocked_layout.h"
#include "kernels/cpu/conv_prepared.h"
#include "kernels/cpu/fused_activation.h"
#include "kernels/kernel.h"

namespace tsr {

// [batch, channels, pixels] (channels first, `pixels` the product of the spatial sizes)
// into [batch, ChannelBlocks(channels), pixels, 16], zeros in the lanes past `channels`.
void BlockChannels(int64_t batch, int64_t channels, int64_t pixels, const float* x, float* y,
                   const ParallelForFn& parallel_for = nullptr);

// The inverse: [batch, ChannelBlocks(channels), pixels, 16] into [batch, channels, pixels];
// the lanes past `channels` are not read.
void UnblockChannels(int64_t batch, int64_t channels, int64_t pixels, const float* x, float* y,
                     const ParallelForFn& parallel_for = nullptr);

// Whether the blocked kernels take `g`: one or two spatial dimensions (the window's
// depth is 1), dilation 1, and either group 1 or depthwise (group == channels ==
// out_channels, at most kMaxBlockedDepthwiseTaps taps), with at least one input
// channel and one output pixel.
bool BlockedConvApplies(const ConvGeometry& g);

// The Winograd tile (2 or 4) PrepareBlockedConv's automatic choice takes for `g`, or 0
// where it runs the direct or depthwise kernel (Winograd reads its input blocked: a
// plain input is blocked first, so callers that can should pass it blocked).
int BlockedConvWinogradTile(const ConvGeometry& g);

// The most taps a blocked depthwise convolution takes.
inline constexpr int64_t kMaxBlockedDepthwiseTaps = 49;

// Which kernel a group-1 convolution runs: the measured choice, or one forced (tests,
// benchmarks). Depthwise convolutions have one kernel and ignore it.
enum class BlockedConvAlgorithm { kAuto, kDirect, kWinograd2, kWinograd4 };

// Weights [out_channels, channels / group, kernel...] prepared for BlockedConvForward.
// Immutable once made: any number of threads may run on one object at once.
class PreparedBlockedConv {
 public:
  PreparedBlockedConv() = default;
  PreparedBlockedConv(PreparedBlockedConv&&) = default;
  PreparedBlockedConv& operator=(PreparedBlockedConv&&) = default;

  const ConvGeometry& geometry() const { return geometry_; }
  bool depthwise() const { return depthwise_; }
  // Winograd's output tile (2 or 4), or 0 for the direct or depthwise kernel.
  int winograd_tile() const { return winograd_tile_; }
  // The weights in the order of the kernel that runs them (conv_blocked_kernels.h).
  const float* packed_weights() const { return weights_.get(); }

 private:
  friend absl::StatusOr<PreparedBlockedConv> PrepareBlockedConv(const ConvGeometry& geometry, const float* weights,
                                                                BlockedConvAlgorithm algorithm);
  friend void BlockedConvForward(const PreparedBlockedConv& prepared, int64_t batch, const float* x, bool x_blocked,
                                 const float* bias, const float* residual, const FusedActivation& activation, float* y,
                                 const ParallelForFn& parallel_for);
  struct Free {
    void operator()(float* p) const;
  };

  ConvGeometry geometry_;
  bool depthwise_ = false;
  int winograd_tile_ = 0;
  std::unique_ptr<float[], Free> weights_;  // 64-byte aligned, in the kernel's order
};

// InvalidArgument when !BlockedConvApplies(geometry) or the geometry is inconsistent, or
// when a forced Winograd algorithm does not apply to it (3x3, stride 1, 2-D, group 1).
absl::StatusOr<PreparedBlockedConv> PrepareBlockedConv(const ConvGeometry& geometry, const float* weights,
                                                       BlockedConvAlgorithm algorithm = BlockedConvAlgorithm::kAuto);

// y = act(conv(x) + bias + residual), the activations blocked: x [batch,
// ChannelBlocks(channels), in..., 16] -- or, with !x_blocked and group 1, plain
// [batch, channels, in...] (a network's first convolution reads its few-channel input
// as it lies) --, y and residual [batch, ChannelBlocks(out_channels), out..., 16]; bias
// [out_channels] or null; residual null or y's shape (it may be y itself). Lanes past
// the channel counts: read as zeros from x and residual, written as zeros to y.
// parallel_for (null: inline) splits the work; the results do not depend on the split.
void BlockedConvForward(const PreparedBlockedConv& prepared, int64_t batch, const float* x, bool x_blocked,
                        const float* bias, const float* residual, const FusedActivation& activation, float* y,
                        const ParallelForFn& parallel_for = nullptr);

// The convolution of a BlockedConv node (graph/ops/blocked_ops.cc: X blocked, or plain
// with input_blocked = 0; W [M, C/group, kernel...]; the Conv attributes) when the blocked
// kernels take it; nullopt when they do not (more than two spatial dimensions, a plain
// input to a depthwise convolution, ...: callers run the reference kernel); an error
// naming the node for an invalid geometry, or an output or residual that does not fit it.
absl::StatusOr<std::optional<ConvGeometry>> NodeBlockedConvGeometry(KernelContext& ctx);

// The same from the attributes (Conv's, group included) and the shapes of X (blocked or
// plain) and W, without the node: errors name no node.
absl::StatusOr<std::optional<ConvGeometry>> BlockedConvGeometryOf(const AttrMap& attrs, const Shape& x, bool x_blocked,
                                                                  const Shape& w);

}  // namespace tsr

#endif  // TESSERA_KERNELS_CPU_CONV_BLOCKED_H_

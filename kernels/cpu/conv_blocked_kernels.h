// The kernel families behind BlockedConvForward (conv_blocked.h), each with its
// weight packing: direct convolution (group 1; conv_blocked_direct*.cc), Winograd
// (3x3, stride 1, group 1; conv_blocked_winograd*.cc) and depthwise
// (conv_blocked_depthwise*.cc). Internal to kernels/cpu: callers use conv_blocked.h.
//
// Shared conventions: the geometry satisfies BlockedConvApplies; `packed` holds the
// floats the matching Pack* function wrote (64-byte aligned); y (and residual, which
// may be y itself) is blocked, [batch, ChannelBlocks(out_channels), out_h, out_w, 16];
// bias [out_channels] or null; every output element is act(bias + sum of its taps +
// residual) with the sum's order fixed by the geometry alone (never by the thread split
// or the ISA path's blocking), lanes past out_channels written as zeros. The kernels
// pick their ISA path from ActiveCpuIsa() (AVX-512, AVX2, a portable fallback) and split
// the work with parallel_for (null: inline).
#ifndef TESSERA_KERNELS_CPU_CONV_BLOCKED_KERNELS_H_
#define TESSERA_KERNELS_CPU_CONV_BLOCKED_KERNELS_H_

#include <algorithm>
#include <cstdint>
#include <vector>

#include "kernels/cpu/conv_blocked_depthwise_row.h"
#include "kernels/cpu/conv_blocked_direct_row.h"
#include "kernels/cpu/conv_prepared.h"
#include "kernels/cpu/fused_activation.h"
#include "kernels/kernel.h"

namespace tsr {

// Direct convolution, group 1. x is blocked ([batch, ChannelBlocks(channels), in_h,
// in_w, 16]) when x_blocked, else plain NCHW ([batch, channels, in_h, in_w]: a network's
// first convolution reads its few-channel input as it lies).
int64_t BlockedDirectWeightFloats(const ConvGeometry& g);
void PackBlockedDirectWeights(const ConvGeometry& g, const float* weights, float* packed);
void BlockedDirectConv(const ConvGeometry& g, const float* packed, int64_t batch, const float* x, bool x_blocked,
                       const float* bias, const float* residual, const FusedActivation& activation, float* y,
                       const ParallelForFn& parallel_for);

// Whether `g` is pointwise: 1x1, stride 1, unpadded, group 1 (output pixel p reads input
// pixel p).
bool IsBlockedPointwise(const ConvGeometry& g);

// One direct convolution's register blocking for rows of `width` output pixels, the bias
// in whole blocks and the epilogue, made once per call. RunGroup runs one row kernel
// call for one group of output blocks -- r's input fields, y, residual and
// y_block_stride set by the caller for output block 0 of the row, its weight, bias,
// block and clamp fields set here -- then the activations the kernel does not apply in
// registers. RunPointwise (a pointwise `g`, x blocked) computes `pixels` consecutive
// pixels of blocked x (x_block floats from one input block to the next) into y
// (y_block; residual null or y's layout) on the calling thread. Every element gets
// BlockedDirectConv's floats. Any number of threads may run one plan at once.
class BlockedDirectPlan {
 public:
  BlockedDirectPlan(const ConvGeometry& g, const float* packed, const float* bias, const FusedActivation& activation,
                    int64_t width);
  int64_t groups() const { return groups_; }
  int64_t group_blocks() const { return group_blocks_; }
  int64_t max_width() const { return max_width_; }
  // The pixels RunPointwise (and BlockedDirectConv's pointwise split) puts in one row:
  // whole strips, about 224 pixels (a 14 KiB output block), still in L1 for every group.
  int64_t pointwise_row_width() const { return std::max<int64_t>(1, 224 / max_width_) * max_width_; }
  void RunGroup(int64_t group, BlockedDirectRow& r) const;
  void RunPointwise(const float* x, int64_t x_block, int64_t pixels, const float* residual, float* y,
                    int64_t y_block) const;

 private:
  const float* packed_;
  FusedActivation activation_;
  int64_t out_blocks_, last_lanes_, weight_block_stride_;
  CpuIsa isa_;
  BlockedDirectClamp clamp_;
  bool zero_lanes_after_activation_;
  int64_t group_blocks_ = 1, max_width_ = 1, groups_ = 1;
  std::vector<float> bias_lanes_;
  BlockedDirectRow pointwise_{};  // the fields every pointwise row shares
};

// Winograd F(tile x tile, 3x3) (tile 2 or 4), x blocked. Results differ from the direct
// sum by rounding only, but by more than the direct kernel's: the transforms scale
// terms by up to 8 (tile 4) before they cancel. BlockedWinogradTile: the tile where
// Winograd applies (3x3, stride 1, undilated, 2-D, at least 16 channels in and out) and
// pays, measured, for the shape; 0 where the direct kernel is faster.
int BlockedWinogradTile(const ConvGeometry& g);
int64_t BlockedWinogradWeightFloats(const ConvGeometry& g, int tile);
void PackBlockedWinogradWeights(const ConvGeometry& g, int tile, const float* weights, float* packed);
void BlockedWinogradConv(const ConvGeometry& g, int tile, const float* packed, int64_t batch, const float* x,
                         const float* bias, const float* residual, const FusedActivation& activation, float* y,
                         const ParallelForFn& parallel_for);

// Depthwise (group == channels == out_channels); x blocked like y.
int64_t BlockedDepthwiseWeightFloats(const ConvGeometry& g);
void PackBlockedDepthwiseWeights(const ConvGeometry& g, const float* weights, float* packed);
void BlockedDepthwiseConv(const ConvGeometry& g, const float* packed, int64_t batch, const float* x, const float* bias,
                          const float* residual, const FusedActivation& activation, float* y,
                          const ParallelForFn& parallel_for);

// A part of one image's depthwise convolution: output rows [oh_begin, oh_end) of channel
// blocks [block, block + blocks). x holds the image's input rows from x_row0 on, x_block
// floats from one block to the next; y (and residual, null or y's layout) the output
// rows from y_row0 on, y_block floats from one block to the next. y_block is a whole
// number of output rows; a slice of several blocks covers all the rows y holds (the
// blocks' outputs are then one run).
struct BlockedDepthwiseSlice {
  const float* x = nullptr;
  int64_t x_block = 0, x_row0 = 0;
  float* y = nullptr;
  const float* residual = nullptr;
  int64_t y_block = 0, y_row0 = 0;
  int64_t block = 0, blocks = 0;
  int64_t oh_begin = 0, oh_end = 0;
};

// One depthwise convolution's tables (the bands of equal valid taps, the bias in whole
// blocks), made once per call; Run computes a slice on the calling thread, epilogue
// included, with BlockedDepthwiseConv's floats. Any number of threads may Run at once.
class BlockedDepthwisePlan {
 public:
  BlockedDepthwisePlan(const ConvGeometry& g, const float* packed, const float* bias,
                       const FusedActivation& activation);
  void Run(const BlockedDepthwiseSlice& slice) const;

 private:
  ConvGeometry geometry_;
  const float* packed_;
  FusedActivation activation_;
  BlockedDirectClamp clamp_;  // the part of activation_ applied in registers
  std::vector<BlockedDepthwiseBand> row_bands_, col_bands_;
  std::vector<float> bias_lanes_;
  CpuIsa isa_;
};

// The activation the direct, Winograd and depthwise kernels apply to their sums in
// registers: Relu and Clip; kNone for the others, which run as a pass over the stored
// outputs.
BlockedDirectClamp ClampInRegisters(const FusedActivation& act);

// `clamp` on one float as the vector kernels apply it (the portable fallbacks):
// Relu "v < 0 ? 0 : v", Clip max_ps(lo, v) then min_ps(hi, .).
inline float ClampLikeRegisters(BlockedDirectClamp clamp, float lo, float hi, float v) {
  if (clamp == BlockedDirectClamp::kRelu) return v < 0.0f ? 0.0f : v;
  if (clamp == BlockedDirectClamp::kClip) {
    const float m = lo > v ? lo : v;
    return hi < m ? hi : m;
  }
  return v;
}

// Whether act(0) may differ from 0, so that the padding lanes need zeroing again after
// an activation that runs as a pass over stored outputs.
bool ActivationMovesZero(const FusedActivation& act);

}  // namespace tsr

#endif  // TESSERA_KERNELS_CPU_CONV_BLOCKED_KERNELS_H_

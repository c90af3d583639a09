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
// pick their ISA path from ActiveCpuIsa() (AVX-512, with a portable fallback) and split
// the work with parallel_for (null: inline).
#ifndef TESSERA_KERNELS_CPU_CONV_BLOCKED_KERNELS_H_
#define TESSERA_KERNELS_CPU_CONV_BLOCKED_KERNELS_H_

#include <cstdint>

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

// The activation the direct and Winograd kernels apply to their sums in registers:
// Relu and Clip; kNone for the others, which run as a pass over the stored outputs.
BlockedDirectClamp ClampInRegisters(const FusedActivation& act);

// Whether act(0) may differ from 0, so that the padding lanes need zeroing again after
// an activation that runs as a pass over stored outputs.
bool ActivationMovesZero(const FusedActivation& act);

}  // namespace tsr

#endif  // TESSERA_KERNELS_CPU_CONV_BLOCKED_KERNELS_H_

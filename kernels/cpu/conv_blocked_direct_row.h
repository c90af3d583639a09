// The register-blocked inner kernel of the channel-blocked direct convolution
// (conv_blocked_direct.cc), one entry point per ISA (conv_blocked_direct_avx512.cc,
// conv_blocked_direct_avx2.cc).
// Kept apart from conv_blocked_kernels.h so the ISA file includes nothing with inline
// functions or templates.
#ifndef TESSERA_KERNELS_CPU_CONV_BLOCKED_DIRECT_ROW_H_
#define TESSERA_KERNELS_CPU_CONV_BLOCKED_DIRECT_ROW_H_

#include <cstdint>

namespace tsr {

// The widest strip of output pixels a kernel holds in registers for `out_blocks` (1 to
// 4) output blocks at once: out_blocks * width accumulators plus out_blocks weight
// vectors and a broadcast fit the 32 vector registers of AVX-512 and the 16 of AVX2
// (where a block takes two). 0: that many blocks at once do not fit.
inline constexpr int64_t kBlockedDirectMaxWidthAvx512[5] = {0, 28, 12, 8, 6};
inline constexpr int64_t kBlockedDirectMaxWidthAvx2[5] = {0, 6, 2, 1, 0};
// AVX2 on one output block of at most 8 channels (its low half only: one register per
// accumulator). Whatever the plan's max_width, strips go this wide there.
inline constexpr int64_t kBlockedDirectMaxWidthAvx2Half[5] = {0, 12, 0, 0, 0};

// Output pixels [ow_begin, ow_end) of one output row, for `out_blocks` consecutive
// output channel blocks. Input element (block b, channel i of the block, input row
// ih, input column iw) lies at
//   x[b * block_stride + i * channel_stride + ih * row_stride + iw * pixel_stride];
// packed weights (block o of the row's, input block b, tap kh, kw, channel i, lane l) at
//   weights[o * weight_block_stride + b * kernel_h * kernel_w * 256
//           + (kh * kernel_w + kw) * channels_b * 16 + i * 16 + l]
// (64-byte aligned; channels_b: 16, or last_block_channels for the last block); output (block o, column ow, lane l) at
// y[o * y_block_stride + ow * 16 + l]. Every output is
//   bias[o * 16 + l] (0 when bias is null)
//   + sum over b < in_blocks, kh in [kh_begin, kh_end), kw < kernel_w with
//     iw = ow * stride_w - pad_left + kw in [0, in_w), i < channels of block b
//     (16, or last_block_channels for the last), in that order, of weight * input
//     (each term one fused multiply-add)
//   + residual (same offsets as y; null: none),
// then clamped as `clamp` says (the standalone Relu and Clip kernels' operations: Relu
// "v < 0 ? 0 : v", Clip "min(hi, max(lo, v))" with NaN passing through), the lanes
// l >= last_block_lanes of block out_blocks - 1 written as zeros. The input
// row of kernel row kh is in_row0 + kh; the caller's kh range keeps it inside the
// input. residual may be y itself: each element is read before it is written.
// The activations applied to the sums in registers, before they are stored (the others
// run as a pass over the stored row).
enum class BlockedDirectClamp { kNone, kRelu, kClip };

struct BlockedDirectRow {
  const float* x;
  int64_t channel_stride, pixel_stride, row_stride, block_stride;
  int64_t in_blocks, last_block_channels;
  int64_t in_row0, in_w;
  int64_t kernel_h, kernel_w, kh_begin, kh_end, stride_w, pad_left;
  const float* weights;
  int64_t weight_block_stride;
  const float* bias;
  const float* residual;
  float* y;
  int64_t y_block_stride;
  int64_t out_blocks, last_block_lanes;
  int64_t ow_begin, ow_end;
  // Strips of at most this many pixels (<= the ISA's max width for out_blocks).
  int64_t max_width;
  BlockedDirectClamp clamp = BlockedDirectClamp::kNone;
  float clamp_lo = 0.0f, clamp_hi = 0.0f;  // kClip
};

void BlockedDirectRowAvx512(const BlockedDirectRow& r);
void BlockedDirectRowAvx2(const BlockedDirectRow& r);

}  // namespace tsr

#endif  // TESSERA_KERNELS_CPU_CONV_BLOCKED_DIRECT_ROW_H_

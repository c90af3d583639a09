// The inner loops of the channel-blocked depthwise convolution (conv_blocked_depthwise.cc)
// in AVX-512 and AVX2 (conv_blocked_depthwise_simd.h). Kept apart from conv_blocked_kernels.h
// so the ISA file includes nothing with inline functions or templates.
#ifndef TESSERA_KERNELS_CPU_CONV_BLOCKED_DEPTHWISE_ROW_H_
#define TESSERA_KERNELS_CPU_CONV_BLOCKED_DEPTHWISE_ROW_H_

#include <cstdint>

#include "kernels/cpu/conv_blocked_direct_row.h"

namespace tsr {

// Consecutive outputs [first, end) along one spatial dimension whose valid taps along it
// (those reading inside the input, not the padding) are the same, [tap_begin, tap_end).
struct BlockedDepthwiseBand {
  int64_t first, end;
  int64_t tap_begin, tap_end;
};

// Output rows [oh_begin, oh_end) of `blocks` consecutive channel blocks of one image:
//   y[oh][ow] = bias + sum over the valid taps kh in row_band.taps, kw in col_band.taps
//               (kh outer, both ascending) of weights[kh][kw] * x[oh * stride_h - pad_top + kh]
//                                                            [ow * stride_w - pad_left + kw]
//               (+ residual[oh][ow] when residual is not null)
// every operation a whole vector of sixteen lanes, the sum one fused multiply-add per
// tap (the portable path computes these floats with std::fma). Per block, x is [in_h,
// in_w, 16], weights [kernel_h, kernel_w, 16] (64-byte aligned), bias 16 floats, y and
// residual (which may be y) [out_h, out_w, 16]; the pointers are the first block's, the
// next block's are x_block, weights_block, 16 and y_block floats further. x may hold only
// the image's rows from x_row0 on (input row ih at x[(ih - x_row0) * in_w * 16]), y and
// residual only the output rows from y_row0 on (a fused caller's band of rows in a scratch
// buffer). The bands cover the output rows and columns in order (row_bands along H,
// col_bands along W). Each output is then clamped as `clamp` says, in registers before
// it is stored (BlockedDirectRow's operations: Relu "v < 0 ? 0 : v", Clip
// "min(hi, max(lo, v))").
struct BlockedDepthwiseRows {
  const float* x;
  const float* weights;
  const float* bias;
  const float* residual;
  float* y;
  int64_t blocks, x_block, weights_block, y_block;
  int64_t in_w, out_w, kernel_w, stride_h, stride_w, pad_top, pad_left;
  const BlockedDepthwiseBand* row_bands;
  int64_t n_row_bands;
  const BlockedDepthwiseBand* col_bands;
  int64_t n_col_bands;
  int64_t oh_begin, oh_end;
  int64_t x_row0 = 0, y_row0 = 0;
  BlockedDirectClamp clamp = BlockedDirectClamp::kNone;
  float clamp_lo = 0.0f, clamp_hi = 0.0f;  // kClip
};
void BlockedDepthwiseRowsAvx512(const BlockedDepthwiseRows& r);
void BlockedDepthwiseRowsAvx2(const BlockedDepthwiseRows& r);

}  // namespace tsr

#endif  // TESSERA_KERNELS_CPU_CONV_BLOCKED_DEPTHWISE_ROW_H_

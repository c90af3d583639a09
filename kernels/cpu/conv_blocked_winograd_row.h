// The three inner steps of the channel-blocked Winograd convolution
// (conv_blocked_winograd.cc), one entry point per ISA (conv_blocked_winograd_simd.h;
// the portable fallbacks live in the driver and compute the same floats). Kept apart
// from conv_blocked_kernels.h so the ISA file includes nothing with inline functions or
// templates.
//
// F(m x m, 3 x 3) with alpha = m + 2 (m = 2 or 4), Lavin & Gray's matrices
// (conv_winograd_avx2.cc has the same): V = Bt d B, U = G g Gt, Y = At M A. Every
// transform is a sequence of "combinations": sum_q coef[q] * v[q] over q ascending,
// starting from +0, skipping zero coefficients, adding or subtracting for +-1 and one
// fused multiply-add otherwise -- the same operations at every ISA level.
#ifndef TESSERA_KERNELS_CPU_CONV_BLOCKED_WINOGRAD_ROW_H_
#define TESSERA_KERNELS_CPU_CONV_BLOCKED_WINOGRAD_ROW_H_

#include <cstdint>

#include "kernels/cpu/conv_blocked_direct_row.h"

namespace tsr {

// The widest strip of tiles the product kernel holds in registers for `out_blocks` (1
// to 4) output blocks: out_blocks * width accumulators, out_blocks weight vectors and a
// broadcast fit the 32 vector registers of AVX-512 and the 16 of AVX2 (where a block
// takes two). 0: that many blocks at once do not fit.
inline constexpr int64_t kBlockedWinogradMaxWidthAvx512[5] = {0, 24, 12, 8, 6};
inline constexpr int64_t kBlockedWinogradMaxWidthAvx2[5] = {0, 6, 2, 1, 0};

// Input transform of the tiles [tw_begin, tw_end) of tile row th, for one input channel
// block: x points at the block's plane ([in_h][in_w][16]); tile (th, tw)'s patch is the
// alpha x alpha pixels from row th * m - pad_top, column tw * m - pad_left, zeros
// outside the plane. t[i][j] = sum_k Bt[i][k] d[k][j] (combination over k), then
// V[i][j] = sum_k t[i][k] Bt[j][k]; V[i][j] of tile number `tile0 + (tw - tw_begin)`
// is stored as 16 floats at v + (i * alpha + j) * xi_stride + tile * ldv.
struct BlockedWinogradInput {
  int tile;  // m
  const float* x;
  int64_t in_h, in_w, pad_top, pad_left;
  int64_t th, tw_begin, tw_end;
  float* v;
  int64_t xi_stride, ldv, tile0;
};

// The products of one transformed position xi for a strip of `width` tiles and
// `out_blocks` output blocks: for every block b, tile t and lane l,
//   m[b * m_block_stride + t * 16 + l] = sum over c < channels, ascending, of
//     u[b * u_block_stride + c * 16 + l] * v[t * ldv + c]
// starting from +0, each term one fused multiply-add.
struct BlockedWinogradProduct {
  const float* u;
  int64_t u_block_stride;
  const float* v;
  int64_t ldv, channels;
  float* m;
  int64_t m_block_stride;
  int64_t out_blocks, width;
};

// Output transform of the tiles [tw_begin, tw_end) of tile row th, for one output block:
// M[i][j] of tile number `tile0 + (tw - tw_begin)` at m + (i * alpha + j) * xi_stride +
// tile * 16; s[a][j] = sum_i At[a][i] M[i][j], Y[a][b] = sum_j At[b][j] s[a][j];
// then + bias (16 lanes; null: none), + residual (y's offsets; null: none; may be y),
// clamped as the direct kernel clamps (BlockedDirectClamp), lanes >=
// lanes written as zeros, stored at y + (oy * out_w + ox) * 16 for the pixels inside
// the out_h x out_w plane.
struct BlockedWinogradOutput {
  int tile;  // m
  const float* m;
  int64_t xi_stride, tile0;
  int64_t out_h, out_w;
  int64_t th, tw_begin, tw_end;
  const float* bias;
  const float* residual;
  float* y;
  int64_t lanes;
  BlockedDirectClamp clamp;
  float clamp_lo, clamp_hi;
};

void BlockedWinogradInputAvx512(const BlockedWinogradInput& r);
void BlockedWinogradProductAvx512(const BlockedWinogradProduct& r);
void BlockedWinogradOutputAvx512(const BlockedWinogradOutput& r);
void BlockedWinogradInputAvx2(const BlockedWinogradInput& r);
void BlockedWinogradProductAvx2(const BlockedWinogradProduct& r);
void BlockedWinogradOutputAvx2(const BlockedWinogradOutput& r);

}  // namespace tsr

#endif  // TESSERA_KERNELS_CPU_CONV_BLOCKED_WINOGRAD_ROW_H_

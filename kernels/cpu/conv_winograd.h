// Winograd convolution (Lavin & Gray, "Fast Algorithms for Convolutional Neural
// Networks") for the cpu Conv kernel: 3x3, stride 1, undilated, ungrouped 2-D
// convolutions computed as alpha^2 = (m + 2)^2 independent GEMMs
// [out channels, channels] x [channels, tiles] on transformed weights and input
// tiles, with m = 2 (2.25x fewer multiplies than the direct GEMM) or m = 4 (4x).
// Everything else, and every ISA below AVX2, stays on conv_kernels.cc's im2col path.
//
// The results differ from the direct sum by rounding only, but by more than the
// direct GEMM's: the transforms scale terms by up to 8 (m = 4) before they cancel
// (tests/kernels/cpu/conv_winograd_test.cc allows 2e-4 relative).
#ifndef TESSERA_KERNELS_CPU_CONV_WINOGRAD_H_
#define TESSERA_KERNELS_CPU_CONV_WINOGRAD_H_

#include <cstdint>
#include <vector>

#include "kernels/cpu/conv_window.h"
#include "kernels/cpu/gemm.h"
#include "kernels/kernel.h"

namespace tsr {

// The output tile size m (2 or 4) Winograd should use for this convolution, or 0
// where it does not apply or the im2col GEMM is expected to be faster.
// weights_prepared_once: the weight transform is done once for many calls
// (conv_prepared.h), not on every call, which moves the break-even to fewer tiles.
int ChooseWinogradTile(const Window3d& w, int64_t channels, int64_t out_channels, int64_t group,
                       bool weights_prepared_once = false);

// y ([batch, out_channels, out_h, out_w]) = conv(x, weights) + bias (null: none) for
// a convolution ChooseWinogradTile accepted (with any tile it may return), split
// over parallel_for (null: inline). Results do not depend on the split.
void WinogradConv(const Window3d& w, int tile, int64_t batch, int64_t channels, int64_t out_channels, const float* x,
                  const float* weights, const float* bias, float* y, const ParallelForFn& parallel_for);

// The two halves of WinogradConv, so that constant weights are transformed once:
// WinogradPackWeights writes the alpha^2 packed GEMM operands U[xi] ([out_channels,
// channels]) of weights ([out_channels, channels, 3, 3]) into *packed (resized;
// reusing its memory), and WinogradConvPacked runs the convolution on them.
void WinogradPackWeights(int tile, int64_t channels, int64_t out_channels, const float* weights,
                         const ParallelForFn& parallel_for, std::vector<SgemmPackedA>* packed);
void WinogradConvPacked(const Window3d& w, int tile, int64_t batch, int64_t channels, int64_t out_channels,
                        const std::vector<SgemmPackedA>& packed, const float* x, const float* bias, float* y,
                        const ParallelForFn& parallel_for);

}  // namespace tsr

#endif  // TESSERA_KERNELS_CPU_CONV_WINOGRAD_H_

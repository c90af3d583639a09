// The Avx2 steps of the channel-blocked Winograd convolution
// (conv_blocked_winograd_row.h): conv_blocked_winograd_simd.h over pairs of __m256, product
// strips as wide as kBlockedWinogradMaxWidthAvx2.
#include "kernels/cpu/channel_block_simd.h"
#include "kernels/cpu/conv_blocked_winograd_simd.h"

namespace tsr {

using BlockedWinogradAvx2 = blocked_winograd_internal::WinogradKernel<Avx2Block, kBlockedWinogradMaxWidthAvx2>;

void BlockedWinogradInputAvx2(const BlockedWinogradInput& r) { BlockedWinogradAvx2::InputStep(r); }
void BlockedWinogradProductAvx2(const BlockedWinogradProduct& r) { BlockedWinogradAvx2::ProductStep(r); }
void BlockedWinogradOutputAvx2(const BlockedWinogradOutput& r) { BlockedWinogradAvx2::OutputStep(r); }

}  // namespace tsr

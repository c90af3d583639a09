// The Avx512 steps of the channel-blocked Winograd convolution
// (conv_blocked_winograd_row.h): conv_blocked_winograd_simd.h over __m512, product
// strips as wide as kBlockedWinogradMaxWidthAvx512.
#include "kernels/cpu/channel_block_simd.h"
#include "kernels/cpu/conv_blocked_winograd_simd.h"

namespace tsr {

using BlockedWinogradAvx512 = blocked_winograd_internal::WinogradKernel<Avx512Block, kBlockedWinogradMaxWidthAvx512>;

void BlockedWinogradInputAvx512(const BlockedWinogradInput& r) { BlockedWinogradAvx512::InputStep(r); }
void BlockedWinogradProductAvx512(const BlockedWinogradProduct& r) { BlockedWinogradAvx512::ProductStep(r); }
void BlockedWinogradOutputAvx512(const BlockedWinogradOutput& r) { BlockedWinogradAvx512::OutputStep(r); }

}  // namespace tsr

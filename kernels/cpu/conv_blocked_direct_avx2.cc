// BlockedDirectRowAvx2 (conv_blocked_direct_row.h): the kernel of
// conv_blocked_direct_simd.h over pairs of __m256, strips as wide as
// kBlockedDirectMaxWidthAvx2; a single block of at most 8 channels over one __m256.
#include "kernels/cpu/channel_block_simd.h"
#include "kernels/cpu/conv_blocked_direct_simd.h"

namespace tsr {

void BlockedDirectRowAvx2(const BlockedDirectRow& r) {
  if (r.out_blocks == 1 && r.last_block_lanes <= 8) {
    // One block whose lanes past 8 are padding: the low half's sums only.
    BlockedDirectRow half = r;
    half.max_width = kBlockedDirectMaxWidthAvx2Half[1];
    blocked_direct_internal::DirectKernel<Avx2HalfBlock, kBlockedDirectMaxWidthAvx2Half>::Row(half);
    return;
  }
  blocked_direct_internal::DirectKernel<Avx2Block, kBlockedDirectMaxWidthAvx2>::Row(r);
}

}  // namespace tsr

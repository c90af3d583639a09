// BlockedDirectRowAvx2 (conv_blocked_direct_row.h): the kernel of
// conv_blocked_direct_simd.h over pairs of __m256, strips as wide as
// kBlockedDirectMaxWidthAvx2.
#include "kernels/cpu/channel_block_simd.h"
#include "kernels/cpu/conv_blocked_direct_simd.h"

namespace tsr {

void BlockedDirectRowAvx2(const BlockedDirectRow& r) {
  blocked_direct_internal::DirectKernel<Avx2Block, kBlockedDirectMaxWidthAvx2>::Row(r);
}

}  // namespace tsr

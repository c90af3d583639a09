// BlockedDirectRowAvx512 (conv_blocked_direct_row.h): the kernel of
// conv_blocked_direct_simd.h over __m512, strips as wide as kBlockedDirectMaxWidthAvx512.
#include "kernels/cpu/channel_block_simd.h"
#include "kernels/cpu/conv_blocked_direct_simd.h"

namespace tsr {

void BlockedDirectRowAvx512(const BlockedDirectRow& r) {
  blocked_direct_internal::DirectKernel<Avx512Block, kBlockedDirectMaxWidthAvx512>::Row(r);
}

}  // namespace tsr

// BlockedDepthwiseRowsAvx2 (conv_blocked_depthwise_row.h): the loops of
// conv_blocked_depthwise_simd.h over pairs of __m256.
#include "kernels/cpu/channel_block_simd.h"
#include "kernels/cpu/conv_blocked_depthwise_simd.h"

namespace tsr {

void BlockedDepthwiseRowsAvx2(const BlockedDepthwiseRows& r) {
  blocked_depthwise_internal::DepthwiseKernel<Avx2Block>::Rows(r);
}

}  // namespace tsr

// BlockedDepthwiseRowsAvx512 (conv_blocked_depthwise_row.h): the loops of
// conv_blocked_depthwise_simd.h over __m512.
#include "kernels/cpu/channel_block_simd.h"
#include "kernels/cpu/conv_blocked_depthwise_simd.h"

namespace tsr {

void BlockedDepthwiseRowsAvx512(const BlockedDepthwiseRows& r) {
  blocked_depthwise_internal::DepthwiseKernel<Avx512Block>::Rows(r);
}

}  // namespace tsr

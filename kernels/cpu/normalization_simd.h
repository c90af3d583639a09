// The inner loops of the f32 normalization kernels (normalization_kernels.cc), one
// table per ISA level: portable (normalization_scalar.cc) and AVX2
// (normalization_avx2.cc, used only after runtime detection).
#ifndef TESSERA_KERNELS_CPU_NORMALIZATION_SIMD_H_
#define TESSERA_KERNELS_CPU_NORMALIZATION_SIMD_H_

#include <cstdint>

namespace tsr {
namespace normalization_internal {

struct NormalizationIsaKernels {
  // The sum of p[0, n).
  double (*sum)(const float* p, int64_t n);
  // The sum of (p[i] - mean)^2 over i < n.
  double (*squared_deviation_sum)(const float* p, int64_t n, float mean);
  // y[i] = (x[i] - mean) * mul + add: BatchNormalization on one plane of a channel.
  void (*normalize_plane)(const float* x, int64_t n, float mean, float mul, float add, float* y);
  // y[i] = ((x[i] - mean) - mean_low) * inv_std * scale[i] + bias[i]: LayerNormalization
  // on a row; mean + mean_low is the row mean to twice f32 precision (x - mean is exact
  // for x near the mean, which keeps rows with a large mean accurate).
  void (*normalize_row)(const float* x, int64_t n, float mean, float mean_low, float inv_std, const float* scale,
                        const float* bias, float* y);
};

const NormalizationIsaKernels& ScalarNormalizationKernels();
const NormalizationIsaKernels& Avx2NormalizationKernels();

}  // namespace normalization_internal
}  // namespace tsr

#endif  // TESSERA_KERNELS_CPU_NORMALIZATION_SIMD_H_

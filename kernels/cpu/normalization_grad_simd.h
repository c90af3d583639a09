// The inner loops of the f32 normalization gradients (normalization_grad_kernels.cc),
// one table per ISA level: portable (normalization_grad_scalar.cc) and AVX2
// (normalization_grad_avx2.cc, used only after runtime detection). The plain sum for
// the mean is the forward kernels' (normalization_simd.h).
#ifndef TESSERA_KERNELS_CPU_NORMALIZATION_GRAD_SIMD_H_
#define TESSERA_KERNELS_CPU_NORMALIZATION_GRAD_SIMD_H_

#include <cstdint>

namespace tsr {
namespace normalization_grad_internal {

// The three sums of one stretch of a group (a LayerNorm row, a BatchNorm plane),
// taken around the group's f32 mean. A trivial aggregate (no member initializers),
// so the AVX2 file instantiates no inline constructor that the scalar path could share.
struct CenteredSums {
  double squares;  // sum of (x - mean)^2
  double g;        // sum of g
  double g_times;  // sum of g * (x - mean)
};

struct NormalizationGradIsaKernels {
  // The CenteredSums of x[0, n) and g[0, n) around `mean`.
  CenteredSums (*centered_sums)(const float* x, const float* g, int64_t n, float mean);
  // xhat[i] = ((x[i] - mean) - mean_low) * inv_std and
  // dx[i] = (g[i] - mean_g - xhat[i] * mean_gx) * inv_std, where mean + mean_low is
  // the group mean to twice f32 precision. x[i] and g[i] are read before dx[i] and
  // xhat[i] are written, so either output may alias either input.
  void (*backward)(const float* x, const float* g, int64_t n, float mean, float mean_low, float inv_std, float mean_g,
                   float mean_gx, float* dx, float* xhat);
};

const NormalizationGradIsaKernels& ScalarNormalizationGradKernels();
const NormalizationGradIsaKernels& Avx2NormalizationGradKernels();

}  // namespace normalization_grad_internal
}  // namespace tsr

#endif  // TESSERA_KERNELS_CPU_NORMALIZATION_GRAD_SIMD_H_

// The portable inner loops of the f32 normalization gradients (see
// normalization_grad_simd.h); sums accumulate in double, as in the reference kernel.
#include <cstdint>

#include "kernels/cpu/normalization_grad_simd.h"

namespace tsr {
namespace normalization_grad_internal {

namespace {

CenteredSums SumsAround(const float* x, const float* g, int64_t n, float mean) {
  CenteredSums s{0.0, 0.0, 0.0};
  for (int64_t i = 0; i < n; ++i) {
    const double d = static_cast<double>(x[i]) - mean;
    s.squares += d * d;
    s.g += g[i];
    s.g_times += g[i] * d;
  }
  return s;
}

void Backward(const float* x, const float* g, int64_t n, float mean, float mean_low, float inv_std, float mean_g,
              float mean_gx, float* dx, float* xhat) {
  for (int64_t i = 0; i < n; ++i) {
    const float xi = x[i], gi = g[i];
    const float normalized = ((xi - mean) - mean_low) * inv_std;
    dx[i] = (gi - mean_g - normalized * mean_gx) * inv_std;
    xhat[i] = normalized;
  }
}

}  // namespace

const NormalizationGradIsaKernels& ScalarNormalizationGradKernels() {
  static constexpr NormalizationGradIsaKernels kKernels = {SumsAround, Backward};
  return kKernels;
}

}  // namespace normalization_grad_internal
}  // namespace tsr

// The portable inner loops of the f32 normalizations (see normalization_simd.h);
// statistics accumulate in double, as in the reference kernel.
#include <cstdint>

#include "kernels/cpu/normalization_simd.h"

namespace tsr {
namespace normalization_internal {

namespace {

double Sum(const float* p, int64_t n) {
  double acc = 0.0;
  for (int64_t i = 0; i < n; ++i) acc += p[i];
  return acc;
}

double SquaredDeviationSum(const float* p, int64_t n, float mean) {
  double acc = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const double d = static_cast<double>(p[i]) - mean;
    acc += d * d;
  }
  return acc;
}

void NormalizePlane(const float* x, int64_t n, float mean, float mul, float add, float* y) {
  for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - mean) * mul + add;
}

void NormalizeRow(const float* x, int64_t n, float mean, float mean_low, float inv_std, const float* scale,
                  const float* bias, float* y) {
  for (int64_t i = 0; i < n; ++i) y[i] = ((x[i] - mean) - mean_low) * inv_std * scale[i] + bias[i];
}

}  // namespace

const NormalizationIsaKernels& ScalarNormalizationKernels() {
  static constexpr NormalizationIsaKernels kKernels = {Sum, SquaredDeviationSum, NormalizePlane, NormalizeRow};
  return kKernels;
}

}  // namespace normalization_internal
}  // namespace tsr

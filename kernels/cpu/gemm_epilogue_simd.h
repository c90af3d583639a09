// The GEMM epilogue's elementwise part on one row of C, written once over the vector
// width for gemm_avx2.cc and gemm_avx512.cc (the driver's portable loop otherwise):
//   c[j] = relu?(c[j] + bias[j] + row_bias) + residual[j]
// each term only when given, in that order. Every operation is an IEEE add or a max
// with zero (which, like the portable x > 0 ? x : 0, maps NaN and -0 to +0), so the
// vector lanes and the scalar tail give exactly the portable loop's bits.
//
// Included ONLY by the per-ISA files (see gemm_microkernel_simd.h for why everything
// here has internal linkage). Traits V as there, plus Max(x, y) (x > y ? x : y, else y).
#ifndef TESSERA_KERNELS_CPU_GEMM_EPILOGUE_SIMD_H_
#define TESSERA_KERNELS_CPU_GEMM_EPILOGUE_SIMD_H_

#include <cstdint>

namespace tsr {
namespace gemm_internal {
namespace {

template <class V>
struct SimdEpilogueRow {
  using T = typename V::T;
  static constexpr int kW = V::kWidth;

  static inline float One(float x, const float* bias, const float* row_bias, bool relu, const float* residual,
                          int64_t j) {
    if (bias != nullptr) x += bias[j];
    if (row_bias != nullptr) x += *row_bias;
    if (relu) x = x > 0.0f ? x : 0.0f;
    if (residual != nullptr) x += residual[j];
    return x;
  }

  static void Row(float* c, int64_t n, const float* bias, const float* row_bias, bool relu, const float* residual) {
    const T zero = V::Zero();
    const T rb = V::Set1(row_bias != nullptr ? *row_bias : 0.0f);
    int64_t j = 0;
    for (; j + kW <= n; j += kW) {
      T x = V::LoadU(c + j);
      if (bias != nullptr) x = V::Add(x, V::LoadU(bias + j));
      if (row_bias != nullptr) x = V::Add(x, rb);
      if (relu) x = V::Max(x, zero);
      if (residual != nullptr) x = V::Add(x, V::LoadU(residual + j));
      V::StoreU(c + j, x);
    }
    for (; j < n; ++j) c[j] = One(c[j], bias, row_bias, relu, residual, j);
  }
};

}  // namespace
}  // namespace gemm_internal
}  // namespace tsr

#endif  // TESSERA_KERNELS_CPU_GEMM_EPILOGUE_SIMD_H_

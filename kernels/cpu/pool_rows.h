// Vectorized inner loops of the 2-D MaxPool / AveragePool (pool_rows_avx2.cc, and
// pool_rows_avx512.cc for ResNet's stem pool): eight (or sixteen) adjacent outputs of
// one output row at a time, over the interior columns whose window taps all lie inside
// the input row (edge columns stay on the scalar loop).
// Plain extern entry points only, so the ISA file includes nothing else.
#ifndef TESSERA_KERNELS_CPU_POOL_ROWS_H_
#define TESSERA_KERNELS_CPU_POOL_ROWS_H_

#include <cstdint>

namespace tsr {

// The window rows and columns of `n` (at least 8) consecutive outputs: input
// rows ih_first + i * dilation_h for i < kh_count of plane x (row length in_w); the
// first output's taps start at column iw_first, step dilation_w, kw_count of them;
// consecutive outputs move stride_w columns.
struct PoolRowSpan {
  const float* x;
  int64_t in_w;
  int64_t ih_first, kh_count, dilation_h;
  int64_t iw_first, kw_count, dilation_w, stride_w;
  int64_t n;
};

// y[j] = max over the taps (the first maximum in row-major tap order; a NaN first tap
// stays); indices[j] = index_base + ih * ih_mul + iw * iw_mul of that tap, where every
// ih * ih_mul + iw * iw_mul must fit in int32 -- or, with indices null, none.
void MaxPoolRowAvx2(const PoolRowSpan& s, float* y, int64_t* indices, int64_t index_base, int64_t ih_mul,
                    int64_t iw_mul);

// MaxPoolRowAvx2 without indices for kw_count 3, stride_w 2, dilation_w 1 (ResNet's 3x3/2
// stem pool) and n at least 16, sixteen outputs at a time in AVX-512F: the same floats.
void MaxPoolRow3Stride2Avx512(const PoolRowSpan& s, float* y);

// The whole 2x2, stride 2, unpadded max pool of one plane x [in_h, in_w] into y
// [out_h, out_w] (out_h <= in_h / 2, out_w <= in_w / 2), without indices: the first
// maximum in row-major tap order, as MaxPoolRowAvx2, eight outputs per step from two
// row loads each (LeNet's pools: too narrow for the row loop's interior).
void MaxPool2x2PlaneAvx2(const float* x, int64_t in_w, int64_t out_h, int64_t out_w, float* y);

// The 2x2, stride 2, unpadded MaxPoolGrad of one plane: dx [in_h, in_w] gets dy [out_h,
// out_w] (out_h <= in_h / 2, out_w <= in_w / 2) at the first maximum of each window of x,
// as MaxPool2x2PlaneAvx2 picks it, and zero everywhere else (0 + dy: the bits of a zero
// fill plus dy), eight windows per step.
void MaxPoolGrad2x2PlaneAvx2(const float* x, const float* dy, int64_t in_h, int64_t in_w, int64_t out_h, int64_t out_w,
                             float* dx);

// y[j] = (sum of the taps in row-major order) / divisor.
void AveragePoolRowAvx2(const PoolRowSpan& s, float divisor, float* y);

}  // namespace tsr

#endif  // TESSERA_KERNELS_CPU_POOL_ROWS_H_

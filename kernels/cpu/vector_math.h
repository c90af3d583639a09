// Array math for the f32 CPU kernels: transcendental functions and activations over
// arrays (y[i] = f(x[i]); y may equal x), and the row primitives of Softmax. A scalar
// flavour computes in double with std:: functions and rounds once, as the reference
// kernels do; the AVX2 flavour uses range reduction and polynomials accurate to a few
// ulp (each function's measured bound is stated in vector_math_avx2.cc and asserted
// by tests/kernels/cpu/vector_math_test.cc). Both give the reference's results for
// +-inf, NaN, overflow and underflow.
#ifndef TESSERA_KERNELS_CPU_VECTOR_MATH_H_
#define TESSERA_KERNELS_CPU_VECTOR_MATH_H_

#include <cstdint>

#include "kernels/cpu/cpu_features.h"

namespace tsr {

using VecUnaryFn = void (*)(const float* x, float* y, int64_t n);

struct VectorMath {
  VecUnaryFn exp, log, tanh, erf;
  VecUnaryFn sigmoid;    // 1 / (1 + e^-x)
  VecUnaryFn silu;       // x * sigmoid(x)
  VecUnaryFn softplus;   // log(1 + e^x)
  VecUnaryFn gelu_tanh;  // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
  VecUnaryFn gelu_erf;   // 0.5 x (1 + erf(x / sqrt(2)))
  // max of x[0..n) (n >= 1; NaNs may or may not propagate).
  float (*max)(const float* x, int64_t n);
  // y[i] = exp(x[i] - shift); returns the sum of the y[i] (accumulated in double, in an
  // order that depends only on n).
  double (*exp_shifted_sum)(const float* x, float shift, float* y, int64_t n);
  // y[i] = exp(x[i] - shift[i]).
  void (*exp_sub)(const float* x, const float* shift, float* y, int64_t n);
};

// The functions for `isa` (AVX-512 machines get the AVX2 ones).
const VectorMath& VectorMathFor(CpuIsa isa);

// The entry point of vector_math_avx2.cc (call only when AVX2 is supported).
const VectorMath& VectorMathAvx2();

}  // namespace tsr

#endif  // TESSERA_KERNELS_CPU_VECTOR_MATH_H_

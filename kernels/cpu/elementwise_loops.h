// The inner loops of the f32 elementwise kernels: one function per op that runs over
// one contiguous run of the output, in a scalar and an AVX2 flavour, gathered in a
// table chosen once per kernel call by ISA level. The broadcasting iteration
// (elementwise_broadcast.h) calls a row function per run of the output, never per
// element.
//
// Every row function is exact: it gives the reference kernel's result bit for bit
// (NaN payloads aside), so tails, vector bodies and every ISA agree and results do
// not depend on how a ParallelFor split the range. `out` may alias an input read
// with step 1.
#ifndef TESSERA_KERNELS_CPU_ELEMENTWISE_LOOPS_H_
#define TESSERA_KERNELS_CPU_ELEMENTWISE_LOOPS_H_

#include <cstdint>

#include "kernels/cpu/cpu_features.h"

namespace tsr {

// out[i] = f(a[i * a_step], b[i * b_step]) for i in [0, n); steps are 0 or 1.
using BinaryRowFn = void (*)(const float* a, int64_t a_step, const float* b, int64_t b_step, float* out, int64_t n);
// The same with a bool result (comparisons).
using CompareRowFn = void (*)(const float* a, int64_t a_step, const float* b, int64_t b_step, bool* out, int64_t n);
// out[i] = cond[i * c_step] ? x[i * x_step] : y[i * y_step].
using WhereRowFn = void (*)(const bool* cond, int64_t c_step, const float* x, int64_t x_step, const float* y,
                            int64_t y_step, float* out, int64_t n);
// y[i] = f(x[i]).
using UnaryRowFn = void (*)(const float* x, float* y, int64_t n);
// y[i] = f(x[i], param) for one double parameter (LeakyRelu's alpha).
using UnaryParamRowFn = void (*)(const float* x, float* y, int64_t n, double param);
// y[i] = min(max(x[i], lo), hi) as ONNX Clip: NaN stays NaN; an absent bound is +-inf.
using ClipRowFn = void (*)(const float* x, float* y, int64_t n, float lo, float hi);

struct ElementwiseLoops {
  // Arithmetic as IEEE f32 (the reference's double computation rounds to the same).
  BinaryRowFn add, sub, mul, div;
  // Max/Min of two values, NaN winning and a tie keeping `a` (the reference's fold).
  BinaryRowFn max, min;
  CompareRowFn equal, less, greater;  // ordered: NaN compares false
  WhereRowFn where;
  UnaryRowFn abs, neg, sqrt, reciprocal;
  UnaryRowFn rsqrt;            // 1 / sqrt(x) computed in double, rounded once
  UnaryRowFn relu;             // x < 0 ? 0 : x (keeps -0 and NaN)
  UnaryParamRowFn leaky_relu;  // x >= 0 ? x : alpha * x, the product in double
  ClipRowFn clip;
};

// The loops for `isa` (capped to what was compiled and is supported).
const ElementwiseLoops& ElementwiseLoopsFor(CpuIsa isa);

// The entry point of elementwise_loops_avx2.cc (call only when AVX2 is supported).
const ElementwiseLoops& ElementwiseLoopsAvx2();

}  // namespace tsr

#endif  // TESSERA_KERNELS_CPU_ELEMENTWISE_LOOPS_H_

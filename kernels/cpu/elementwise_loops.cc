// Portable (scalar) elementwise row loops and the ISA dispatch of the table declared
// in elementwise_loops.h. Written as the reference computes, so results agree bit for
// bit with it and with the AVX2 loops.
#include "kernels/cpu/elementwise_loops.h"

#include <cmath>
#include <cstdint>

namespace tsr {

namespace {

template <typename F>
void Binary(const float* a, int64_t as, const float* b, int64_t bs, float* out, int64_t n, F f) {
  for (int64_t i = 0; i < n; ++i) out[i] = f(a[i * as], b[i * bs]);
}

template <typename F>
void Compare(const float* a, int64_t as, const float* b, int64_t bs, bool* out, int64_t n, F f) {
  for (int64_t i = 0; i < n; ++i) out[i] = f(a[i * as], b[i * bs]);
}

template <typename F>
void Unary(const float* x, float* y, int64_t n, F f) {
  for (int64_t i = 0; i < n; ++i) y[i] = f(x[i]);
}

void AddRow(const float* a, int64_t as, const float* b, int64_t bs, float* out, int64_t n) {
  Binary(a, as, b, bs, out, n, [](float x, float y) { return x + y; });
}
void SubRow(const float* a, int64_t as, const float* b, int64_t bs, float* out, int64_t n) {
  Binary(a, as, b, bs, out, n, [](float x, float y) { return x - y; });
}
void MulRow(const float* a, int64_t as, const float* b, int64_t bs, float* out, int64_t n) {
  Binary(a, as, b, bs, out, n, [](float x, float y) { return x * y; });
}
void DivRow(const float* a, int64_t as, const float* b, int64_t bs, float* out, int64_t n) {
  Binary(a, as, b, bs, out, n, [](float x, float y) { return x / y; });
}
void MaxRow(const float* a, int64_t as, const float* b, int64_t bs, float* out, int64_t n) {
  Binary(a, as, b, bs, out, n, [](float x, float y) {
    if (std::isnan(x)) return x;
    if (std::isnan(y)) return y;
    return y > x ? y : x;
  });
}
void MinRow(const float* a, int64_t as, const float* b, int64_t bs, float* out, int64_t n) {
  Binary(a, as, b, bs, out, n, [](float x, float y) {
    if (std::isnan(x)) return x;
    if (std::isnan(y)) return y;
    return y < x ? y : x;
  });
}
void EqualRow(const float* a, int64_t as, const float* b, int64_t bs, bool* out, int64_t n) {
  Compare(a, as, b, bs, out, n, [](float x, float y) { return x == y; });
}
void LessRow(const float* a, int64_t as, const float* b, int64_t bs, bool* out, int64_t n) {
  Compare(a, as, b, bs, out, n, [](float x, float y) { return x < y; });
}
void GreaterRow(const float* a, int64_t as, const float* b, int64_t bs, bool* out, int64_t n) {
  Compare(a, as, b, bs, out, n, [](float x, float y) { return x > y; });
}
void WhereRow(const bool* c, int64_t cs, const float* x, int64_t xs, const float* y, int64_t ys, float* out,
              int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = c[i * cs] ? x[i * xs] : y[i * ys];
}
void AbsRow(const float* x, float* y, int64_t n) {
  Unary(x, y, n, [](float v) { return std::fabs(v); });
}
void NegRow(const float* x, float* y, int64_t n) {
  Unary(x, y, n, [](float v) { return -v; });
}
void SqrtRow(const float* x, float* y, int64_t n) {
  Unary(x, y, n, [](float v) { return std::sqrt(v); });
}
void ReciprocalRow(const float* x, float* y, int64_t n) {
  Unary(x, y, n, [](float v) { return 1.0f / v; });
}
void RsqrtRow(const float* x, float* y, int64_t n) {
  Unary(x, y, n, [](float v) { return static_cast<float>(1.0 / std::sqrt(static_cast<double>(v))); });
}
void ReluRow(const float* x, float* y, int64_t n) {
  Unary(x, y, n, [](float v) { return v < 0 ? 0.0f : v; });
}
void LeakyReluRow(const float* x, float* y, int64_t n, double alpha) {
  Unary(x, y, n, [alpha](float v) { return v >= 0 ? v : static_cast<float>(alpha * v); });
}
void ClipRow(const float* x, float* y, int64_t n, float lo, float hi) {
  Unary(x, y, n, [lo, hi](float v) {
    if (v < lo) v = lo;
    if (hi < v) v = hi;
    return v;
  });
}

constexpr ElementwiseLoops kScalarLoops = {
    .add = AddRow,
    .sub = SubRow,
    .mul = MulRow,
    .div = DivRow,
    .max = MaxRow,
    .min = MinRow,
    .equal = EqualRow,
    .less = LessRow,
    .greater = GreaterRow,
    .where = WhereRow,
    .abs = AbsRow,
    .neg = NegRow,
    .sqrt = SqrtRow,
    .reciprocal = ReciprocalRow,
    .rsqrt = RsqrtRow,
    .relu = ReluRow,
    .leaky_relu = LeakyReluRow,
    .clip = ClipRow,
};

}  // namespace

const ElementwiseLoops& ElementwiseLoopsFor(CpuIsa isa) {
  // AVX-512 machines run the AVX2 loops (no AVX-512 variant is written).
  if (SupportedCpuIsa(isa) >= CpuIsa::kAvx2) return ElementwiseLoopsAvx2();
  return kScalarLoops;
}

}  // namespace tsr

// The portable inner loops of the f32 reductions (see reduction_simd.h). Sums
// accumulate in double, as the reference kernel does, so this level matches it to
// the final rounding.
#include <cmath>
#include <cstdint>
#include <limits>

#include "kernels/cpu/reduction_simd.h"

namespace tsr {
namespace reduction_internal {

namespace {

// The reference's Max/Min step: NaN is sticky, nothing compares past it.
inline double Combine(FloatReduceKind kind, double acc, double x) {
  switch (kind) {
    case FloatReduceKind::kSum:
      return acc + x;
    case FloatReduceKind::kMax:
      return (std::isnan(x) || x > acc) ? x : acc;
    case FloatReduceKind::kMin:
      return (std::isnan(x) || x < acc) ? x : acc;
  }
  return acc;
}

inline double Identity(FloatReduceKind kind) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  return kind == FloatReduceKind::kSum ? 0.0 : kind == FloatReduceKind::kMax ? -kInf : kInf;
}

float ReduceRuns(FloatReduceKind kind, const float* base, const int64_t* run_offsets, int64_t runs, int64_t len,
                 double divisor) {
  double acc = Identity(kind);
  for (int64_t r = 0; r < runs; ++r) {
    const float* p = base + run_offsets[r];
    for (int64_t i = 0; i < len; ++i) acc = Combine(kind, acc, p[i]);
  }
  if (kind == FloatReduceKind::kSum) acc /= divisor;
  return static_cast<float>(acc);
}

void ReduceRows(FloatReduceKind kind, const float* base, const int64_t* row_offsets, int64_t rows, int64_t width,
                double divisor, float* out) {
  double acc[kColumnBlock];
  for (int64_t j = 0; j < width; ++j) acc[j] = Identity(kind);
  for (int64_t r = 0; r < rows; ++r) {
    const float* p = base + row_offsets[r];
    for (int64_t j = 0; j < width; ++j) acc[j] = Combine(kind, acc[j], p[j]);
  }
  for (int64_t j = 0; j < width; ++j) {
    out[j] = static_cast<float>(kind == FloatReduceKind::kSum ? acc[j] / divisor : acc[j]);
  }
}

// True when x replaces best (the reference's ArgMaxReplaces).
inline bool Replaces(float x, float best, bool last) {
  if (std::isnan(best)) return last && std::isnan(x);
  if (std::isnan(x)) return true;
  return last ? x >= best : x > best;
}

int64_t ArgMaxContiguous(const float* p, int64_t n, bool last) {
  int64_t best = 0;
  for (int64_t k = 1; k < n; ++k) {
    if (Replaces(p[k], p[best], last)) best = k;
  }
  return best;
}

// Row by row (memory order), keeping the best value and index of each column.
void ArgMaxColumns(const float* p, int64_t n, int64_t stride, int64_t width, bool last, int64_t* out) {
  float best[kColumnBlock];
  for (int64_t j = 0; j < width; ++j) best[j] = p[j], out[j] = 0;
  for (int64_t k = 1; k < n; ++k) {
    const float* row = p + k * stride;
    for (int64_t j = 0; j < width; ++j) {
      if (Replaces(row[j], best[j], last)) best[j] = row[j], out[j] = k;
    }
  }
}

}  // namespace

const ReductionIsaKernels& ScalarReductionKernels() {
  static constexpr ReductionIsaKernels kKernels = {ReduceRuns, ReduceRows, ArgMaxContiguous, ArgMaxColumns};
  return kKernels;
}

}  // namespace reduction_internal
}  // namespace tsr

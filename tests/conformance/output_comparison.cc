// CompareOutput: the ONNX backend tests' notion of "same output" (output_comparison.h).
#include "tests/conformance/output_comparison.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace tsr::conformance {

namespace {

// "[1,0,2]" for flat index 5 of shape [2,2,3]; "[]" for a scalar.
std::string MultiIndex(const Shape& shape, int64_t flat) {
  std::vector<int64_t> index(shape.rank());
  for (int d = shape.rank() - 1; d >= 0; --d) {
    const int64_t dim = shape.dim(d);
    index[d] = dim > 0 ? flat % dim : 0;
    flat = dim > 0 ? flat / dim : 0;
  }
  return absl::StrCat("[", absl::StrJoin(index, ","), "]");
}

bool FloatsMatch(double expected, double actual, const Tolerance& tol) {
  if (std::isnan(expected) || std::isnan(actual)) return std::isnan(expected) && std::isnan(actual);
  if (std::isinf(expected) || std::isinf(actual)) return expected == actual;
  return std::fabs(actual - expected) <= tol.atol + tol.rtol * std::fabs(expected);
}

absl::Status CompareFloats(const Tensor& expected, const Tensor& actual, const Tolerance& tol) {
  int64_t mismatches = 0, worst = -1;
  double max_abs = 0, max_rel = 0, worst_excess = -1;
  for (int64_t i = 0; i < expected.num_elements(); ++i) {
    const double e = expected.GetAsDouble(i), a = actual.GetAsDouble(i);
    if (FloatsMatch(e, a, tol)) continue;
    ++mismatches;
    const double abs_diff = std::fabs(a - e);  // NaN or inf where one side is
    const double rel_diff = e != 0 ? abs_diff / std::fabs(e) : INFINITY;
    if (!std::isnan(abs_diff)) {
      max_abs = std::max(max_abs, abs_diff);
      max_rel = std::max(max_rel, rel_diff);
    }
    // The worst element exceeds its allowance most; NaN/inf mismatches count as worst.
    const double excess = std::isfinite(abs_diff) ? abs_diff - (tol.atol + tol.rtol * std::fabs(e)) : INFINITY;
    if (worst < 0 || excess > worst_excess) {
      worst = i;
      worst_excess = excess;
    }
  }
  if (mismatches == 0) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrFormat(
      "%d of %d values differ (rtol %g, atol %g); max abs diff %.4g, max rel diff %.4g; at %s expected %.9g, got %.9g",
      mismatches, expected.num_elements(), tol.rtol, tol.atol, max_abs, max_rel, MultiIndex(expected.shape(), worst),
      expected.GetAsDouble(worst), actual.GetAsDouble(worst)));
}

absl::Status CompareExactly(const Tensor& expected, const Tensor& actual) {
  int64_t mismatches = 0, first = -1;
  for (int64_t i = 0; i < expected.num_elements(); ++i) {
    if (expected.GetAsInt64(i) == actual.GetAsInt64(i)) continue;
    if (mismatches++ == 0) first = i;
  }
  if (mismatches == 0) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(mismatches, " of ", expected.num_elements(),
                                                 " values differ (exact comparison); first at ",
                                                 MultiIndex(expected.shape(), first), ": expected ",
                                                 expected.GetAsInt64(first), ", got ", actual.GetAsInt64(first)));
}

}  // namespace

absl::Status CompareOutput(const Tensor& expected, const Tensor& actual, const Tolerance& tolerance) {
  if (expected.dtype() != actual.dtype()) {
    return absl::InvalidArgumentError(
        absl::StrCat("dtype ", DTypeName(actual.dtype()), " where ", DTypeName(expected.dtype()), " is expected"));
  }
  if (!(expected.shape() == actual.shape())) {
    return absl::InvalidArgumentError(
        absl::StrCat("shape ", actual.shape().ToString(), " where ", expected.shape().ToString(), " is expected"));
  }
  return IsFloating(expected.dtype()) ? CompareFloats(expected, actual, tolerance) : CompareExactly(expected, actual);
}

}  // namespace tsr::conformance

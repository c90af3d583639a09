// Comparison of a computed output with the expected one, as the ONNX backend tests do.
//
// dtype and shape must be equal. Floating-point values (f32, f64, f16, bf16) are
// compared like numpy.testing.assert_allclose(actual, expected, rtol, atol) with
// equal_nan: |actual - expected| <= atol + rtol * |expected|, NaN equals NaN and an
// infinity only equals the same infinity. Integers and bools must be exactly equal
// (the ONNX runner's tolerance would let large integers differ).
#ifndef TESSERA_TESTS_CONFORMANCE_OUTPUT_COMPARISON_H_
#define TESSERA_TESTS_CONFORMANCE_OUTPUT_COMPARISON_H_

#include "absl/status/status.h"
#include "graph/tensor.h"

namespace tsr::conformance {

struct Tolerance {
  double rtol = 1e-3;  // onnx.backend.test.runner's defaults
  double atol = 1e-7;
};

// OK when `actual` matches `expected`; otherwise one line naming the dtype or shape
// difference, or how many elements differ, the maximum absolute and relative
// difference and the worst element (index, expected and actual value).
absl::Status CompareOutput(const Tensor& expected, const Tensor& actual, const Tolerance& tolerance = {});

}  // namespace tsr::conformance

#endif  // TESSERA_TESTS_CONFORMANCE_OUTPUT_COMPARISON_H_

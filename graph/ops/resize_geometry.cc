// Resize's geometry, following the ONNX reference implementation
// (onnx/backend/test/case/node/resize.py) step by step: the source coordinate of each
// output coordinate, the ratio that picks the interpolation coefficients, and the
// window of taps around it read from the input padded in edge mode.
#include "graph/ops/resize_geometry.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace tsr {

namespace {

template <size_t N>
bool OneOf(const std::string& value, const char* const (&known)[N]) {
  return std::find(std::begin(known), std::end(known), value) != std::end(known);
}

constexpr const char* kModes[] = {"nearest", "linear", "cubic"};
constexpr const char* kCoordinateModes[] = {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
                                            "tf_crop_and_resize"};
constexpr const char* kNearestModes[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};

// The interpolation coefficients of the taps for `ratio` in (0, 1]: the distance of the
// source coordinate from the tap just below it (1 when the coordinate is an integer).
void Coefficients(const ResizeAttrs& a, double ratio, double* c) {
  if (a.mode == "nearest") {
    bool high;  // the upper of the two taps
    if (ratio == 1.0) {
      high = true;
    } else if (a.nearest_mode == "round_prefer_floor") {
      high = ratio > 0.5;
    } else if (a.nearest_mode == "round_prefer_ceil") {
      high = ratio >= 0.5;
    } else {
      high = a.nearest_mode == "ceil";
    }
    c[0] = high ? 0.0 : 1.0;
    c[1] = high ? 1.0 : 0.0;
  } else if (a.mode == "linear") {
    c[0] = 1 - ratio;
    c[1] = ratio;
  } else {
    const double A = a.cubic_coeff_a;
    const double r = ratio, q = 1 - ratio;
    c[0] = ((A * (r + 1) - 5 * A) * (r + 1) + 8 * A) * (r + 1) - 4 * A;
    c[1] = ((A + 2) * r - (A + 3)) * r * r + 1;
    c[2] = ((A + 2) * q - (A + 3)) * q * q + 1;
    c[3] = ((A * (q + 1) - 5 * A) * (q + 1) + 8 * A) * (q + 1) - 4 * A;
  }
}

}  // namespace

absl::StatusOr<ResizeAttrs> ReadResizeAttrs(const AttrReader& attrs) {
  ResizeAttrs a;
  a.mode = attrs.GetString("mode");
  a.coordinate_mode = attrs.GetString("coordinate_transformation_mode");
  a.nearest_mode = attrs.GetString("nearest_mode");
  a.cubic_coeff_a = attrs.GetFloat("cubic_coeff_a");
  a.extrapolation_value = attrs.GetFloat("extrapolation_value");
  const int64_t exclude = attrs.GetInt("exclude_outside");
  if (!OneOf(a.mode, kModes)) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown mode '", a.mode, "' (known: ", absl::StrJoin(kModes, ", "), ")"));
  }
  if (!OneOf(a.coordinate_mode, kCoordinateModes)) {
    return absl::InvalidArgumentError(absl::StrCat("unknown coordinate_transformation_mode '", a.coordinate_mode,
                                                   "' (known: ", absl::StrJoin(kCoordinateModes, ", "), ")"));
  }
  if (!OneOf(a.nearest_mode, kNearestModes)) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown nearest_mode '", a.nearest_mode, "' (known: ", absl::StrJoin(kNearestModes, ", "), ")"));
  }
  if (exclude != 0 && exclude != 1) {
    return absl::InvalidArgumentError(absl::StrCat("exclude_outside is ", exclude, " but must be 0 or 1"));
  }
  a.exclude_outside = exclude == 1;
  return a;
}

absl::StatusOr<ResizeSizes> ResizeOutputSizes(const Shape& input, const std::vector<double>& scales,
                                              const std::vector<int64_t>& sizes) {
  const size_t rank = static_cast<size_t>(input.rank());
  if (scales.empty() == sizes.empty()) {
    return absl::InvalidArgumentError("exactly one of 'scales' and 'sizes' must be given (and non-empty)");
  }
  if ((!scales.empty() && scales.size() != rank) || (!sizes.empty() && sizes.size() != rank)) {
    return absl::InvalidArgumentError(absl::StrCat(scales.empty() ? "'sizes'" : "'scales'", " has ",
                                                   scales.empty() ? sizes.size() : scales.size(),
                                                   " values but the input ", input.ToString(), " has rank ", rank));
  }
  ResizeSizes out;
  for (size_t i = 0; i < rank; ++i) {
    const int64_t in = input.dim(static_cast<int>(i));
    int64_t dim;
    double scale;
    if (!sizes.empty()) {
      dim = sizes[i];
      if (dim < 0 || dim > kMaxElements) {
        return absl::InvalidArgumentError(absl::StrCat("sizes[", i, "] is ", dim, " but must be in [0, 2^40]"));
      }
      scale = static_cast<double>(dim) / static_cast<double>(in);
    } else {
      scale = scales[i];
      if (!(scale > 0) || !(scale * static_cast<double>(in) <= static_cast<double>(kMaxElements))) {
        return absl::InvalidArgumentError(absl::StrCat(
            "scales[", i, "] is ", scale, "; scales must be > 0 and keep the output within 2^40 elements"));
      }
      dim = static_cast<int64_t>(std::floor(scale * static_cast<double>(in)));
    }
    if (in == 0 && dim > 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("axis ", i, " of ", input.ToString(), " is empty and cannot be resized to ", dim));
    }
    out.dims.push_back(dim);
    out.scales.push_back(scale);
  }
  return out;
}

ResizeAxisTaps ComputeResizeAxisTaps(const ResizeAttrs& a, int64_t in, int64_t out, double scale, double roi_start,
                                     double roi_end) {
  ResizeAxisTaps t;
  t.taps = a.mode == "cubic" ? 4 : 2;
  const int n = t.taps;
  t.index.resize(static_cast<size_t>(out * n));
  t.weight.resize(static_cast<size_t>(out * n));
  t.extrapolate.assign(static_cast<size_t>(out), false);
  // The reference's output width is scale * in, not the (floored) output size.
  const double width = scale * static_cast<double>(in);
  const double last = static_cast<double>(in - 1);
  const int pad = n / 2;  // edge padding on each side of the input
  for (int64_t o = 0; o < out; ++o) {
    const double x = static_cast<double>(o);
    double src;
    const std::string& m = a.coordinate_mode;
    if (m == "align_corners") {
      src = width == 1 ? 0.0 : x * last / (width - 1);
    } else if (m == "asymmetric") {
      src = x / scale;
    } else if (m == "tf_crop_and_resize") {
      src = width == 1 ? (roi_end - roi_start) * last / 2 : x * (roi_end - roi_start) * last / (width - 1);
      src += roi_start * last;
      if (src < 0 || src > last) {
        t.extrapolate[o] = true;
        src = 0;  // taps unused; keep them valid
      }
    } else if (m == "pytorch_half_pixel") {
      src = width == 1 ? -0.5 : (x + 0.5) / scale - 0.5;
    } else {  // half_pixel
      src = (x + 0.5) / scale - 0.5;
    }
    const double fl = std::floor(src);
    const bool integral = fl == src;
    const double ratio = integral ? 1.0 : src - fl;
    // The tap just below src (src - 1 when src is an integer, so ratio is in (0, 1]).
    const int64_t base = static_cast<int64_t>(integral ? fl - 1 : fl);
    // The n taps nearest src: base - (n/2 - 1) .. base + n/2, shifted to stay within the
    // padded input [-pad, in - 1 + pad] as the reference's search does.
    int64_t start = base - (n / 2 - 1);
    start = std::max<int64_t>(start, -pad);
    start = std::min<int64_t>(start, in - 1 + pad - (n - 1));
    double c[4];
    Coefficients(a, ratio, c);
    if (a.exclude_outside) {
      double sum = 0;
      for (int k = 0; k < n; ++k) {
        if (start + k < 0 || start + k >= in) c[k] = 0;
        sum += c[k];
      }
      for (int k = 0; k < n; ++k) c[k] /= sum;
    }
    for (int k = 0; k < n; ++k) {
      t.index[o * n + k] = std::clamp<int64_t>(start + k, 0, std::max<int64_t>(in - 1, 0));
      t.weight[o * n + k] = c[k];
    }
  }
  return t;
}

}  // namespace tsr

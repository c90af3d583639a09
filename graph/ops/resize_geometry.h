// The geometry of Resize (ONNX opsets 11-18 semantics, as the ONNX reference
// implementation computes it): output sizes from 'scales' or 'sizes', and for each
// output coordinate of each axis the input elements it reads and their weights.
//
// Resize is separable and linear in its input: an output element is the sum, over one
// tap per axis, of the product of the taps' weights times the input element they
// address. Shape inference, the forward kernel and the gradient kernel (which
// scatters with the same weights) all use this one description.
#ifndef TESSERA_GRAPH_OPS_RESIZE_GEOMETRY_H_
#define TESSERA_GRAPH_OPS_RESIZE_GEOMETRY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/attr_reader.h"
#include "graph/shape.h"

namespace tsr {

struct ResizeAttrs {
  std::string mode;             // nearest, linear, cubic
  std::string coordinate_mode;  // half_pixel, pytorch_half_pixel, align_corners, asymmetric, tf_crop_and_resize
  std::string nearest_mode;     // round_prefer_floor, round_prefer_ceil, floor, ceil
  double cubic_coeff_a = -0.75;
  bool exclude_outside = false;
  double extrapolation_value = 0.0;
};

// Reads and validates Resize's attributes; errors say which value is unknown.
absl::StatusOr<ResizeAttrs> ReadResizeAttrs(const AttrReader& attrs);

// The output dims and per-axis scales. Exactly one of `scales` (one float per axis)
// and `sizes` (one int per axis) is non-empty. With sizes, scale = size / input dim;
// with scales, the output dim is floor(input dim * scale). `input` must be static.
struct ResizeSizes {
  std::vector<int64_t> dims;
  std::vector<double> scales;
};
absl::StatusOr<ResizeSizes> ResizeOutputSizes(const Shape& input, const std::vector<double>& scales,
                                              const std::vector<int64_t>& sizes);

// The taps of one axis: output coordinate o reads input index[o * taps + t] with
// weight[o * taps + t] for t < taps, or is the extrapolation value when
// extrapolate[o] (tf_crop_and_resize outside the crop). Indices are in [0, in).
struct ResizeAxisTaps {
  int taps = 1;
  std::vector<int64_t> index;
  std::vector<double> weight;
  std::vector<bool> extrapolate;
};
// `roi_start`/`roi_end` are the axis' crop box (tf_crop_and_resize only).
ResizeAxisTaps ComputeResizeAxisTaps(const ResizeAttrs& attrs, int64_t in, int64_t out, double scale, double roi_start,
                                     double roi_end);

}  // namespace tsr

#endif  // TESSERA_GRAPH_OPS_RESIZE_GEOMETRY_H_

// A sliding window (graph/ops/conv_geometry.h's WindowGeometry) over one to three
// spatial dimensions, recast as exactly three (D, H, W): lower ranks get leading
// dimensions of size 1 with kernel 1, stride 1 and no padding, so the optimized Conv
// and pooling kernels need one loop nest instead of one per rank. Inputs with more
// than three spatial dimensions have no Window3d; those kernels defer to the
// reference ones.
#ifndef TESSERA_KERNELS_CPU_CONV_WINDOW_H_
#define TESSERA_KERNELS_CPU_CONV_WINDOW_H_

#include <algorithm>
#include <cstdint>
#include <optional>

#include "absl/types/span.h"
#include "graph/ops/conv_geometry.h"

namespace tsr {

struct Window3d {
  int64_t in[3];  // spatial input sizes
  int64_t out[3];
  int64_t kernel[3];
  int64_t stride[3];
  int64_t dilation[3];
  int64_t pad_begin[3];
  int64_t pad_end[3];

  int64_t in_size() const { return in[0] * in[1] * in[2]; }
  int64_t out_size() const { return out[0] * out[1] * out[2]; }
  int64_t taps() const { return kernel[0] * kernel[1] * kernel[2]; }

  // The taps k in [lo, hi) of dimension `d` whose input position
  // o * stride - pad_begin + k * dilation lies inside [0, in).
  void ValidTaps(int d, int64_t o, int64_t& lo, int64_t& hi) const {
    const int64_t start = o * stride[d] - pad_begin[d];
    lo = start < 0 ? (-start + dilation[d] - 1) / dilation[d] : 0;
    const int64_t last = in[d] - 1 - start;  // largest k * dilation still inside
    hi = last < 0 ? 0 : std::min(kernel[d], last / dilation[d] + 1);
    lo = std::min(lo, hi);
  }
};

// Nullopt for more than three spatial dimensions.
inline std::optional<Window3d> MakeWindow3d(absl::Span<const int64_t> in_spatial, const WindowGeometry& g) {
  const int n = g.num_spatial();
  if (n > 3 || static_cast<int>(in_spatial.size()) != n) return std::nullopt;
  Window3d w;
  for (int d = 0; d < 3; ++d) {
    const int i = d - (3 - n);  // the geometry's dimension, or < 0 for an added one
    w.in[d] = i < 0 ? 1 : in_spatial[i];
    w.out[d] = i < 0 ? 1 : g.output[i];
    w.kernel[d] = i < 0 ? 1 : g.kernel[i];
    w.stride[d] = i < 0 ? 1 : g.strides[i];
    w.dilation[d] = i < 0 ? 1 : g.dilations[i];
    w.pad_begin[d] = i < 0 ? 0 : g.pads_begin[i];
    w.pad_end[d] = i < 0 ? 0 : g.pads_end[i];
  }
  return w;
}

}  // namespace tsr

#endif  // TESSERA_KERNELS_CPU_CONV_WINDOW_H_

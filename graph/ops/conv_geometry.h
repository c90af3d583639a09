// Sliding-window geometry shared by convolution and pooling: which input positions
// each output position reads, and therefore the spatial output size.
//
// A forward window (Conv, MaxPool, AveragePool) over one spatial dimension of size
// `in` reads, for output position o, the input positions
//   o * stride - pad_begin + k * dilation,  k in [0, kernel)
// (positions outside [0, in) are padding). A transposed window (ConvTranspose)
// scatters input position i to the output positions
//   i * stride - pad_begin + k * dilation,  k in [0, kernel)
// and keeps those in [0, output).
//
// Semantics follow ONNX (latest opset): `pads` is [begin_0, ..., begin_{n-1},
// end_0, ..., end_{n-1}]; auto_pad SAME_UPPER / SAME_LOWER give ceil(in / stride)
// outputs with the odd padding unit at the end / at the beginning; VALID pads
// nothing; ceil_mode (pooling) rounds the output size up but drops a last window
// that would start in the end padding (SAME and VALID sizes do not depend on it).
//
// Only geometry lives here: the functions read attribute maps but know nothing of
// nodes, ops or tensors, so kernels can use them as well as shape inference. Errors are InvalidArgument with
// messages that name the spatial dimension and the offending values; callers add
// the node name.
#ifndef TESSERA_GRAPH_OPS_CONV_GEOMETRY_H_
#define TESSERA_GRAPH_OPS_CONV_GEOMETRY_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "graph/attribute.h"

namespace tsr {

enum class AutoPad { kNotSet, kSameUpper, kSameLower, kValid };

// Parses "NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID" (exact ONNX spelling).
absl::StatusOr<AutoPad> ParseAutoPad(absl::string_view name);
absl::string_view AutoPadName(AutoPad auto_pad);

// The window attributes as written on a node. Empty strides / dilations mean all 1;
// empty pads mean all 0.
struct WindowSpec {
  std::vector<int64_t> kernel;
  std::vector<int64_t> strides;
  std::vector<int64_t> dilations;
  std::vector<int64_t> pads;  // [begin..., end...]
  AutoPad auto_pad = AutoPad::kNotSet;
  bool ceil_mode = false;
};

// Extra attributes of a transposed window. Empty output_padding means all 0; empty
// output_shape means the size follows from the input, strides and pads.
struct TransposedWindowSpec {
  WindowSpec window;
  std::vector<int64_t> output_padding;
  std::vector<int64_t> output_shape;
};

// Reads kernel_shape, strides, dilations, pads, auto_pad and ceil_mode from a node's
// attributes; absent ones take their ONNX defaults. Works on attributes with or
// without defaults applied. An absent kernel_shape leaves `kernel` empty (Conv takes
// it from the weight).
absl::StatusOr<WindowSpec> WindowSpecFromAttrs(const AttrMap& attrs);
// WindowSpecFromAttrs plus output_padding and output_shape.
absl::StatusOr<TransposedWindowSpec> TransposedWindowSpecFromAttrs(const AttrMap& attrs);

// The resolved geometry: every list has one entry per spatial dimension, and the
// pads are the ones actually applied (auto_pad resolved).
struct WindowGeometry {
  std::vector<int64_t> kernel;
  std::vector<int64_t> strides;
  std::vector<int64_t> dilations;
  std::vector<int64_t> pads_begin;
  std::vector<int64_t> pads_end;
  std::vector<int64_t> output;  // spatial output sizes, all >= 1

  int num_spatial() const { return static_cast<int>(kernel.size()); }
  // Span of input (forward) or output (transposed) positions one window covers.
  int64_t effective_kernel(int i) const { return (kernel[i] - 1) * dilations[i] + 1; }
  // Product of the kernel sizes (taps per window).
  int64_t kernel_elements() const;
};

// Geometry of a forward window over `input` (the spatial sizes, which must be
// static). Checks list lengths, positive kernel/strides/dilations, non-negative
// pads (and that explicit pads are not combined with auto_pad), and that every
// output size is positive.
absl::StatusOr<WindowGeometry> ComputeWindowGeometry(absl::Span<const int64_t> input, const WindowSpec& spec);

// Geometry of a transposed window. The output size is, per dimension:
//   output_shape[i] when given;
//   input[i] * stride[i] under SAME_UPPER / SAME_LOWER;
//   stride * (input - 1) + output_padding + effective_kernel - pad_begin - pad_end otherwise.
// When the size is given or SAME, the pads are derived from
//   total = stride * (input - 1) + output_padding + effective_kernel - output
// split as the ONNX spec writes it: the odd unit at the end for SAME_UPPER, at the
// beginning otherwise (SAME_LOWER, or an output_shape without auto_pad; some
// runtimes split the latter the other way). A negative total — the
// requested output is larger than the full transposed window reaches — is clamped
// to zero pads: the extra trailing positions receive no input (only the bias).
// ceil_mode is rejected.
absl::StatusOr<WindowGeometry> ComputeTransposedWindowGeometry(absl::Span<const int64_t> input,
                                                               const TransposedWindowSpec& spec);

}  // namespace tsr

#endif  // TESSERA_GRAPH_OPS_CONV_GEOMETRY_H_

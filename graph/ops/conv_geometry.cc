// Sliding-window geometry: attribute parsing, forward and transposed output sizes.
#include "graph/ops/conv_geometry.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace tsr {

namespace {

absl::Status Invalid(absl::string_view message) { return absl::InvalidArgumentError(message); }

std::string ListToString(const std::vector<int64_t>& v) { return absl::StrCat("[", absl::StrJoin(v, ","), "]"); }

// Every window attribute is bounded like a dimension (2^40), so sums of a few of
// them cannot overflow; only products need checking.
absl::Status CheckBounded(absl::string_view name, const std::vector<int64_t>& v, int64_t min_value) {
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] < min_value) {
      return Invalid(absl::StrCat(name, "[", i, "] is ", v[i], " but must be >= ", min_value));
    }
    if (v[i] > kMaxElements) {
      return Invalid(absl::StrCat(name, "[", i, "] is ", v[i], ", above the limit of 2^40"));
    }
  }
  return absl::OkStatus();
}

// `v` with one entry per spatial dimension: `fill` repeated when v is empty.
absl::StatusOr<std::vector<int64_t>> PerDimension(absl::string_view name, const std::vector<int64_t>& v, int n,
                                                  int64_t fill, int64_t min_value) {
  if (v.empty()) return std::vector<int64_t>(n, fill);
  if (static_cast<int>(v.size()) != n) {
    return Invalid(absl::StrCat(name, " has ", v.size(), " values ", ListToString(v), " but the input has ", n,
                                " spatial dimensions"));
  }
  if (absl::Status s = CheckBounded(name, v, min_value); !s.ok()) return s;
  return v;
}

absl::StatusOr<int64_t> SpatialSize(absl::Span<const int64_t> input, int i) {
  if (input[i] == kBatchDim) {
    return Invalid(absl::StrCat("spatial dimension ", i,
                                " is the symbolic batch dimension N, but a window needs its size to be known"));
  }
  if (input[i] < 0) return Invalid(absl::StrCat("spatial dimension ", i, " has negative size ", input[i]));
  return input[i];
}

// Resolves kernel, strides, dilations and pads (explicit or zero) for n spatial dims.
absl::StatusOr<WindowGeometry> ResolveCommon(int n, const WindowSpec& spec) {
  WindowGeometry g;
  if (static_cast<int>(spec.kernel.size()) != n) {
    return Invalid(absl::StrCat("kernel_shape has ", spec.kernel.size(), " values ", ListToString(spec.kernel),
                                " but the input has ", n, " spatial dimensions"));
  }
  if (absl::Status s = CheckBounded("kernel_shape", spec.kernel, 1); !s.ok()) return s;
  g.kernel = spec.kernel;
  absl::StatusOr<std::vector<int64_t>> strides = PerDimension("strides", spec.strides, n, 1, 1);
  if (!strides.ok()) return strides.status();
  g.strides = *std::move(strides);
  absl::StatusOr<std::vector<int64_t>> dilations = PerDimension("dilations", spec.dilations, n, 1, 1);
  if (!dilations.ok()) return dilations.status();
  g.dilations = *std::move(dilations);

  if (!spec.pads.empty() && static_cast<int>(spec.pads.size()) != 2 * n) {
    return Invalid(absl::StrCat("pads has ", spec.pads.size(), " values ", ListToString(spec.pads), " but ", 2 * n,
                                " (begin and end for each of ", n, " spatial dimensions) are required"));
  }
  if (absl::Status s = CheckBounded("pads", spec.pads, 0); !s.ok()) return s;
  const bool any_pad = std::any_of(spec.pads.begin(), spec.pads.end(), [](int64_t p) { return p != 0; });
  if (any_pad && spec.auto_pad != AutoPad::kNotSet) {
    return Invalid(absl::StrCat("pads ", ListToString(spec.pads),
                                " cannot be combined with auto_pad=", AutoPadName(spec.auto_pad)));
  }
  g.pads_begin.assign(n, 0);
  g.pads_end.assign(n, 0);
  if (!spec.pads.empty()) {
    for (int i = 0; i < n; ++i) {
      g.pads_begin[i] = spec.pads[i];
      g.pads_end[i] = spec.pads[n + i];
    }
  }
  for (int i = 0; i < n; ++i) {
    int64_t span;
    if (__builtin_mul_overflow(g.kernel[i] - 1, g.dilations[i], &span) || span >= kMaxElements) {
      return Invalid(absl::StrCat("spatial dimension ", i, ": kernel ", g.kernel[i], " with dilation ", g.dilations[i],
                                  " spans more than 2^40 positions"));
    }
  }
  return g;
}

// Splits `total` padding units; SAME_UPPER puts an odd unit at the end.
void SplitPadding(int64_t total, bool odd_at_end, int64_t& begin, int64_t& end) {
  const int64_t half = total / 2;
  begin = odd_at_end ? half : total - half;
  end = total - begin;
}

absl::StatusOr<std::vector<int64_t>> GetInts(const AttrMap& attrs, absl::string_view name) {
  auto it = attrs.find(name);
  if (it == attrs.end()) return std::vector<int64_t>();
  if (it->second.type() != AttrType::kInts) {
    return Invalid(
        absl::StrCat("attribute '", name, "' has type ", AttrTypeName(it->second.type()), " but ints is required"));
  }
  return it->second.ints();
}

}  // namespace

absl::StatusOr<AutoPad> ParseAutoPad(absl::string_view name) {
  if (name == "NOTSET") return AutoPad::kNotSet;
  if (name == "SAME_UPPER") return AutoPad::kSameUpper;
  if (name == "SAME_LOWER") return AutoPad::kSameLower;
  if (name == "VALID") return AutoPad::kValid;
  return Invalid(absl::StrCat("auto_pad is '", name, "' but one of NOTSET, SAME_UPPER, SAME_LOWER, VALID is required"));
}

absl::string_view AutoPadName(AutoPad auto_pad) {
  switch (auto_pad) {
    case AutoPad::kSameUpper:
      return "SAME_UPPER";
    case AutoPad::kSameLower:
      return "SAME_LOWER";
    case AutoPad::kValid:
      return "VALID";
    case AutoPad::kNotSet:
    default:
      return "NOTSET";
  }
}

absl::StatusOr<WindowSpec> WindowSpecFromAttrs(const AttrMap& attrs) {
  WindowSpec spec;
  for (auto [name, field] : {std::pair{"kernel_shape", &spec.kernel}, std::pair{"strides", &spec.strides},
                             std::pair{"dilations", &spec.dilations}, std::pair{"pads", &spec.pads}}) {
    absl::StatusOr<std::vector<int64_t>> v = GetInts(attrs, name);
    if (!v.ok()) return v.status();
    *field = *std::move(v);
  }
  if (auto it = attrs.find("auto_pad"); it != attrs.end()) {
    if (it->second.type() != AttrType::kString) return Invalid("attribute 'auto_pad' must be a string");
    absl::StatusOr<AutoPad> auto_pad = ParseAutoPad(it->second.s());
    if (!auto_pad.ok()) return auto_pad.status();
    spec.auto_pad = *auto_pad;
  }
  if (auto it = attrs.find("ceil_mode"); it != attrs.end()) {
    if (it->second.type() != AttrType::kInt) return Invalid("attribute 'ceil_mode' must be an int");
    const int64_t v = it->second.i();
    if (v != 0 && v != 1) return Invalid(absl::StrCat("ceil_mode is ", v, " but must be 0 or 1"));
    spec.ceil_mode = v == 1;
  }
  return spec;
}

absl::StatusOr<TransposedWindowSpec> TransposedWindowSpecFromAttrs(const AttrMap& attrs) {
  TransposedWindowSpec spec;
  absl::StatusOr<WindowSpec> window = WindowSpecFromAttrs(attrs);
  if (!window.ok()) return window.status();
  spec.window = *std::move(window);
  absl::StatusOr<std::vector<int64_t>> output_padding = GetInts(attrs, "output_padding");
  if (!output_padding.ok()) return output_padding.status();
  spec.output_padding = *std::move(output_padding);
  absl::StatusOr<std::vector<int64_t>> output_shape = GetInts(attrs, "output_shape");
  if (!output_shape.ok()) return output_shape.status();
  spec.output_shape = *std::move(output_shape);
  return spec;
}

int64_t WindowGeometry::kernel_elements() const {
  int64_t n = 1;
  for (int64_t k : kernel) n *= k;
  return n;
}

absl::StatusOr<WindowGeometry> ComputeWindowGeometry(absl::Span<const int64_t> input, const WindowSpec& spec) {
  const int n = static_cast<int>(input.size());
  absl::StatusOr<WindowGeometry> resolved = ResolveCommon(n, spec);
  if (!resolved.ok()) return resolved.status();
  WindowGeometry g = *std::move(resolved);
  g.output.assign(n, 0);
  for (int i = 0; i < n; ++i) {
    absl::StatusOr<int64_t> in = SpatialSize(input, i);
    if (!in.ok()) return in.status();
    const int64_t stride = g.strides[i];
    const int64_t window = g.effective_kernel(i);
    int64_t out = 0;
    if (spec.auto_pad == AutoPad::kSameUpper || spec.auto_pad == AutoPad::kSameLower) {
      out = (*in + stride - 1) / stride;
      const int64_t total = std::max<int64_t>(0, (out - 1) * stride + window - *in);
      SplitPadding(total, spec.auto_pad == AutoPad::kSameUpper, g.pads_begin[i], g.pads_end[i]);
    } else {
      const int64_t padded = *in + g.pads_begin[i] + g.pads_end[i];
      if (padded < window) {
        return Invalid(absl::StrCat("spatial dimension ", i, ": the window spans ", window, " (kernel ", g.kernel[i],
                                    ", dilation ", g.dilations[i], ") but the padded input has only ", padded,
                                    " positions (size ", *in, ", pads ", g.pads_begin[i], "+", g.pads_end[i], ")"));
      }
      const int64_t slack = padded - window;
      if (spec.ceil_mode && spec.auto_pad == AutoPad::kNotSet) {
        out = (slack + stride - 1) / stride + 1;
        // A last window that would start in the end padding reads no input: dropped.
        if ((out - 1) * stride >= *in + g.pads_begin[i]) --out;
      } else {
        out = slack / stride + 1;
      }
    }
    if (out < 1) {
      return Invalid(absl::StrCat("spatial dimension ", i, " of size ", *in, " gives an output of size ", out,
                                  "; it must be positive"));
    }
    g.output[i] = out;
  }
  return g;
}

absl::StatusOr<WindowGeometry> ComputeTransposedWindowGeometry(absl::Span<const int64_t> input,
                                                               const TransposedWindowSpec& spec) {
  const int n = static_cast<int>(input.size());
  if (spec.window.ceil_mode) return Invalid("ceil_mode applies to pooling windows, not transposed ones");
  absl::StatusOr<WindowGeometry> resolved = ResolveCommon(n, spec.window);
  if (!resolved.ok()) return resolved.status();
  WindowGeometry g = *std::move(resolved);
  absl::StatusOr<std::vector<int64_t>> output_padding = PerDimension("output_padding", spec.output_padding, n, 0, 0);
  if (!output_padding.ok()) return output_padding.status();
  if (!spec.output_shape.empty()) {
    absl::StatusOr<std::vector<int64_t>> output_shape = PerDimension("output_shape", spec.output_shape, n, 1, 1);
    if (!output_shape.ok()) return output_shape.status();
  }
  const AutoPad auto_pad = spec.window.auto_pad;
  const bool same = auto_pad == AutoPad::kSameUpper || auto_pad == AutoPad::kSameLower;
  g.output.assign(n, 0);
  for (int i = 0; i < n; ++i) {
    absl::StatusOr<int64_t> in = SpatialSize(input, i);
    if (!in.ok()) return in.status();
    if (*in == 0) return Invalid(absl::StrCat("spatial dimension ", i, " has size 0"));
    const int64_t stride = g.strides[i];
    const int64_t padding = (*output_padding)[i];
    // ONNX: output_padding only selects extra computed positions, so it must stay
    // below the step between two input positions' contributions.
    if (padding >= std::max(stride, g.dilations[i])) {
      return Invalid(absl::StrCat("output_padding[", i, "] is ", padding, " but must be smaller than stride ", stride,
                                  " or dilation ", g.dilations[i]));
    }
    int64_t full;
    if (__builtin_mul_overflow(stride, *in - 1, &full)) {
      return Invalid(absl::StrCat("spatial dimension ", i, ": stride ", stride, " x size ", *in, " overflows"));
    }
    full += padding + g.effective_kernel(i);
    int64_t out;
    if (!spec.output_shape.empty() || same) {
      if (!spec.output_shape.empty()) {
        out = spec.output_shape[i];
      } else if (__builtin_mul_overflow(*in, stride, &out) || out > kMaxElements) {
        return Invalid(absl::StrCat("spatial dimension ", i, ": size ", *in, " x stride ", stride, " is too large"));
      }
      const int64_t total = std::max<int64_t>(0, full - out);
      SplitPadding(total, auto_pad == AutoPad::kSameUpper, g.pads_begin[i], g.pads_end[i]);
    } else {
      out = full - g.pads_begin[i] - g.pads_end[i];
    }
    if (out < 1) {
      return Invalid(absl::StrCat("spatial dimension ", i, " of size ", *in, " gives an output of size ", out,
                                  " (pads ", g.pads_begin[i], "+", g.pads_end[i], " remove more than the ", full,
                                  " positions the window reaches)"));
    }
    g.output[i] = out;
  }
  return g;
}

}  // namespace tsr

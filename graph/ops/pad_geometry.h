// `PadSource`: which input coordinate an output coordinate of Pad reads, by mode
// (constant, reflect, edge, wrap) — the one implementation of this arithmetic, used
// by the Pad kernels (reference and cpu) and by PadGrad, which sends each gradient
// element back to the coordinate its forward value came from.
#ifndef TESSERA_GRAPH_OPS_PAD_GEOMETRY_H_
#define TESSERA_GRAPH_OPS_PAD_GEOMETRY_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tsr {

enum class PadMode { kConstant, kReflect, kEdge, kWrap };

// "constant", "reflect", "edge" or "wrap"; anything else is InvalidArgument.
absl::StatusOr<PadMode> ParsePadMode(absl::string_view mode);

// Where coordinate `i` of an axis of size `d`, relative to the unpadded input (so
// negative before it, >= d after it), reads from; -1 for the constant value. As
// numpy.pad does it: reflect mirrors around the edge elements (period 2 * (d - 1)),
// edge repeats them, wrap repeats the axis; negative pads crop after padding.
int64_t PadSource(int64_t i, int64_t d, PadMode mode);

}  // namespace tsr

#endif  // TESSERA_GRAPH_OPS_PAD_GEOMETRY_H_

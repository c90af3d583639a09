// PadSource and ParsePadMode (pad_geometry.h).
#include "graph/ops/pad_geometry.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace tsr {

absl::StatusOr<PadMode> ParsePadMode(absl::string_view mode) {
  if (mode == "constant") return PadMode::kConstant;
  if (mode == "reflect") return PadMode::kReflect;
  if (mode == "edge") return PadMode::kEdge;
  if (mode == "wrap") return PadMode::kWrap;
  return absl::InvalidArgumentError(absl::StrCat("unknown mode '", mode, "' (known: constant, reflect, edge, wrap)"));
}

int64_t PadSource(int64_t i, int64_t d, PadMode mode) {
  if (i >= 0 && i < d) return i;
  if (mode == PadMode::kConstant || d == 0) return -1;
  if (mode == PadMode::kEdge) return i < 0 ? 0 : d - 1;
  if (mode == PadMode::kWrap) return ((i % d) + d) % d;
  if (d == 1) return 0;
  const int64_t period = 2 * (d - 1);
  const int64_t m = ((i % period) + period) % period;
  return m < d ? m : period - m;
}

}  // namespace tsr

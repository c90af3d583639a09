// `BroadcastIndex`: numpy/ONNX multidirectional broadcasting for reference kernels.
//
// For an output shape and the shapes of the operands that broadcast to it, gives
// the linear offset into each operand of the element that feeds output element i
// (row-major). Operands are aligned on their trailing dimensions; a dimension of
// size 1 (or a missing leading one) is read with stride 0. Deliberately plain: one
// index decomposition per element, so it can serve as the oracle's indexing.
#ifndef TESSERA_KERNELS_REFERENCE_BROADCAST_H_
#define TESSERA_KERNELS_REFERENCE_BROADCAST_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "graph/shape.h"

namespace tsr::reference {

class BroadcastIndex {
 public:
  // Fails (InvalidArgument naming both shapes) unless every input broadcasts to
  // `output`: rank <= output rank and each aligned dimension equal to the output's
  // or 1. Shapes must be static.
  static absl::StatusOr<BroadcastIndex> Create(const Shape& output, absl::Span<const Shape> inputs);

  int64_t num_elements() const { return num_elements_; }
  int num_inputs() const { return static_cast<int>(strides_.size()); }

  // Linear offset into input `k` of the element feeding output element `i`.
  int64_t InputOffset(int k, int64_t i) const;

 private:
  std::vector<int64_t> out_dims_;
  // strides_[k][d]: stride of input k along output dimension d, 0 where broadcast.
  std::vector<std::vector<int64_t>> strides_;
  int64_t num_elements_ = 0;
};

}  // namespace tsr::reference

#endif  // TESSERA_KERNELS_REFERENCE_BROADCAST_H_

// BroadcastIndex: per-element offsets of broadcast operands.
#include "kernels/reference/broadcast.h"

#include "absl/strings/str_cat.h"

namespace tsr::reference {

absl::StatusOr<BroadcastIndex> BroadcastIndex::Create(const Shape& output, absl::Span<const Shape> inputs) {
  if (!output.is_static()) {
    return absl::InvalidArgumentError(absl::StrCat("broadcast output shape ", output.ToString(), " is not static"));
  }
  BroadcastIndex index;
  index.out_dims_ = output.dims();
  index.num_elements_ = output.num_elements();
  const int out_rank = output.rank();
  for (const Shape& in : inputs) {
    const int in_rank = in.rank();
    if (in_rank > out_rank || !in.is_static()) {
      return absl::InvalidArgumentError(
          absl::StrCat("shape ", in.ToString(), " does not broadcast to ", output.ToString()));
    }
    std::vector<int64_t> strides(out_rank, 0);
    int64_t stride = 1;
    // Walk the input's dims from the last; input dim j aligns with output dim j + (out_rank - in_rank).
    for (int j = in_rank - 1; j >= 0; --j) {
      const int d = j + (out_rank - in_rank);
      const int64_t in_dim = in.dim(j);
      if (in_dim == output.dim(d)) {
        strides[d] = in_dim == 1 ? 0 : stride;
      } else if (in_dim == 1) {
        strides[d] = 0;
      } else {
        return absl::InvalidArgumentError(
            absl::StrCat("shape ", in.ToString(), " does not broadcast to ", output.ToString()));
      }
      stride *= in_dim;
    }
    index.strides_.push_back(std::move(strides));
  }
  return index;
}

int64_t BroadcastIndex::InputOffset(int k, int64_t i) const {
  const std::vector<int64_t>& strides = strides_[k];
  int64_t offset = 0;
  for (int d = static_cast<int>(out_dims_.size()) - 1; d >= 0; --d) {
    const int64_t dim = out_dims_[d];
    offset += (i % dim) * strides[d];
    i /= dim;
  }
  return offset;
}

}  // namespace tsr::reference

// Merging of broadcast dimensions (see elementwise_broadcast.h).
#include "kernels/cpu/elementwise_broadcast.h"

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace tsr {

absl::StatusOr<BroadcastLayout> MakeBroadcastLayout(const Shape& output, absl::Span<const Shape> operands) {
  const int num = static_cast<int>(operands.size());
  if (num < 1 || num > kMaxBroadcastOperands) {
    return absl::InvalidArgumentError(absl::StrCat("broadcast of ", num, " operands is not supported"));
  }
  const int out_rank = output.rank();
  BroadcastLayout layout;
  layout.num_operands = num;
  layout.num_elements = output.num_elements();
  // reads[k][d]: operand k varies along output dim d (its aligned dim equals the
  // output's and is > 1).
  std::array<std::array<bool, kMaxRank>, kMaxBroadcastOperands> reads{};
  for (int k = 0; k < num; ++k) {
    const Shape& s = operands[k];
    if (s.rank() > out_rank) {
      return absl::InvalidArgumentError(
          absl::StrCat("operand ", k, " shape ", s.ToString(), " does not broadcast to ", output.ToString()));
    }
    const int lead = out_rank - s.rank();
    for (int d = 0; d < out_rank; ++d) {
      const int64_t in = d < lead ? 1 : s.dim(d - lead);
      const int64_t out = output.dim(d);
      if (in != out && in != 1) {
        return absl::InvalidArgumentError(
            absl::StrCat("operand ", k, " shape ", s.ToString(), " does not broadcast to ", output.ToString()));
      }
      reads[k][d] = in == out && out != 1;
    }
  }
  // Merge: drop output dims of size 1; extend the last merged dim while every
  // operand reads (or broadcasts) along the new dim as it did along the last one.
  std::array<std::array<bool, kMaxRank>, kMaxBroadcastOperands> merged_reads{};
  int rank = 0;
  for (int d = 0; d < out_rank; ++d) {
    const int64_t size = output.dim(d);
    if (size == 1) continue;
    bool same = rank > 0;
    for (int k = 0; k < num && same; ++k) same = merged_reads[k][rank - 1] == reads[k][d];
    if (same) {
      layout.dims[rank - 1] *= size;
    } else {
      layout.dims[rank] = size;
      for (int k = 0; k < num; ++k) merged_reads[k][rank] = reads[k][d];
      ++rank;
    }
  }
  if (rank == 0) {
    layout.dims[0] = 1;
    rank = 1;
  }
  layout.rank = rank;
  for (int k = 0; k < num; ++k) {
    int64_t stride = 1;
    for (int d = rank - 1; d >= 0; --d) {
      layout.strides[k][d] = merged_reads[k][d] ? stride : 0;
      if (merged_reads[k][d]) stride *= layout.dims[d];
    }
  }
  return layout;
}

}  // namespace tsr

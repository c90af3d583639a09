// ExtractBlock and InsertBlock (see tensor_block.h).
#include "graph/tensor_block.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"

namespace tsr {

namespace {

absl::Status CheckBlock(const Shape& whole, const std::vector<int64_t>& offset, const Shape& block) {
  bool fits = static_cast<int>(offset.size()) == whole.rank() && block.rank() == whole.rank();
  for (int d = 0; fits && d < whole.rank(); ++d) {
    fits = offset[d] >= 0 && block.dim(d) >= 0 && offset[d] + block.dim(d) <= whole.dim(d);
  }
  if (fits) return absl::OkStatus();
  std::string at;
  for (int64_t o : offset) absl::StrAppend(&at, at.empty() ? "" : ",", o);
  return absl::InvalidArgumentError(
      absl::StrCat("a block ", block.ToString(), " at [", at, "] does not lie inside ", whole.ToString()));
}

// Calls copy(whole_byte_offset, block_byte_offset, bytes) for every innermost row.
template <typename Copy>
void ForEachRow(const Shape& whole, const std::vector<int64_t>& offset, const Shape& block, size_t element, Copy copy) {
  const int rank = whole.rank();
  if (rank == 0) {
    copy(0, 0, element);
    return;
  }
  if (block.num_elements() == 0) return;
  std::vector<int64_t> stride(rank, 1);
  for (int d = rank - 2; d >= 0; --d) stride[d] = stride[d + 1] * whole.dim(d + 1);
  const size_t row_bytes = static_cast<size_t>(block.dim(rank - 1)) * element;
  std::vector<int64_t> index(rank, 0);  // over the block's outer dims
  int64_t block_row = 0;
  while (true) {
    int64_t at = 0;
    for (int d = 0; d < rank; ++d) at += (offset[d] + (d == rank - 1 ? 0 : index[d])) * stride[d];
    copy(static_cast<size_t>(at) * element, static_cast<size_t>(block_row) * row_bytes, row_bytes);
    ++block_row;
    int d = rank - 2;
    for (; d >= 0; --d) {
      if (++index[d] < block.dim(d)) break;
      index[d] = 0;
    }
    if (d < 0) break;
  }
}

}  // namespace

absl::StatusOr<Tensor> ExtractBlock(const Tensor& whole, const std::vector<int64_t>& offset, const Shape& shape) {
  TSR_RETURN_IF_ERROR(CheckBlock(whole.shape(), offset, shape));
  TSR_ASSIGN_OR_RETURN(Tensor block, Tensor::Create(whole.dtype(), shape));
  const char* from = static_cast<const char*>(whole.raw_data());
  char* to = static_cast<char*>(block.raw_data());
  ForEachRow(whole.shape(), offset, shape, DTypeSize(whole.dtype()),
             [&](size_t w, size_t b, size_t n) { std::memcpy(to + b, from + w, n); });
  return block;
}

absl::Status InsertBlock(Tensor& whole, const std::vector<int64_t>& offset, const Tensor& block) {
  if (block.dtype() != whole.dtype()) {
    return absl::InvalidArgumentError(
        absl::StrCat("a ", DTypeName(block.dtype()), " block into a ", DTypeName(whole.dtype()), " tensor"));
  }
  TSR_RETURN_IF_ERROR(CheckBlock(whole.shape(), offset, block.shape()));
  char* to = static_cast<char*>(whole.raw_data());
  const char* from = static_cast<const char*>(block.raw_data());
  ForEachRow(whole.shape(), offset, block.shape(), DTypeSize(whole.dtype()),
             [&](size_t w, size_t b, size_t n) { std::memcpy(to + w, from + b, n); });
  return absl::OkStatus();
}

}  // namespace tsr

// Rectangular blocks of tensors: the share of a tensor one device holds when some of its
// dimensions are split (a weight split by tensor parallelism), taken out of the whole
// tensor or put back into it.
#ifndef TESSERA_GRAPH_TENSOR_BLOCK_H_
#define TESSERA_GRAPH_TENSOR_BLOCK_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "graph/shape.h"
#include "graph/tensor.h"

namespace tsr {

// The block of `whole` that starts at `offset` and has shape `shape` (a copy).
// InvalidArgument when the block does not lie inside `whole`.
absl::StatusOr<Tensor> ExtractBlock(const Tensor& whole, const std::vector<int64_t>& offset, const Shape& shape);
// Copies `block` into `whole` at `offset` (same dtype); InvalidArgument when it does not fit.
absl::Status InsertBlock(Tensor& whole, const std::vector<int64_t>& offset, const Tensor& block);

}  // namespace tsr

#endif  // TESSERA_GRAPH_TENSOR_BLOCK_H_

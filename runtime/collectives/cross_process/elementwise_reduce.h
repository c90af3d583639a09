// Element-wise reduction kernels for the collectives backends that reduce on the CPU
// themselves (Gloo's reduction callbacks and ring reduce-scatter): combining two
// buffers with sum, max or min, and the final division of a mean.
#ifndef TESSERA_RUNTIME_COLLECTIVES_CROSS_PROCESS_ELEMENTWISE_REDUCE_H_
#define TESSERA_RUNTIME_COLLECTIVES_CROSS_PROCESS_ELEMENTWISE_REDUCE_H_

#include <cstddef>
#include <functional>

#include "graph/dtype.h"
#include "runtime/collectives/collectives.h"

namespace tsr {

// dst[i] = a[i] op b[i] for i < n; kMean adds (the division comes once, at the end).
// `dst` may be `a` or `b` (a stays the left operand: max and min pick between NaNs by
// position). `dtype` must be reducible (IsReducibleDType).
void ReduceElementwise(DType dtype, ReduceOp op, void* dst, const void* a, const void* b, size_t n);

// An all-reduce from every rank's input, the same bits on every rank: inout holds this
// rank's input (rank `rank` of world_size) and receives ((x0 op x1) op x2) ... (divided
// by world_size for kMean); others(q), q != rank, is rank q's input, only read. On ranks
// above 1 the running result builds up in `scratch` (n elements; null is fine on ranks 0
// and 1), which may be others(0) where that may be overwritten.
void ReduceInRankOrder(DType dtype, ReduceOp op, int world_size, int rank,
                       const std::function<const void*(int)>& others, void* inout, void* scratch, size_t n);

// data[i] /= world_size for i < n; integers truncate toward zero, as the contract says.
void DivideForMean(DType dtype, void* data, size_t n, int world_size);

}  // namespace tsr

#endif  // TESSERA_RUNTIME_COLLECTIVES_CROSS_PROCESS_ELEMENTWISE_REDUCE_H_

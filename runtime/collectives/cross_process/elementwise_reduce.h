// Element-wise reduction kernels for the collectives backends that reduce on the CPU
// themselves (Gloo's reduction callbacks and ring reduce-scatter): combining two
// buffers with sum, max or min, and the final division of a mean.
#ifndef TESSERA_RUNTIME_COLLECTIVES_CROSS_PROCESS_ELEMENTWISE_REDUCE_H_
#define TESSERA_RUNTIME_COLLECTIVES_CROSS_PROCESS_ELEMENTWISE_REDUCE_H_

#include <cstddef>

#include "graph/dtype.h"
#include "runtime/collectives/collectives.h"

namespace tsr {

// dst[i] = a[i] op b[i] for i < n; kMean adds (the division comes once, at the end).
// `dst` may be `a` or `b`. `dtype` must be reducible (IsReducibleDType).
void ReduceElementwise(DType dtype, ReduceOp op, void* dst, const void* a, const void* b, size_t n);

// data[i] /= world_size for i < n; integers truncate toward zero, as the contract says.
void DivideForMean(DType dtype, void* data, size_t n, int world_size);

}  // namespace tsr

#endif  // TESSERA_RUNTIME_COLLECTIVES_CROSS_PROCESS_ELEMENTWISE_REDUCE_H_

// Softmax and LogSoftmax of f32 data along one axis, the loops of the CPU Softmax kernels
// (softmax_kernels.cc), for other kernels that need them (the softmax cross-entropy loss).
#ifndef TESSERA_KERNELS_CPU_SOFTMAX_ROWS_H_
#define TESSERA_KERNELS_CPU_SOFTMAX_ROWS_H_

#include <cstdint>

#include "kernels/kernel.h"

namespace tsr {

// y = (log ? LogSoftmax : Softmax)(x) along the middle axis of x viewed as [outer, axis,
// inner], split over parallel_for by outer rows (never inside one, so the results do not
// depend on the split). y may alias x.
void SoftmaxAlongAxis(bool log, const float* x, float* y, int64_t outer, int64_t axis, int64_t inner,
                      const ParallelForFn& parallel_for);

}  // namespace tsr

#endif  // TESSERA_KERNELS_CPU_SOFTMAX_ROWS_H_

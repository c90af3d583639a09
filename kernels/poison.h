// Poisoning of output buffers before a kernel runs: every element gets a value no
// kernel produces by accident, so a kernel that leaves part of its output unwritten
// is caught by any test comparing its results, instead of passing on zeroed memory.
// RunOp (kernels/run_op.h) always poisons; the runtime's allocator hands out
// uninitialized (reused) memory and poisons on request.
#ifndef TESSERA_KERNELS_POISON_H_
#define TESSERA_KERNELS_POISON_H_

#include "graph/tensor.h"

namespace tsr {

// Floating types: a quiet NaN (all bits set); integers: all bits set (-1 / max);
// bool: true.
void FillWithPoison(Tensor& tensor);

}  // namespace tsr

#endif  // TESSERA_KERNELS_POISON_H_

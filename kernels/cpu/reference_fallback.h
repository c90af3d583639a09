// `RunReferenceKernel`: how a CPU kernel declines a case (an invalid input, a rank or
// layout it does not handle). The reference kernel of the same op runs instead, so
// invalid inputs get the reference's exact error Status and unusual cases its exact
// result.
#ifndef TESSERA_KERNELS_CPU_REFERENCE_FALLBACK_H_
#define TESSERA_KERNELS_CPU_REFERENCE_FALLBACK_H_

#include "absl/status/status.h"
#include "graph/dtype.h"
#include "kernels/kernel.h"

namespace tsr {

// Runs the reference kernel registered for ctx's op and input 0's dtype.
absl::Status RunReferenceKernel(KernelContext& ctx);
// Runs the reference kernel registered for ctx's op and `dtype` (for ops whose kernels
// are keyed by another input's or the output's dtype).
absl::Status RunReferenceKernel(KernelContext& ctx, DType dtype);

}  // namespace tsr

#endif  // TESSERA_KERNELS_CPU_REFERENCE_FALLBACK_H_

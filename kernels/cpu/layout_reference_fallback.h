// `RunReferenceKernel`: how a CPU layout or indexing kernel declines a case. The
// reference kernel of the same op and dtype runs instead, so invalid inputs get the
// reference's exact error Status and unusual cases its exact result.
#ifndef TESSERA_KERNELS_CPU_LAYOUT_REFERENCE_FALLBACK_H_
#define TESSERA_KERNELS_CPU_LAYOUT_REFERENCE_FALLBACK_H_

#include "absl/status/status.h"
#include "kernels/kernel.h"

namespace tsr {

// Runs the reference kernel registered for ctx's op and input 0's dtype.
absl::Status RunReferenceKernel(KernelContext& ctx);

}  // namespace tsr

#endif  // TESSERA_KERNELS_CPU_LAYOUT_REFERENCE_FALLBACK_H_

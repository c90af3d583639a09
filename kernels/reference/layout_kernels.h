// Reference kernels of the layout ops (Transpose, Concat, Split, Slice, Pad, Tile),
// registered from RegisterReferenceShapeKernels (kernels/register_kernels.h).
#ifndef TESSERA_KERNELS_REFERENCE_LAYOUT_KERNELS_H_
#define TESSERA_KERNELS_REFERENCE_LAYOUT_KERNELS_H_

#include "absl/status/status.h"

namespace tsr {

class KernelRegistry;

absl::Status RegisterReferenceLayoutKernels(KernelRegistry& registry);

}  // namespace tsr

#endif  // TESSERA_KERNELS_REFERENCE_LAYOUT_KERNELS_H_

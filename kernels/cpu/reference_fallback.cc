// The reference fallback of the CPU kernels (see the header).
#include "kernels/cpu/reference_fallback.h"

#include "absl/strings/str_cat.h"
#include "graph/tensor.h"

namespace tsr {

absl::Status RunReferenceKernel(KernelContext& ctx) { return RunReferenceKernel(ctx, ctx.input(0).dtype()); }

absl::Status RunReferenceKernel(KernelContext& ctx, DType dtype) {
  const KernelFn* fn = KernelRegistry::Global().Find(ctx.op_def().name, kReferenceDevice, dtype);
  if (fn == nullptr) {
    return ctx.Error(absl::StrCat("no reference kernel for ", ctx.op_def().name, " with dtype ", DTypeName(dtype)));
  }
  return (*fn)(ctx);
}

}  // namespace tsr

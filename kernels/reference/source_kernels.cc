// Reference kernels for the source ops: Constant (copies its 'value' attribute) and
// Identity. Placeholder and Variable have no kernel: the runtime feeds them.
#include <cstring>

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "kernels/kernel.h"
#include "kernels/register_kernels.h"

namespace tsr {

namespace {

// Copies `from` into `to` after checking that their types agree.
absl::Status CopyTensor(KernelContext& ctx, const Tensor& from, Tensor& to, absl::string_view what) {
  if (from.dtype() != to.dtype() || from.shape() != to.shape()) {
    return ctx.Error(absl::StrCat(what, " is ", from.type().ToString(), " but the output is ", to.type().ToString()));
  }
  if (from.num_bytes() > 0) std::memcpy(to.raw_data(), from.raw_data(), from.num_bytes());
  return absl::OkStatus();
}

absl::Status ConstantKernel(KernelContext& ctx) {
  const Tensor* value = ctx.GetTensor("value");
  if (value == nullptr || !value->valid()) return ctx.Error("attribute 'value' holds no tensor");
  return CopyTensor(ctx, *value, ctx.output(0), "attribute 'value'");
}

absl::Status IdentityKernel(KernelContext& ctx) { return CopyTensor(ctx, ctx.input(0), ctx.output(0), "input 0"); }

}  // namespace

absl::Status RegisterReferenceSourceKernels(KernelRegistry& registry) {
  TSR_RETURN_IF_ERROR(registry.Register("Constant", kReferenceDevice, kAllDTypes, ConstantKernel));
  TSR_RETURN_IF_ERROR(registry.Register("Identity", kReferenceDevice, kAllDTypes, IdentityKernel));
  return absl::OkStatus();
}

}  // namespace tsr

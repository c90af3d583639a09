// Reference kernels for the source ops: Constant (copies its 'value' attribute),
// ConstantOfShape, EyeLike and Identity. Placeholder and Variable have no kernel: the
// runtime feeds them.
#include <cstdint>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "graph/dtype.h"
#include "graph/status_macros.h"
#include "kernels/kernel.h"
#include "kernels/reference/convert.h"
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

// Every output element is a copy of the one-element 'value' (f32 0 when absent); the
// output's shape was set from the shape input by inference.
absl::Status ConstantOfShapeKernel(KernelContext& ctx) {
  const Tensor& shape = ctx.input(0);
  Tensor& out = ctx.output(0);
  const Tensor* value = ctx.GetTensor("value");
  const Tensor zero = Tensor::FromVector<float>(Shape{1}, {0.0f});
  if (value == nullptr) value = &zero;
  if (!value->valid() || value->num_elements() != 1) {
    return ctx.Error("attribute 'value' must hold exactly one element");
  }
  if (out.dtype() != value->dtype() || out.shape() != Shape(shape.ToInt64Vector())) {
    return ctx.Error(absl::StrCat("output was allocated as ", out.type().ToString(), " but the inputs give ",
                                  DTypeName(value->dtype()), Shape(shape.ToInt64Vector()).ToString()));
  }
  const size_t esize = DTypeSize(out.dtype());
  char* dst = static_cast<char*>(out.raw_data());
  for (int64_t i = 0; i < out.num_elements(); ++i) std::memcpy(dst + i * esize, value->raw_data(), esize);
  return absl::OkStatus();
}

// out[i][j] = 1 where j - i == k, else 0, in the output's dtype.
absl::Status EyeLikeKernel(KernelContext& ctx) {
  const Tensor& in = ctx.input(0);
  Tensor& out = ctx.output(0);
  if (in.shape().rank() != 2 || out.shape() != in.shape()) {
    return ctx.Error(absl::StrCat("input is ", in.type().ToString(), " and the output ", out.type().ToString(),
                                  "; both must be 2-D of the same shape"));
  }
  const int64_t rows = in.shape().dim(0), cols = in.shape().dim(1);
  const int64_t k = ctx.GetInt("k");
  VisitDType(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* dst = out.data<T>();
    const T zero = reference::FromDouble<T>(0.0), one = reference::FromDouble<T>(1.0);
    for (int64_t i = 0; i < rows; ++i) {
      for (int64_t j = 0; j < cols; ++j) dst[i * cols + j] = j - i == k ? one : zero;
    }
  });
  return absl::OkStatus();
}

absl::Status IdentityKernel(KernelContext& ctx) { return CopyTensor(ctx, ctx.input(0), ctx.output(0), "input 0"); }

}  // namespace

absl::Status RegisterReferenceSourceKernels(KernelRegistry& registry) {
  TSR_RETURN_IF_ERROR(registry.Register("Constant", kReferenceDevice, kAllDTypes, ConstantKernel));
  // Keyed by the dtype of input 0: the shape (i64) for ConstantOfShape, the input
  // for EyeLike (which writes any output dtype).
  TSR_RETURN_IF_ERROR(registry.Register("ConstantOfShape", kReferenceDevice, DType::kI64, ConstantOfShapeKernel));
  TSR_RETURN_IF_ERROR(registry.Register("EyeLike", kReferenceDevice, kAllDTypes, EyeLikeKernel));
  TSR_RETURN_IF_ERROR(registry.Register("Identity", kReferenceDevice, kAllDTypes, IdentityKernel));
  return absl::OkStatus();
}

}  // namespace tsr

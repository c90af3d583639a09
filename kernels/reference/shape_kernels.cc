// Reference kernels of the shape ops: Reshape, Flatten, Squeeze, Unsqueeze, Expand,
// Shape, Size, Range. The layout ops of the same family live in layout_kernels.cc.
//
// Data is moved as raw elements of DTypeSize bytes, so one kernel serves every dtype.
// Output shapes were set by the caller from shape inference; each kernel recomputes
// what it needs from its inputs and reports a mismatch instead of writing out of
// bounds.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/dtype.h"
#include "graph/shape.h"
#include "graph/status_macros.h"
#include "graph/tensor.h"
#include "kernels/kernel.h"
#include "kernels/reference/layout_kernels.h"
#include "kernels/register_kernels.h"

namespace tsr {

namespace {

absl::Status CheckOutputShape(KernelContext& ctx, int i, const Shape& expected) {
  const Tensor& out = ctx.output(i);
  if (out.shape() != expected || out.dtype() != ctx.input(0).dtype()) {
    return ctx.Error(absl::StrCat("output ", i, " was allocated as ", DTypeName(out.dtype()), out.shape().ToString(),
                                  " but the inputs give ", DTypeName(ctx.input(0).dtype()), expected.ToString()));
  }
  return absl::OkStatus();
}

// Reshape, Flatten, Squeeze, Unsqueeze: the same elements in the same order.
absl::Status CopyElementsKernel(KernelContext& ctx) {
  const Tensor& in = ctx.input(0);
  Tensor& out = ctx.output(0);
  if (out.dtype() != in.dtype() || out.num_elements() != in.num_elements()) {
    return ctx.Error(absl::StrCat("output was allocated as ", DTypeName(out.dtype()), out.shape().ToString(),
                                  " but the input is ", DTypeName(in.dtype()), in.shape().ToString(),
                                  "; the element counts and dtypes must match"));
  }
  // A buffer planner may give the output the input's own bytes (a Reshape in place).
  if (in.num_bytes() > 0 && out.raw_data() != in.raw_data()) std::memcpy(out.raw_data(), in.raw_data(), in.num_bytes());
  return absl::OkStatus();
}

// out[o] = in[o'] where o' takes o's trailing dims, with 0 on the input's size-1 dims.
absl::Status ExpandKernel(KernelContext& ctx) {
  const Tensor& in = ctx.input(0);
  Tensor& out = ctx.output(0);
  absl::StatusOr<Shape> expected = BroadcastShapes(in.shape(), Shape(ctx.input(1).ToInt64Vector()));
  if (!expected.ok()) return ctx.Error(expected.status().message());
  TSR_RETURN_IF_ERROR(CheckOutputShape(ctx, 0, *expected));
  const int out_rank = out.shape().rank();
  const int lead = out_rank - in.shape().rank();
  // Input stride per output axis; 0 where the input broadcasts (size 1 or absent).
  std::vector<int64_t> in_strides(out_rank, 0);
  int64_t stride = 1;
  for (int i = in.shape().rank() - 1; i >= 0; --i) {
    if (in.shape().dim(i) != 1) in_strides[i + lead] = stride;
    stride *= in.shape().dim(i);
  }
  const size_t esize = DTypeSize(in.dtype());
  const char* src = static_cast<const char*>(in.raw_data());
  char* dst = static_cast<char*>(out.raw_data());
  for (int64_t o = 0; o < out.num_elements(); ++o) {
    // Unravel o into the output index, accumulating the input offset.
    int64_t rest = o;
    int64_t offset = 0;
    for (int a = out_rank - 1; a >= 0; --a) {
      const int64_t d = out.shape().dim(a);
      offset += (rest % d) * in_strides[a];
      rest /= d;
    }
    std::memcpy(dst + o * esize, src + offset * esize, esize);
  }
  return absl::OkStatus();
}

absl::Status ShapeKernel(KernelContext& ctx) {
  const Shape& in = ctx.input(0).shape();
  const int64_t rank = in.rank();
  auto clamp = [rank](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank); };
  const int64_t start = clamp(ctx.GetInt("start"));
  const int64_t end = ctx.has_attr("end") ? clamp(ctx.GetInt("end")) : rank;
  const int64_t n = std::max<int64_t>(0, end - start);
  Tensor& out = ctx.output(0);
  if (out.dtype() != DType::kI64 || out.shape() != Shape{n}) {
    return ctx.Error(absl::StrCat("output was allocated as ", DTypeName(out.dtype()), out.shape().ToString(),
                                  " but dims [", start, ", ", end, ") of ", in.ToString(), " need i64[", n, "]"));
  }
  int64_t* dst = out.data<int64_t>();
  for (int64_t i = 0; i < n; ++i) dst[i] = in.dim(static_cast<int>(start + i));
  return absl::OkStatus();
}

absl::Status SizeKernel(KernelContext& ctx) {
  Tensor& out = ctx.output(0);
  if (out.dtype() != DType::kI64 || out.shape().rank() != 0) {
    return ctx.Error(absl::StrCat("output was allocated as ", DTypeName(out.dtype()), out.shape().ToString(),
                                  " but an i64 scalar is required"));
  }
  *out.data<int64_t>() = ctx.input(0).num_elements();
  return absl::OkStatus();
}

// out[i] = start + i * delta, computed in T (int64 for the integer types).
template <typename T>
void FillRange(const KernelContext& ctx, Tensor& out) {
  T* dst = out.data<T>();
  if constexpr (std::is_floating_point_v<T>) {
    const T start = static_cast<T>(ctx.input(0).GetAsDouble(0));
    const T delta = static_cast<T>(ctx.input(2).GetAsDouble(0));
    for (int64_t i = 0; i < out.num_elements(); ++i) dst[i] = start + static_cast<T>(i) * delta;
  } else {
    // Unsigned arithmetic wraps instead of overflowing; the shape function bounded
    // the length, so every value is within T.
    const uint64_t start = static_cast<uint64_t>(ctx.input(0).GetAsInt64(0));
    const uint64_t delta = static_cast<uint64_t>(ctx.input(2).GetAsInt64(0));
    for (int64_t i = 0; i < out.num_elements(); ++i) {
      dst[i] = static_cast<T>(static_cast<int64_t>(start + static_cast<uint64_t>(i) * delta));
    }
  }
}

absl::Status RangeKernel(KernelContext& ctx) {
  Tensor& out = ctx.output(0);
  const DType dtype = ctx.input(0).dtype();
  for (int i = 0; i < 3; ++i) {
    if (ctx.input(i).num_elements() != 1) {
      return ctx.Error(
          absl::StrCat("input ", i, " must hold one value but has shape ", ctx.input(i).shape().ToString()));
    }
  }
  if (out.dtype() != dtype || out.shape().rank() != 1) {
    return ctx.Error(absl::StrCat("output was allocated as ", DTypeName(out.dtype()), out.shape().ToString(),
                                  " but a 1-D ", DTypeName(dtype), " tensor is required"));
  }
  switch (dtype) {
    case DType::kF32:
      FillRange<float>(ctx, out);
      break;
    case DType::kF64:
      FillRange<double>(ctx, out);
      break;
    case DType::kI32:
      FillRange<int32_t>(ctx, out);
      break;
    case DType::kI64:
      FillRange<int64_t>(ctx, out);
      break;
    default:
      return ctx.Error(absl::StrCat("dtype ", DTypeName(dtype), " is not supported (f32, f64, i32, i64)"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterReferenceShapeKernels(KernelRegistry& registry) {
  for (const char* op : {"Reshape", "Flatten", "Squeeze", "Unsqueeze"}) {
    TSR_RETURN_IF_ERROR(registry.Register(op, kReferenceDevice, kAllDTypes, CopyElementsKernel));
  }
  TSR_RETURN_IF_ERROR(registry.Register("Expand", kReferenceDevice, kAllDTypes, ExpandKernel));
  TSR_RETURN_IF_ERROR(registry.Register("Shape", kReferenceDevice, kAllDTypes, ShapeKernel));
  TSR_RETURN_IF_ERROR(registry.Register("Size", kReferenceDevice, kAllDTypes, SizeKernel));
  TSR_RETURN_IF_ERROR(
      registry.Register("Range", kReferenceDevice, {DType::kF32, DType::kF64, DType::kI32, DType::kI64}, RangeKernel));
  return RegisterReferenceLayoutKernels(registry);
}

}  // namespace tsr

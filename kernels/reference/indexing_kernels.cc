// Reference kernels of the indexing ops: Gather, GatherElements, ScatterElements,
// OneHot (semantics of graph/ops/indexing_ops.cc, ONNX latest opset).
//
// Elements are moved as DTypeSize raw bytes, so the kernels serve every dtype; only
// ScatterElements' reductions do arithmetic, per dtype. Index values are run-time
// data: a negative index counts from the end of its axis, and one outside
// [-size, size) is an error naming the value and the axis (OneHot instead writes an
// all-off row, as ONNX says).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/dtype.h"
#include "graph/shape.h"
#include "graph/status_macros.h"
#include "graph/tensor.h"
#include "kernels/kernel.h"
#include "kernels/register_kernels.h"

namespace tsr {

namespace {

absl::Status CheckOutputShape(KernelContext& ctx, DType dtype, const Shape& expected) {
  const Tensor& out = ctx.output(0);
  if (out.shape() != expected || out.dtype() != dtype) {
    return ctx.Error(absl::StrCat("output was allocated as ", DTypeName(out.dtype()), out.shape().ToString(),
                                  " but the inputs give ", DTypeName(dtype), expected.ToString()));
  }
  return absl::OkStatus();
}

// Row-major element strides of `shape`.
std::vector<int64_t> Strides(const Shape& shape) {
  std::vector<int64_t> strides(shape.rank(), 1);
  for (int i = shape.rank() - 2; i >= 0; --i) strides[i] = strides[i + 1] * shape.dim(i + 1);
  return strides;
}

// The index values with negatives wrapped, after checking each against [-size, size).
absl::StatusOr<std::vector<int64_t>> WrappedIndices(const KernelContext& ctx, const Tensor& indices, int axis,
                                                    int64_t size) {
  std::vector<int64_t> values = indices.ToInt64Vector();
  for (size_t j = 0; j < values.size(); ++j) {
    const int64_t v = values[j];
    if (v < -size || v >= size) {
      return ctx.Error(absl::StrCat("index ", v, " (element ", j, " of 'indices' ", indices.shape().ToString(),
                                    ") is out of range for axis ", axis, " of size ", size, "; expected [", -size, ", ",
                                    size, ")"));
    }
    values[j] = v < 0 ? v + size : v;
  }
  return values;
}

// The multi-index of flat position `flat` in `shape`.
void Unravel(int64_t flat, const Shape& shape, std::vector<int64_t>& index) {
  for (int a = shape.rank() - 1; a >= 0; --a) {
    index[a] = flat % shape.dim(a);
    flat /= shape.dim(a);
  }
}

// out[outer, j, inner] = data[outer, indices[j], inner].
absl::Status GatherKernel(KernelContext& ctx) {
  const Tensor& data = ctx.input(0);
  const Tensor& indices = ctx.input(1);
  if (data.shape().rank() == 0) return ctx.Error("input 'data' is a scalar but rank >= 1 is required");
  absl::StatusOr<int> axis = NormalizeAxis(ctx.GetInt("axis"), data.shape().rank());
  if (!axis.ok()) return ctx.Error(axis.status().message());
  const int64_t size = data.shape().dim(*axis);
  Shape expected;
  int64_t outer = 1;
  int64_t inner_bytes = static_cast<int64_t>(DTypeSize(data.dtype()));
  for (int i = 0; i < *axis; ++i) {
    expected.AddDim(data.shape().dim(i));
    outer *= data.shape().dim(i);
  }
  for (int64_t d : indices.shape().dims()) expected.AddDim(d);
  for (int i = *axis + 1; i < data.shape().rank(); ++i) {
    expected.AddDim(data.shape().dim(i));
    inner_bytes *= data.shape().dim(i);
  }
  TSR_RETURN_IF_ERROR(CheckOutputShape(ctx, data.dtype(), expected));
  TSR_ASSIGN_OR_RETURN(std::vector<int64_t> idx, WrappedIndices(ctx, indices, *axis, size));
  const int64_t n = static_cast<int64_t>(idx.size());
  const char* src = static_cast<const char*>(data.raw_data());
  char* dst = static_cast<char*>(ctx.output(0).raw_data());
  if (inner_bytes == 0) return absl::OkStatus();
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < n; ++j) {
      std::memcpy(dst + (o * n + j) * inner_bytes, src + (o * size + idx[j]) * inner_bytes, inner_bytes);
    }
  }
  return absl::OkStatus();
}

// Checks what GatherElements and ScatterElements share; returns the axis.
absl::StatusOr<int> ElementsAxis(const KernelContext& ctx) {
  const Shape& data = ctx.input(0).shape();
  const Shape& indices = ctx.input(1).shape();
  if (data.rank() == 0) return ctx.Error("input 'data' is a scalar but rank >= 1 is required");
  if (indices.rank() != data.rank()) {
    return ctx.Error(absl::StrCat("input 'indices' has shape ", indices.ToString(),
                                  " but must have the rank of 'data' ", data.ToString()));
  }
  absl::StatusOr<int> axis = NormalizeAxis(ctx.GetInt("axis"), data.rank());
  if (!axis.ok()) return ctx.Error(axis.status().message());
  for (int i = 0; i < data.rank(); ++i) {
    if (i != *axis && indices.dim(i) > data.dim(i)) {
      return ctx.Error(absl::StrCat("input 'indices' has shape ", indices.ToString(), " but 'data' has ",
                                    data.ToString(), "; off axis ", *axis, " indices dims must be <= data dims"));
    }
  }
  return *axis;
}

// The element offset in `data` that indices position `flat` addresses.
int64_t ElementOffset(int64_t flat, const Shape& indices_shape, const std::vector<int64_t>& data_strides, int axis,
                      int64_t index_value, std::vector<int64_t>& scratch) {
  Unravel(flat, indices_shape, scratch);
  scratch[axis] = index_value;
  int64_t offset = 0;
  for (size_t a = 0; a < scratch.size(); ++a) offset += scratch[a] * data_strides[a];
  return offset;
}

// out[p] = data[p with p[axis] = indices[p]].
absl::Status GatherElementsKernel(KernelContext& ctx) {
  const Tensor& data = ctx.input(0);
  const Tensor& indices = ctx.input(1);
  TSR_ASSIGN_OR_RETURN(const int axis, ElementsAxis(ctx));
  TSR_RETURN_IF_ERROR(CheckOutputShape(ctx, data.dtype(), indices.shape()));
  TSR_ASSIGN_OR_RETURN(std::vector<int64_t> idx, WrappedIndices(ctx, indices, axis, data.shape().dim(axis)));
  const size_t esize = DTypeSize(data.dtype());
  const std::vector<int64_t> strides = Strides(data.shape());
  std::vector<int64_t> scratch(data.shape().rank());
  const char* src = static_cast<const char*>(data.raw_data());
  char* dst = static_cast<char*>(ctx.output(0).raw_data());
  for (int64_t p = 0; p < static_cast<int64_t>(idx.size()); ++p) {
    const int64_t offset = ElementOffset(p, indices.shape(), strides, axis, idx[p], scratch);
    std::memcpy(dst + p * esize, src + offset * esize, esize);
  }
  return absl::OkStatus();
}

enum class Reduction { kNone, kAdd, kMul, kMax, kMin };

// `a` combined with the update `b`. Bool: add/max are or, mul/min are and. Integers
// wrap around on overflow; 16-bit floats compute in float.
template <typename T>
T Combine(T a, T b, Reduction r) {
  if constexpr (std::is_same_v<T, bool>) {
    switch (r) {
      case Reduction::kAdd:
      case Reduction::kMax:
        return a || b;
      case Reduction::kMul:
      case Reduction::kMin:
        return a && b;
      default:
        return b;
    }
  } else if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
    return T::FromFloat(Combine<float>(a.ToFloat(), b.ToFloat(), r));
  } else if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    switch (r) {
      case Reduction::kAdd:
        return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
      case Reduction::kMul:
        return static_cast<T>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
      case Reduction::kMax:
        return std::max(a, b);
      case Reduction::kMin:
        return std::min(a, b);
      default:
        return b;
    }
  } else {
    switch (r) {
      case Reduction::kAdd:
        return a + b;
      case Reduction::kMul:
        return a * b;
      case Reduction::kMax:
        return b > a ? b : a;
      case Reduction::kMin:
        return b < a ? b : a;
      default:
        return b;
    }
  }
}

// out = data; then, in order, out[p with p[axis] = indices[p]] = reduce(that, updates[p]).
absl::Status ScatterElementsKernel(KernelContext& ctx) {
  const Tensor& data = ctx.input(0);
  const Tensor& indices = ctx.input(1);
  const Tensor& updates = ctx.input(2);
  const std::string name = ctx.GetString("reduction");
  Reduction reduction;
  if (name == "none") {
    reduction = Reduction::kNone;
  } else if (name == "add") {
    reduction = Reduction::kAdd;
  } else if (name == "mul") {
    reduction = Reduction::kMul;
  } else if (name == "max") {
    reduction = Reduction::kMax;
  } else if (name == "min") {
    reduction = Reduction::kMin;
  } else {
    return ctx.Error(absl::StrCat("unknown reduction '", name, "' (known: none, add, mul, max, min)"));
  }
  TSR_ASSIGN_OR_RETURN(const int axis, ElementsAxis(ctx));
  if (updates.shape() != indices.shape() || updates.dtype() != data.dtype()) {
    return ctx.Error(absl::StrCat("input 'updates' is ", DTypeName(updates.dtype()), updates.shape().ToString(),
                                  " but must be ", DTypeName(data.dtype()), indices.shape().ToString(),
                                  " (the dtype of 'data', the shape of 'indices')"));
  }
  TSR_RETURN_IF_ERROR(CheckOutputShape(ctx, data.dtype(), data.shape()));
  TSR_ASSIGN_OR_RETURN(std::vector<int64_t> idx, WrappedIndices(ctx, indices, axis, data.shape().dim(axis)));
  Tensor& out = ctx.output(0);
  if (data.num_bytes() > 0) std::memcpy(out.raw_data(), data.raw_data(), data.num_bytes());
  const std::vector<int64_t> strides = Strides(data.shape());
  std::vector<int64_t> scratch(data.shape().rank());
  VisitDType(data.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* dst = static_cast<T*>(out.raw_data());
    const T* upd = static_cast<const T*>(updates.raw_data());
    for (int64_t p = 0; p < static_cast<int64_t>(idx.size()); ++p) {
      const int64_t offset = ElementOffset(p, indices.shape(), strides, axis, idx[p], scratch);
      dst[offset] = Combine<T>(dst[offset], upd[p], reduction);
    }
  });
  return absl::OkStatus();
}

// Index value `i` of a OneHot indices tensor, truncated toward zero; `fallback` (an
// all-off index) when a float value is not finite or beyond any depth.
int64_t OneHotIndex(const Tensor& indices, int64_t i, int64_t fallback) {
  if (!IsFloating(indices.dtype())) return indices.GetAsInt64(i);
  const double v = indices.GetAsDouble(i);
  if (!(std::abs(v) <= static_cast<double>(kMaxElements) * 2)) return fallback;
  return static_cast<int64_t>(v);
}

// out[outer, k, inner] = values[1] if indices[outer, inner] (wrapped by depth) == k,
// else values[0].
absl::Status OneHotKernel(KernelContext& ctx) {
  const Tensor& indices = ctx.input(0);
  const Tensor& depth_tensor = ctx.input(1);
  const Tensor& values = ctx.input(2);
  if (depth_tensor.num_elements() != 1) {
    return ctx.Error(absl::StrCat("input 'depth' must hold one value but has shape ", depth_tensor.shape().ToString()));
  }
  const double depth_double = depth_tensor.GetAsDouble(0);
  if (!(depth_double >= 1 && depth_double < static_cast<double>(kMaxElements) + 1)) {
    return ctx.Error(absl::StrCat("depth is ", depth_double, " but must be in [1, 2^40]"));
  }
  const int64_t depth = static_cast<int64_t>(depth_double);
  if (values.num_elements() != 2) {
    return ctx.Error(
        absl::StrCat("input 'values' must hold [off_value, on_value] but has shape ", values.shape().ToString()));
  }
  const int rank = indices.shape().rank();
  absl::StatusOr<int> axis = NormalizeAxis(ctx.GetInt("axis"), rank + 1);
  if (!axis.ok()) return ctx.Error(axis.status().message());
  std::vector<int64_t> dims = indices.shape().dims();
  dims.insert(dims.begin() + *axis, depth);
  TSR_RETURN_IF_ERROR(CheckOutputShape(ctx, values.dtype(), Shape(std::move(dims))));
  int64_t outer = 1;
  int64_t inner = 1;
  for (int i = 0; i < rank; ++i) (i < *axis ? outer : inner) *= indices.shape().dim(i);
  const size_t esize = DTypeSize(values.dtype());
  const char* off = static_cast<const char*>(values.raw_data());
  const char* on = off + esize;
  char* dst = static_cast<char*>(ctx.output(0).raw_data());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      int64_t hot = OneHotIndex(indices, o * inner + i, depth);
      if (hot < 0) hot += depth;  // ONNX: -depth..-1 count from the end.
      for (int64_t k = 0; k < depth; ++k) {
        std::memcpy(dst + ((o * depth + k) * inner + i) * esize, k == hot ? on : off, esize);
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterReferenceIndexingKernels(KernelRegistry& registry) {
  TSR_RETURN_IF_ERROR(registry.Register("Gather", kReferenceDevice, kAllDTypes, GatherKernel));
  TSR_RETURN_IF_ERROR(registry.Register("GatherElements", kReferenceDevice, kAllDTypes, GatherElementsKernel));
  TSR_RETURN_IF_ERROR(registry.Register("ScatterElements", kReferenceDevice, kAllDTypes, ScatterElementsKernel));
  // The kernel key of OneHot is the dtype of its indices; the values may be of any dtype.
  TSR_RETURN_IF_ERROR(registry.Register("OneHot", kReferenceDevice, kNumericDTypes, OneHotKernel));
  return absl::OkStatus();
}

}  // namespace tsr

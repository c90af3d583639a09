// Reference kernels of the indexing ops: Gather, GatherElements, ScatterElements,
// OneHot, GatherND, ScatterND, Compress, NonZero (semantics of
// graph/ops/indexing_ops.cc, ONNX latest opset).
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

// Reduction named by the 'reduction' attribute.
absl::StatusOr<Reduction> ReductionAttr(const KernelContext& ctx) {
  const std::string name = ctx.GetString("reduction");
  if (name == "none") return Reduction::kNone;
  if (name == "add") return Reduction::kAdd;
  if (name == "mul") return Reduction::kMul;
  if (name == "max") return Reduction::kMax;
  if (name == "min") return Reduction::kMin;
  return ctx.Error(absl::StrCat("unknown reduction '", name, "' (known: none, add, mul, max, min)"));
}

// The geometry GatherND and ScatterND share: `batch` leading dims common to data and
// indices, `tuples` index tuples of length `k` per batch entry, each addressing a
// slice of `slice` contiguous elements of data.
struct NDGeometry {
  int64_t batch = 1;
  int64_t tuples = 1;
  int64_t k = 0;
  int64_t slice = 1;
  int64_t data_batch_stride = 0;  // elements of data per batch entry
};

absl::StatusOr<NDGeometry> NDGeometryOf(const KernelContext& ctx, const Shape& data, const Shape& indices,
                                        int64_t batch_dims) {
  if (indices.rank() < 1 || batch_dims < 0 || batch_dims >= std::min(data.rank(), indices.rank())) {
    return ctx.Error(absl::StrCat("'data' ", data.ToString(), ", 'indices' ", indices.ToString(), " and batch_dims ",
                                  batch_dims, " do not fit: need 0 <= batch_dims < both ranks"));
  }
  NDGeometry g;
  g.k = indices.dim(indices.rank() - 1);
  if (g.k < 1 || g.k > data.rank() - batch_dims) {
    return ctx.Error(absl::StrCat("the index length ", g.k, " (last dim of 'indices' ", indices.ToString(),
                                  ") must be in [1, ", data.rank() - batch_dims, "]"));
  }
  for (int i = 0; i < batch_dims; ++i) {
    if (data.dim(i) != indices.dim(i)) {
      return ctx.Error(absl::StrCat("the first ", batch_dims, " dims of 'data' ", data.ToString(), " and 'indices' ",
                                    indices.ToString(), " must match"));
    }
    g.batch *= data.dim(i);
  }
  for (int i = static_cast<int>(batch_dims); i + 1 < indices.rank(); ++i) g.tuples *= indices.dim(i);
  for (int i = static_cast<int>(batch_dims + g.k); i < data.rank(); ++i) g.slice *= data.dim(i);
  g.data_batch_stride = g.slice;
  for (int i = static_cast<int>(batch_dims); i < batch_dims + g.k; ++i) g.data_batch_stride *= data.dim(i);
  return g;
}

// The element offset (within one batch entry of data) of the slice that index tuple
// `t` addresses; each component is wrapped if negative and checked.
absl::StatusOr<int64_t> SliceOffset(const KernelContext& ctx, const Shape& data, const Tensor& indices,
                                    int64_t batch_dims, const NDGeometry& g, int64_t t) {
  int64_t offset = 0;
  for (int64_t j = 0; j < g.k; ++j) {
    const int axis = static_cast<int>(batch_dims + j);
    const int64_t size = data.dim(axis);
    int64_t v = indices.GetAsInt64(t * g.k + j);
    if (v < -size || v >= size) {
      return ctx.Error(absl::StrCat("index ", v, " (component ", j, " of index tuple ", t, " of 'indices' ",
                                    indices.shape().ToString(), ") is out of range for axis ", axis, " of size ", size,
                                    "; expected [", -size, ", ", size, ")"));
    }
    if (v < 0) v += size;
    offset = offset * size + v;
  }
  return offset * g.slice;
}

absl::Status GatherNDKernel(KernelContext& ctx) {
  const Tensor& data = ctx.input(0);
  const Tensor& indices = ctx.input(1);
  const int64_t batch_dims = ctx.GetInt("batch_dims");
  TSR_ASSIGN_OR_RETURN(const NDGeometry g, NDGeometryOf(ctx, data.shape(), indices.shape(), batch_dims));
  Shape expected;
  for (int i = 0; i + 1 < indices.shape().rank(); ++i) expected.AddDim(indices.shape().dim(i));
  for (int i = static_cast<int>(batch_dims + g.k); i < data.shape().rank(); ++i) expected.AddDim(data.shape().dim(i));
  TSR_RETURN_IF_ERROR(CheckOutputShape(ctx, data.dtype(), expected));
  const size_t esize = DTypeSize(data.dtype());
  const char* src = static_cast<const char*>(data.raw_data());
  char* dst = static_cast<char*>(ctx.output(0).raw_data());
  const int64_t slice_bytes = g.slice * static_cast<int64_t>(esize);
  for (int64_t b = 0; b < g.batch; ++b) {
    for (int64_t t = 0; t < g.tuples; ++t) {
      TSR_ASSIGN_OR_RETURN(const int64_t offset,
                           SliceOffset(ctx, data.shape(), indices, batch_dims, g, b * g.tuples + t));
      if (slice_bytes == 0) continue;
      std::memcpy(dst + (b * g.tuples + t) * slice_bytes, src + (b * g.data_batch_stride + offset) * esize,
                  slice_bytes);
    }
  }
  return absl::OkStatus();
}

// out = data; then, tuple by tuple in order, the addressed slice is combined with the
// tuple's updates (duplicates accumulate with add/mul/max/min; with none the last wins).
absl::Status ScatterNDKernel(KernelContext& ctx) {
  const Tensor& data = ctx.input(0);
  const Tensor& indices = ctx.input(1);
  const Tensor& updates = ctx.input(2);
  TSR_ASSIGN_OR_RETURN(const Reduction reduction, ReductionAttr(ctx));
  TSR_ASSIGN_OR_RETURN(const NDGeometry g, NDGeometryOf(ctx, data.shape(), indices.shape(), 0));
  Shape expected;
  for (int i = 0; i + 1 < indices.shape().rank(); ++i) expected.AddDim(indices.shape().dim(i));
  for (int i = static_cast<int>(g.k); i < data.shape().rank(); ++i) expected.AddDim(data.shape().dim(i));
  if (updates.shape() != expected || updates.dtype() != data.dtype()) {
    return ctx.Error(absl::StrCat("input 'updates' is ", updates.type().ToString(), " but must be ",
                                  DTypeName(data.dtype()), expected.ToString()));
  }
  TSR_RETURN_IF_ERROR(CheckOutputShape(ctx, data.dtype(), data.shape()));
  Tensor& out = ctx.output(0);
  if (data.num_bytes() > 0) std::memcpy(out.raw_data(), data.raw_data(), data.num_bytes());
  absl::Status status;
  VisitDType(data.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* dst = static_cast<T*>(out.raw_data());
    const T* upd = static_cast<const T*>(updates.raw_data());
    for (int64_t t = 0; t < g.tuples && status.ok(); ++t) {
      absl::StatusOr<int64_t> offset = SliceOffset(ctx, data.shape(), indices, 0, g, t);
      if (!offset.ok()) {
        status = offset.status();
        break;
      }
      for (int64_t e = 0; e < g.slice; ++e) {
        dst[*offset + e] = Combine<T>(dst[*offset + e], upd[t * g.slice + e], reduction);
      }
    }
  });
  return status;
}

// Keeps the slices along the axis (or the flattened elements) whose condition is true.
absl::Status CompressKernel(KernelContext& ctx) {
  const Tensor& in = ctx.input(0);
  const Tensor& condition = ctx.input(1);
  const Shape& s = in.shape();
  int64_t outer = 1, length = in.num_elements(), inner = 1;
  int axis = -1;
  if (ctx.has_attr("axis")) {
    absl::StatusOr<int> a = NormalizeAxis(ctx.GetInt("axis"), s.rank());
    if (!a.ok()) return ctx.Error(a.status().message());
    axis = *a;
    length = s.dim(axis);
    for (int i = 0; i < s.rank(); ++i) {
      if (i < axis) outer *= s.dim(i);
      if (i > axis) inner *= s.dim(i);
    }
  }
  if (condition.shape().rank() != 1 || condition.num_elements() > length) {
    return ctx.Error(absl::StrCat("input 'condition' has shape ", condition.shape().ToString(),
                                  " but must be 1-D with at most ", length, " values"));
  }
  std::vector<int64_t> kept;
  for (int64_t i = 0; i < condition.num_elements(); ++i) {
    if (condition.GetAsInt64(i) != 0) kept.push_back(i);
  }
  Shape expected = axis < 0 ? Shape{static_cast<int64_t>(kept.size())} : s;
  if (axis >= 0) expected.set_dim(axis, static_cast<int64_t>(kept.size()));
  TSR_RETURN_IF_ERROR(CheckOutputShape(ctx, in.dtype(), expected));
  const int64_t row_bytes = inner * static_cast<int64_t>(DTypeSize(in.dtype()));
  const char* src = static_cast<const char*>(in.raw_data());
  char* dst = static_cast<char*>(ctx.output(0).raw_data());
  if (row_bytes == 0) return absl::OkStatus();
  const int64_t n = static_cast<int64_t>(kept.size());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < n; ++j) {
      std::memcpy(dst + (o * n + j) * row_bytes, src + (o * length + kept[j]) * row_bytes, row_bytes);
    }
  }
  return absl::OkStatus();
}

// out[a, j] = coordinate a of the j-th nonzero element in row-major order.
absl::Status NonZeroKernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Shape& s = x.shape();
  if (s.rank() == 0) return ctx.Error("input 'X' is a scalar; rank >= 1 is required");
  std::vector<int64_t> flat;
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    if (x.GetAsDouble(i) != 0) flat.push_back(i);
  }
  const int64_t n = static_cast<int64_t>(flat.size());
  Tensor& out = ctx.output(0);
  if (out.dtype() != DType::kI64 || out.shape() != Shape{s.rank(), n}) {
    return ctx.Error(absl::StrCat("output was allocated as ", out.type().ToString(), " but the input has ", n,
                                  " nonzero elements: i64[", s.rank(), ",", n, "] is required"));
  }
  int64_t* dst = out.data<int64_t>();
  std::vector<int64_t> index(s.rank());
  for (int64_t j = 0; j < n; ++j) {
    Unravel(flat[j], s, index);
    for (int a = 0; a < s.rank(); ++a) dst[a * n + j] = index[a];
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterReferenceIndexingKernels(KernelRegistry& registry) {
  TSR_RETURN_IF_ERROR(registry.Register("Gather", kReferenceDevice, kAllDTypes, GatherKernel));
  TSR_RETURN_IF_ERROR(registry.Register("GatherElements", kReferenceDevice, kAllDTypes, GatherElementsKernel));
  TSR_RETURN_IF_ERROR(registry.Register("ScatterElements", kReferenceDevice, kAllDTypes, ScatterElementsKernel));
  TSR_RETURN_IF_ERROR(registry.Register("GatherND", kReferenceDevice, kAllDTypes, GatherNDKernel));
  TSR_RETURN_IF_ERROR(registry.Register("ScatterND", kReferenceDevice, kAllDTypes, ScatterNDKernel));
  TSR_RETURN_IF_ERROR(registry.Register("Compress", kReferenceDevice, kAllDTypes, CompressKernel));
  TSR_RETURN_IF_ERROR(registry.Register("NonZero", kReferenceDevice, kAllDTypes, NonZeroKernel));
  // The kernel key of OneHot is the dtype of its indices; the values may be of any dtype.
  TSR_RETURN_IF_ERROR(registry.Register("OneHot", kReferenceDevice, kNumericDTypes, OneHotKernel));
  return absl::OkStatus();
}

}  // namespace tsr

// CPU kernels of the indexing ops for every dtype: Gather (a row copy per index:
// memcpy for rows of several elements, typed element copies otherwise, so an
// embedding lookup is one memcpy per token), GatherElements, ScatterElements and OneHot
// (integer indices).
//
// Index values are checked against [-size, size) before anything is written; an
// out-of-range index, like any input these kernels do not accept, is handed to the
// reference kernel (RunReferenceKernel), which returns its own error Status.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "graph/dtype.h"
#include "graph/float16.h"
#include "graph/shape.h"
#include "graph/status_macros.h"
#include "graph/tensor.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/layout_copy.h"
#include "kernels/cpu/reference_fallback.h"
#include "kernels/kernel.h"

namespace tsr {

namespace {

// Calls fn(I{}) with the index type of `indices`: int32_t or int64_t.
template <typename Fn>
void VisitIndexType(DType dtype, Fn&& fn) {
  if (dtype == DType::kI32) {
    fn(int32_t{});
  } else {
    fn(int64_t{});
  }
}

// Calls fn(U{}) with an unsigned type of `esize` bytes: what a pure copy moves.
template <typename Fn>
void VisitElementBits(size_t esize, Fn&& fn) {
  switch (esize) {
    case 1:
      fn(uint8_t{});
      break;
    case 2:
      fn(uint16_t{});
      break;
    case 4:
      fn(uint32_t{});
      break;
    default:
      fn(uint64_t{});
      break;
  }
}

// True when every index is in [-size, size).
bool IndicesInRange(const Tensor& indices, int64_t size) {
  bool ok = true;
  VisitIndexType(indices.dtype(), [&](auto tag) {
    using I = decltype(tag);
    const I* v = static_cast<const I*>(indices.raw_data());
    const int64_t n = indices.num_elements();
    bool bad = false;
    for (int64_t j = 0; j < n; ++j) bad |= (static_cast<int64_t>(v[j]) < -size) | (static_cast<int64_t>(v[j]) >= size);
    ok = !bad;
  });
  return ok;
}

template <typename I>
inline int64_t Wrap(I v, int64_t size) {
  const int64_t x = static_cast<int64_t>(v);
  return x < 0 ? x + size : x;
}

bool IsIndexDType(DType dtype) { return dtype == DType::kI32 || dtype == DType::kI64; }

// out[o, j, inner] = data[o, indices[j], inner].
absl::Status GatherKernel(KernelContext& ctx) {
  const Tensor& data = ctx.input(0);
  const Tensor& indices = ctx.input(1);
  if (data.shape().rank() == 0 || !IsIndexDType(indices.dtype())) return RunReferenceKernel(ctx);
  absl::StatusOr<int> axis = NormalizeAxis(ctx.GetInt("axis"), data.shape().rank());
  if (!axis.ok()) return RunReferenceKernel(ctx);
  const size_t esize = DTypeSize(data.dtype());
  const int64_t size = data.shape().dim(*axis);
  Shape expected;
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < *axis; ++i) {
    expected.AddDim(data.shape().dim(i));
    outer *= data.shape().dim(i);
  }
  for (int64_t d : indices.shape().dims()) expected.AddDim(d);
  for (int i = *axis + 1; i < data.shape().rank(); ++i) {
    expected.AddDim(data.shape().dim(i));
    inner *= data.shape().dim(i);
  }
  Tensor& out = ctx.output(0);
  if (out.shape() != expected || out.dtype() != data.dtype() || !IndicesInRange(indices, size)) {
    return RunReferenceKernel(ctx);
  }
  const int64_t n = indices.num_elements();
  const int64_t rows = outer * n;
  if (rows == 0 || inner == 0) return absl::OkStatus();
  const char* src = static_cast<const char*>(data.raw_data());
  char* dst = static_cast<char*>(out.raw_data());
  VisitIndexType(indices.dtype(), [&](auto itag) {
    using I = decltype(itag);
    const I* idx = static_cast<const I*>(indices.raw_data());
    if (inner == 1) {
      // One element per index: a typed gather.
      VisitElementBits(esize, [&](auto etag) {
        using U = decltype(etag);
        const U* s = reinterpret_cast<const U*>(src);
        U* d = reinterpret_cast<U*>(dst);
        ctx.ParallelFor(outer, n * 2 + 8, [&](int64_t begin, int64_t end) {
          for (int64_t o = begin; o < end; ++o) {
            const U* row = s + o * size;
            U* out_row = d + o * n;
            for (int64_t j = 0; j < n; ++j) out_row[j] = row[Wrap(idx[j], size)];
          }
        });
      });
      return;
    }
    const int64_t row_bytes = inner * static_cast<int64_t>(esize);
    auto source_row = [&](int64_t r) { return src + ((r / n) * size + Wrap(idx[r % n], size)) * row_bytes; };
    ctx.ParallelFor(rows, row_bytes / 4 + 8, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        // The rows are scattered over the table (an embedding lookup reads random
        // rows from DRAM): start loading the next row while this one is copied.
        if (r + 1 < end) {
          const char* next = source_row(r + 1);
          for (int64_t b = 0; b < std::min<int64_t>(row_bytes, 4096); b += 64) __builtin_prefetch(next + b);
        }
        std::memcpy(dst + r * row_bytes, source_row(r), static_cast<size_t>(row_bytes));
      }
    });
  });
  return absl::OkStatus();
}

// The geometry GatherElements and ScatterElements share: positions of 'indices' as
// [outer (dims before axis), k (the axis), inner (dims after it)], with the data
// offset of each outer and each inner coordinate (indices dims may be smaller than
// the data's off the axis, so these are tables rather than strides).
struct ElementsGeometry {
  int axis = 0;
  int64_t size = 0;         // data.dim(axis)
  int64_t axis_stride = 0;  // data stride of the axis
  int64_t k = 0;            // indices.dim(axis)
  std::vector<int64_t> outer_offset, inner_offset;
};

// False (decline) unless the shapes are what the reference accepts.
bool MakeElementsGeometry(const KernelContext& ctx, ElementsGeometry& g) {
  const Shape& data = ctx.input(0).shape();
  const Shape& indices = ctx.input(1).shape();
  if (data.rank() == 0 || indices.rank() != data.rank() || !IsIndexDType(ctx.input(1).dtype())) return false;
  absl::StatusOr<int> axis = NormalizeAxis(ctx.GetInt("axis"), data.rank());
  if (!axis.ok()) return false;
  g.axis = *axis;
  for (int i = 0; i < data.rank(); ++i) {
    if (i != g.axis && indices.dim(i) > data.dim(i)) return false;
  }
  const std::vector<int64_t> strides = RowMajorStrides(data.dims());
  g.size = data.dim(g.axis);
  g.axis_stride = strides[g.axis];
  g.k = indices.dim(g.axis);
  // Offsets of the coordinates of dims [from, to) of `indices`, row-major.
  auto offsets = [&](int from, int to) {
    std::vector<int64_t> table(1, 0);
    for (int a = from; a < to; ++a) {
      std::vector<int64_t> next;
      next.reserve(table.size() * static_cast<size_t>(indices.dim(a)));
      for (int64_t base : table) {
        for (int64_t i = 0; i < indices.dim(a); ++i) next.push_back(base + i * strides[a]);
      }
      table = std::move(next);
    }
    return table;
  };
  g.outer_offset = offsets(0, g.axis);
  g.inner_offset = offsets(g.axis + 1, data.rank());
  return true;
}

// out[o, j, i] = data[outer_offset[o] + indices[o, j, i] * axis_stride + inner_offset[i]].
absl::Status GatherElementsKernel(KernelContext& ctx) {
  const Tensor& data = ctx.input(0);
  const Tensor& indices = ctx.input(1);
  ElementsGeometry g;
  Tensor& out = ctx.output(0);
  if (!MakeElementsGeometry(ctx, g) || out.shape() != indices.shape() || out.dtype() != data.dtype() ||
      !IndicesInRange(indices, g.size)) {
    return RunReferenceKernel(ctx);
  }
  const int64_t inner = static_cast<int64_t>(g.inner_offset.size());
  const int64_t rows = static_cast<int64_t>(g.outer_offset.size()) * g.k;
  if (rows == 0 || inner == 0) return absl::OkStatus();
  VisitIndexType(indices.dtype(), [&](auto itag) {
    using I = decltype(itag);
    VisitElementBits(DTypeSize(data.dtype()), [&](auto etag) {
      using U = decltype(etag);
      const I* idx = static_cast<const I*>(indices.raw_data());
      const U* src = static_cast<const U*>(data.raw_data());
      U* dst = static_cast<U*>(out.raw_data());
      ctx.ParallelFor(rows, inner * 3 + 8, [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          const U* s = src + g.outer_offset[r / g.k];
          const I* ir = idx + r * inner;
          U* d = dst + r * inner;
          for (int64_t i = 0; i < inner; ++i) d[i] = s[Wrap(ir[i], g.size) * g.axis_stride + g.inner_offset[i]];
        }
      });
    });
  });
  return absl::OkStatus();
}

enum class Reduction { kNone, kAdd, kMul, kMax, kMin };

// `a` combined with the update `b`, exactly as the reference does: bool add/max are
// or, mul/min are and; integers wrap around; 16-bit floats compute in float; float
// max/min keep `a` unless `b` compares greater/less (so a NaN in `a` stays).
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

bool ParseReduction(const std::string& name, Reduction& r) {
  if (name == "none") {
    r = Reduction::kNone;
  } else if (name == "add") {
    r = Reduction::kAdd;
  } else if (name == "mul") {
    r = Reduction::kMul;
  } else if (name == "max") {
    r = Reduction::kMax;
  } else if (name == "min") {
    r = Reduction::kMin;
  } else {
    return false;
  }
  return true;
}

// out = data, then the updates in index order. Two positions with different (outer,
// inner) coordinates never write the same element, so the work splits over those
// lanes; within a lane the updates keep their order along the axis, which is what
// makes duplicate indices (last write wins, or the reduction's order) come out as in
// the reference.
absl::Status ScatterElementsKernel(KernelContext& ctx) {
  const Tensor& data = ctx.input(0);
  const Tensor& indices = ctx.input(1);
  const Tensor& updates = ctx.input(2);
  Tensor& out = ctx.output(0);
  Reduction reduction;
  ElementsGeometry g;
  if (!ParseReduction(ctx.GetString("reduction"), reduction) || !MakeElementsGeometry(ctx, g) ||
      updates.shape() != indices.shape() || updates.dtype() != data.dtype() || out.shape() != data.shape() ||
      out.dtype() != data.dtype() || !IndicesInRange(indices, g.size)) {
    return RunReferenceKernel(ctx);
  }
  const int64_t total_bytes = static_cast<int64_t>(data.num_bytes());
  if (total_bytes > 0 && out.raw_data() != data.raw_data()) {
    constexpr int64_t kChunk = 64 * 1024;
    const char* s = static_cast<const char*>(data.raw_data());
    char* d = static_cast<char*>(out.raw_data());
    ctx.ParallelFor((total_bytes + kChunk - 1) / kChunk, kChunk / 4, [&](int64_t begin, int64_t end) {
      const int64_t lo = begin * kChunk, hi = std::min(total_bytes, end * kChunk);
      std::memcpy(d + lo, s + lo, static_cast<size_t>(hi - lo));
    });
  }
  const int64_t inner = static_cast<int64_t>(g.inner_offset.size());
  const int64_t outer = static_cast<int64_t>(g.outer_offset.size());
  if (outer * g.k * inner == 0) return absl::OkStatus();
  // Lanes in blocks of kLanes inner coordinates: items are (outer, inner block).
  constexpr int64_t kLanes = 256;
  const int64_t blocks = (inner + kLanes - 1) / kLanes;
  VisitIndexType(indices.dtype(), [&](auto itag) {
    using I = decltype(itag);
    VisitDType(data.dtype(), [&](auto ttag) {
      using T = decltype(ttag);
      const I* idx = static_cast<const I*>(indices.raw_data());
      const T* upd = static_cast<const T*>(updates.raw_data());
      T* dst = static_cast<T*>(out.raw_data());
      ctx.ParallelFor(outer * blocks, std::min(inner, kLanes) * g.k * 4 + 8, [&](int64_t begin, int64_t end) {
        for (int64_t item = begin; item < end; ++item) {
          const int64_t o = item / blocks, i0 = (item % blocks) * kLanes, i1 = std::min(inner, i0 + kLanes);
          T* base = dst + g.outer_offset[o];
          for (int64_t j = 0; j < g.k; ++j) {
            const int64_t p = (o * g.k + j) * inner;
            for (int64_t i = i0; i < i1; ++i) {
              T& target = base[Wrap(idx[p + i], g.size) * g.axis_stride + g.inner_offset[i]];
              target = reduction == Reduction::kNone ? upd[p + i] : Combine<T>(target, upd[p + i], reduction);
            }
          }
        }
      });
    });
  });
  return absl::OkStatus();
}

// OneHot with integer indices: the output filled with off_value, then on_value written
// at each index's position (an index in [-depth, 0) counts from the end; one outside
// [-depth, depth) leaves its row all off) -- the reference kernel's result, without its
// element-by-element copies. Float indices and every input the reference rejects go to
// the reference.
absl::Status OneHotKernel(KernelContext& ctx) {
  const Tensor& indices = ctx.input(0);
  const Tensor& depth_tensor = ctx.input(1);
  const Tensor& values = ctx.input(2);
  if (!IsIndexDType(indices.dtype()) || depth_tensor.num_elements() != 1 || values.num_elements() != 2) {
    return RunReferenceKernel(ctx);
  }
  const double depth_value = depth_tensor.GetAsDouble(0);
  if (!(depth_value >= 1 && depth_value < static_cast<double>(kMaxElements) + 1)) return RunReferenceKernel(ctx);
  const int64_t depth = static_cast<int64_t>(depth_value);
  const int rank = indices.shape().rank();
  absl::StatusOr<int> axis = NormalizeAxis(ctx.GetInt("axis"), rank + 1);
  Tensor& out = ctx.output(0);
  if (!axis.ok() || out.dtype() != values.dtype() || out.num_elements() != indices.num_elements() * depth) {
    return RunReferenceKernel(ctx);
  }
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < rank; ++i) (i < *axis ? outer : inner) *= indices.shape().dim(i);
  VisitElementBits(DTypeSize(values.dtype()), [&](auto bits) {
    using U = decltype(bits);
    const U* value = static_cast<const U*>(values.raw_data());
    U* dst = static_cast<U*>(out.raw_data());
    std::fill(dst, dst + out.num_elements(), value[0]);
    VisitIndexType(indices.dtype(), [&](auto index) {
      using I = decltype(index);
      const I* idx = indices.data<I>();
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t i = 0; i < inner; ++i) {
          int64_t hot = static_cast<int64_t>(idx[o * inner + i]);
          if (hot < 0) hot += depth;
          if (hot >= 0 && hot < depth) dst[(o * depth + hot) * inner + i] = value[1];
        }
      }
    });
  });
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterCpuIndexingKernels(KernelRegistry& registry) {
  TSR_RETURN_IF_ERROR(registry.Register("Gather", kCpuDevice, kAllDTypes, GatherKernel));
  TSR_RETURN_IF_ERROR(registry.Register("GatherElements", kCpuDevice, kAllDTypes, GatherElementsKernel));
  TSR_RETURN_IF_ERROR(registry.Register("ScatterElements", kCpuDevice, kAllDTypes, ScatterElementsKernel));
  // Keyed, as the reference's, by the dtype of the indices; the values may be of any dtype.
  TSR_RETURN_IF_ERROR(registry.Register("OneHot", kCpuDevice, {DType::kI32, DType::kI64}, OneHotKernel));
  return absl::OkStatus();
}

}  // namespace tsr

// Typed loops behind ReduceElementwise and DivideForMean. They are written in blocks of
// a fixed width over non-aliasing pointers so that the compiler vectorizes them at -O2
// (GCC's default cost model there only vectorizes loops whose trip count is known),
// with the in-place case (dst == a or dst == b) as its own loop.
#include "runtime/collectives/cross_process/elementwise_reduce.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/elementwise_loops.h"

namespace tsr {
namespace {

constexpr size_t kBlock = 16;

struct Add {
  template <typename T>
  T operator()(T x, T y) const {
    return x + y;
  }
};
struct Max {
  template <typename T>
  T operator()(T x, T y) const {
    return std::max(x, y);
  }
};
struct Min {
  template <typename T>
  T operator()(T x, T y) const {
    return std::min(x, y);
  }
};

// dst[i] = op(dst[i], src[i]), or with kDstRight op(src[i], dst[i]): max and min pick
// one of two NaNs (or of a NaN and a number) by position, so the operands keep theirs.
template <bool kDstRight, typename T, typename Op>
void CombineInPlace(T* __restrict dst, const T* __restrict src, size_t n, Op op) {
  size_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    for (size_t k = 0; k < kBlock; ++k)
      dst[i + k] = kDstRight ? op(src[i + k], dst[i + k]) : op(dst[i + k], src[i + k]);
  }
  for (; i < n; ++i) dst[i] = kDstRight ? op(src[i], dst[i]) : op(dst[i], src[i]);
}

// dst[i] = op(a[i], b[i]) for three distinct buffers.
template <typename T, typename Op>
void CombineInto(T* __restrict dst, const T* __restrict a, const T* __restrict b, size_t n, Op op) {
  size_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    for (size_t k = 0; k < kBlock; ++k) dst[i + k] = op(a[i + k], b[i + k]);
  }
  for (; i < n; ++i) dst[i] = op(a[i], b[i]);
}

template <typename T, typename Op>
void Combine(T* dst, const T* a, const T* b, size_t n, Op op) {
  if (dst == a) {
    CombineInPlace<false>(dst, b, n, op);
  } else if (dst == b) {
    CombineInPlace<true>(dst, a, n, op);
  } else {
    CombineInto(dst, a, b, n, op);
  }
}

template <typename T>
void CombineTyped(ReduceOp op, void* dst, const void* a, const void* b, size_t n) {
  T* d = static_cast<T*>(dst);
  const T* x = static_cast<const T*>(a);
  const T* y = static_cast<const T*>(b);
  switch (op) {
    case ReduceOp::kSum:
    case ReduceOp::kMean:
      return Combine(d, x, y, n, Add());
    case ReduceOp::kMax:
      return Combine(d, x, y, n, Max());
    case ReduceOp::kMin:
      return Combine(d, x, y, n, Min());
  }
}

template <typename T>
void Divide(void* data, size_t n, int world_size) {
  T* __restrict d = static_cast<T*>(data);
  const T divisor = static_cast<T>(world_size);
  size_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    for (size_t k = 0; k < kBlock; ++k) d[i + k] /= divisor;
  }
  for (; i < n; ++i) d[i] /= divisor;
}

}  // namespace

void ReduceElementwise(DType dtype, ReduceOp op, void* dst, const void* a, const void* b, size_t n) {
  switch (dtype) {
    case DType::kF32:
      if (op == ReduceOp::kSum || op == ReduceOp::kMean) {
        // The f32 sum, the common case (gradients), runs the elementwise Add kernel's
        // loop: AVX2 where the CPU has it, the same IEEE sums.
        static const BinaryRowFn add = ElementwiseLoopsFor(ActiveCpuIsa()).add;
        return add(static_cast<const float*>(a), 1, static_cast<const float*>(b), 1, static_cast<float*>(dst),
                   static_cast<int64_t>(n));
      }
      return CombineTyped<float>(op, dst, a, b, n);
    case DType::kF64:
      return CombineTyped<double>(op, dst, a, b, n);
    case DType::kI32:
      return CombineTyped<int32_t>(op, dst, a, b, n);
    case DType::kI64:
      return CombineTyped<int64_t>(op, dst, a, b, n);
    default:
      return;  // not reducible: refused before any data moves
  }
}

void ReduceInRankOrder(DType dtype, ReduceOp op, int world_size, int rank,
                       const std::function<const void*(int)>& others, void* inout, void* scratch, size_t n) {
  // The running result is always the left operand: rank 0's input, then (x0 op x1), ...
  // It builds up in inout when this rank is 0, or 1 (whose first step, x0 op x1, may
  // overwrite its own operand), else in scratch, copied at the end.
  void* acc = inout;
  int q = 1;
  if (rank == 1) {
    ReduceElementwise(dtype, op, inout, others(0), inout, n);
    q = 2;
  } else if (rank > 1) {
    acc = scratch;
    ReduceElementwise(dtype, op, acc, others(0), others(1), n);
    q = 2;
  }
  for (; q < world_size; ++q) ReduceElementwise(dtype, op, acc, acc, q == rank ? inout : others(q), n);
  if (acc != inout) std::memcpy(inout, acc, n * DTypeSize(dtype));
  if (op == ReduceOp::kMean) DivideForMean(dtype, inout, n, world_size);
}

void DivideForMean(DType dtype, void* data, size_t n, int world_size) {
  switch (dtype) {
    case DType::kF32:
      return Divide<float>(data, n, world_size);
    case DType::kF64:
      return Divide<double>(data, n, world_size);
    case DType::kI32:
      return Divide<int32_t>(data, n, world_size);
    case DType::kI64:
      return Divide<int64_t>(data, n, world_size);
    default:
      return;
  }
}

}  // namespace tsr

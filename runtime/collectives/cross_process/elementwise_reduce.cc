// Typed loops behind ReduceElementwise and DivideForMean (plain loops the compiler
// vectorizes).
#include "runtime/collectives/cross_process/elementwise_reduce.h"

#include <algorithm>
#include <cstdint>

namespace tsr {
namespace {

template <typename T>
void Combine(ReduceOp op, T* dst, const T* a, const T* b, size_t n) {
  switch (op) {
    case ReduceOp::kSum:
    case ReduceOp::kMean:
      for (size_t i = 0; i < n; ++i) dst[i] = a[i] + b[i];
      return;
    case ReduceOp::kMax:
      for (size_t i = 0; i < n; ++i) dst[i] = std::max(a[i], b[i]);
      return;
    case ReduceOp::kMin:
      for (size_t i = 0; i < n; ++i) dst[i] = std::min(a[i], b[i]);
      return;
  }
}

template <typename T>
void Divide(T* data, size_t n, int world_size) {
  const T divisor = static_cast<T>(world_size);
  for (size_t i = 0; i < n; ++i) data[i] /= divisor;
}

}  // namespace

void ReduceElementwise(DType dtype, ReduceOp op, void* dst, const void* a, const void* b, size_t n) {
  switch (dtype) {
    case DType::kF32:
      return Combine(op, static_cast<float*>(dst), static_cast<const float*>(a), static_cast<const float*>(b), n);
    case DType::kF64:
      return Combine(op, static_cast<double*>(dst), static_cast<const double*>(a), static_cast<const double*>(b), n);
    case DType::kI32:
      return Combine(op, static_cast<int32_t*>(dst), static_cast<const int32_t*>(a), static_cast<const int32_t*>(b), n);
    case DType::kI64:
      return Combine(op, static_cast<int64_t*>(dst), static_cast<const int64_t*>(a), static_cast<const int64_t*>(b), n);
    default:
      return;  // not reducible: refused before any data moves
  }
}

void DivideForMean(DType dtype, void* data, size_t n, int world_size) {
  switch (dtype) {
    case DType::kF32:
      return Divide(static_cast<float*>(data), n, world_size);
    case DType::kF64:
      return Divide(static_cast<double*>(data), n, world_size);
    case DType::kI32:
      return Divide(static_cast<int32_t*>(data), n, world_size);
    case DType::kI64:
      return Divide(static_cast<int64_t*>(data), n, world_size);
    default:
      return;
  }
}

}  // namespace tsr

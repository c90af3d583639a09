// Allocator: aligned buffers with usage counters.
#include "runtime/allocator.h"

#include <cstdlib>
#include <cstring>
#include <new>

#include "absl/strings/str_cat.h"

namespace tsr {

Allocator::Allocator() : counters_(std::make_shared<Counters>()) {}

absl::StatusOr<Tensor> Allocator::Allocate(DType dtype, const Shape& shape) {
  if (!IsValidDType(dtype)) return absl::InvalidArgumentError("cannot allocate a tensor of invalid dtype");
  if (!shape.is_static()) {
    return absl::InvalidArgumentError(absl::StrCat("cannot allocate shape ", shape.ToString(), ": it is not static"));
  }
  absl::StatusOr<int64_t> elements = shape.NumElements();
  if (!elements.ok()) return elements.status();
  const int64_t bytes = *elements * static_cast<int64_t>(DTypeSize(dtype));
  // aligned_alloc needs a size that is a multiple of the alignment (and non-zero).
  const size_t rounded = (static_cast<size_t>(bytes) + kTensorAlignment - 1) / kTensorAlignment * kTensorAlignment;
  void* data = std::aligned_alloc(kTensorAlignment, rounded == 0 ? kTensorAlignment : rounded);
  if (data == nullptr) {
    return absl::ResourceExhaustedError(
        absl::StrCat("out of memory allocating ", bytes, " bytes for ", DTypeName(dtype), shape.ToString()));
  }
  if (bytes > 0) std::memset(data, 0, static_cast<size_t>(bytes));
  Counters& c = *counters_;
  const int64_t now = c.in_use.fetch_add(bytes) + bytes;
  int64_t peak = c.peak.load();
  while (now > peak && !c.peak.compare_exchange_weak(peak, now)) {
  }
  c.count.fetch_add(1);
  c.total.fetch_add(bytes);
  std::shared_ptr<void> owner(data, [counters = counters_, bytes](void* p) {
    std::free(p);
    counters->in_use.fetch_sub(bytes);
  });
  return Tensor::Wrap(dtype, shape, std::move(owner), data);
}

AllocatorStats Allocator::stats() const {
  AllocatorStats s;
  s.bytes_in_use = counters_->in_use.load();
  s.peak_bytes = counters_->peak.load();
  s.num_allocations = counters_->count.load();
  s.bytes_allocated = counters_->total.load();
  return s;
}

void Allocator::ResetPeak() { counters_->peak.store(counters_->in_use.load()); }

}  // namespace tsr
